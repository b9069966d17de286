package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/cloudsim"
)

// mediumTree is the topology.conf Topograph writes for its medium model
// with the tree plugin: the switch lines, whatever the order.
var mediumTree = []string{
	"SwitchName=sw3 Switches=sw[21-22]",
	"SwitchName=sw21 Switches=sw[11-12]",
	"SwitchName=sw22 Switches=sw[13-14]",
	"SwitchName=sw11 Nodes=n11-[1-2]",
	"SwitchName=sw12 Nodes=n12-[1-2]",
	"SwitchName=sw13 Nodes=n13-[1-2]",
	"SwitchName=sw14 Nodes=n14-[1-2]",
}

// mediumBlocks are its topology/block lines with blockSizes [2,4].
var mediumBlocks = []string{
	"BlockName=nvl1 Nodes=n11-[1-2]",
	"BlockName=nvl2 Nodes=n12-[1-2]",
	"BlockName=nvl3 Nodes=n13-[1-2]",
	"BlockName=nvl4 Nodes=n14-[1-2]",
	"BlockSizes=2,4",
}

// mediumLabels are the node labels of Topograph's k8s engine (v1.0
// keys) for two nodes of the medium model.
var mediumLabels = []string{
	"fabric.topograph.run/tier-0: sw11", "fabric.topograph.run/tier-1: sw21", "fabric.topograph.run/tier-2: sw3",
	"accelerator.topograph.run/domain: nvl1", "fabric.topograph.run/tier-0: sw14", "accelerator.topograph.run/domain: nvl4",
}

// TestTopographExampleRequests sends request bodies as Topograph's
// documentation and test payloads write them, unchanged, and checks that
// the answer is the output Topograph gives for them.
func TestTopographExampleRequests(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "topology.conf")
	s := newStack(t, stackOpts{publish: true, engines: "- name: slurm\n  params:\n    output: " + out + "\n"})
	tests := []struct {
		name, body string
		want       []string
		file       bool // the output goes to the operator's file too
	}{
		{name: "toposim-tree", body: `{"provider":{"name":"test","params":{"modelFileName":"medium.yaml"}},"engine":{"name":"slurm"}}`, want: mediumTree},
		{name: "aws-sim-tree", body: `{"provider":{"name":"aws-sim","params":{"modelFileName":"tests/models/medium.yaml"}},"engine":{"name":"slurm","params":{"topologyConfigPath":"topology.conf"}}}`,
			want: mediumTree, file: true},
		{name: "gcp-sim-block", body: `{"provider":{"name":"gcp-sim","params":{"modelFileName":"tests/models/medium.yaml"}},"engine":{"name":"slurm","params":{"plugin":"topology/block","blockSizes":[2,4],"topologyConfigPath":"topology.conf"}}}`,
			want: mediumBlocks, file: true},
		{name: "test-block", body: `{"provider":{"name":"test","params":{"generateResponseCode":202,"topologyResponseCode":200,"modelFileName":"large.yaml"}},"engine":{"name":"slurm","params":{"plugin":"topology/block","blockSizes":[8,16,32],"topologyConfigPath":"topology.conf"}}}`,
			want: []string{"BlockName=nvl-1-1 Nodes=[1101-1108]", "BlockName=nvl-6-2 Nodes=[6201-6208]", "BlockSizes=8,16,32"}, file: true},
		// Topograph's own test payload (pkg/server/http_server_test.go,
		// slurmTrimmedTreePayload) and its expected tree: sw3 trimmed,
		// the CPU node that the model does not place under no switch.
		{name: "gcp-sim-trimmed", body: `{"provider":{"name":"gcp-sim","params":{"modelFileName":"../../tests/models/medium.yaml","trimTiers":1}},"engine":{"name":"slurm"},` +
			`"nodes":[{"region":"R1","instances":{"1101":"n-1101","1102":"n-1102","1201":"n-1201","1202":"n-1202","1301":"n-1301","1302":"n-1302","1401":"n-1401","1402":"n-1402","1500":"n-CPU"}}]}`,
			want: []string{"SwitchName=sw21 Switches=sw[11-12]", "SwitchName=sw22 Switches=sw[13-14]", "SwitchName=sw11 Nodes=n-[1101-1102]",
				"SwitchName=sw12 Nodes=n-[1201-1202]", "SwitchName=sw13 Nodes=n-[1301-1302]", "SwitchName=sw14 Nodes=n-[1401-1402]"}},
		// blockName as Topograph's CI writes it (tests/ci/values.slinky-dra-block.yaml).
		{name: "test-block-named", body: `{"provider":{"name":"test","params":{"modelFileName":"large.yaml"}},"engine":{"name":"slurm","params":{"plugin":"topology/block","blockSizes":[8,16,32],` +
			`"blockName":{"nodeNameRegexp":"^([0-9]{2})","format":"rack${1}"}}}}`,
			want: []string{"BlockName=rack11 Nodes=[1101-1108]", "BlockName=rack62 Nodes=[6201-6208]", "BlockSizes=8,16,32"}},
		{name: "test-k8s", body: `{"provider":{"name":"test","params":{"generateResponseCode":202,"topologyResponseCode":200,"modelFileName":"medium.yaml"}},"engine":{"name":"k8s"}}`,
			want: mediumLabels},
	}
	// One at a time: two of them write the same file.
	for _, tt := range tests {
		w := s.do(http.MethodPost, "/v1/generate", tt.body)
		if w.Code != http.StatusAccepted {
			t.Fatalf("%s: generate = %d %s\n%s", tt.name, w.Code, w.Body, s.logs)
		}
		res := s.poll("/v1/topology?uid=" + w.Body.String())
		if res.Code != http.StatusOK {
			t.Fatalf("%s: topology = %d %s", tt.name, res.Code, res.Body)
		}
		docs := []string{res.Body.String()}
		if tt.file {
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			docs = append(docs, string(data))
		}
		for _, doc := range docs {
			for _, line := range tt.want {
				if !strings.Contains(doc, line+"\n") {
					t.Errorf("%s: output lacks %q:\n%s", tt.name, line, doc)
				}
			}
		}
		// POST /v1/lookup with the same body answers the same.
		if look := s.do(http.MethodPost, "/v1/lookup", tt.body); look.Code != http.StatusOK || look.Body.String() != res.Body.String() {
			t.Errorf("%s: lookup = %d %.200s", tt.name, look.Code, look.Body)
		}
	}
	// A body never submitted is 404 on lookup; one that cannot map, 400.
	if w := s.do(http.MethodPost, "/v1/lookup", `{"provider":{"name":"test","params":{"modelFileName":"small-tree.yaml"}},"engine":{"name":"slurm"}}`); w.Code != http.StatusNotFound {
		t.Errorf("lookup of a new request = %d %s", w.Code, w.Body)
	}
	for body, want := range map[string]int{
		`{"provider":{"name":"test"},"engine":{"name":"graph","params":{"topologyConfigPath":"/etc/passwd"}}}`: http.StatusForbidden,
		`{"provider":{"name":"dsx"},"engine":{"name":"slurm"}}`:                                                http.StatusBadRequest,
		`{"provider":{"name":"test"},"engine":{"name":"slurm","params":{"topologyConfigPath":"/etc/passwd"}}}`: http.StatusForbidden,
		`{"provider":{"name":"test"},"engine":{"name":"slurm","params":{"reconfigure":true}}}`:                 http.StatusForbidden,
	} {
		if w := s.do(http.MethodPost, "/v1/generate", body); w.Code != want || !strings.Contains(w.Body.String(), `"field"`) {
			t.Errorf("%s: %d %s, want %d naming the field", body, w.Code, w.Body, want)
		}
	}
}

// TestTopographAWSExample sends the example of Topograph's API
// documentation unchanged: AWS credentials in the request and the nodes
// of two regions. Each region is asked for its own instances with the
// request's key (the EC2 emulator checks both). Its block sizes (30, 120)
// leave no block of three nodes for Slurm 24.11, a 422 saying so; with
// sizes that fit, the answer is the two blocks.
func TestTopographAWSExample(t *testing.T) {
	t.Parallel()
	var in []cloudsim.Instance
	for i := 1; i <= 6; i++ {
		region, block := "region1", "cr-1"
		if i > 3 {
			region, block = "region2", "cr-2"
		}
		in = append(in, cloudsim.Instance{ID: fmt.Sprintf("instance%d", i), Zone: region + "a", Path: []string{"nn-leaf-" + region, "nn-spine"}, Domain: block})
	}
	emu := cloudsim.NewAWS(in, cloudsim.Faults{})
	emu.RequireKeys("id")
	emu.ByRegion()
	srv := httptest.NewServer(emu)
	defer srv.Close()
	s := newStack(t, stackOpts{provider: "aws", params: "endpoint: " + srv.URL + "\nretry: {maxAttempts: 1}\n"})
	body := `{
  "provider": {"name": "aws", "creds": {"accessKeyId": "id", "secretAccessKey": "secret"}},
  "engine": {"name": "slurm", "params": {"plugin": "topology/block", "blockSizes": [30, 120]}},
  "nodes": [
    {"region": "region1", "instances": {"instance1": "node1", "instance2": "node2", "instance3": "node3"}},
    {"region": "region2", "instances": {"instance4": "node4", "instance5": "node5", "instance6": "node6"}}
  ]
}`
	// As documented, blocks of 3 nodes under a base size of 30: no block
	// survives for Slurm 24.11 (the default), which is a 422 that says so.
	w := s.do(http.MethodPost, "/v1/generate", body)
	if w.Code != http.StatusAccepted {
		t.Fatalf("generate = %d %s", w.Code, w.Body)
	}
	res := s.poll("/v1/topology?uid=" + w.Body.String())
	if e := errorOf(t, res); res.Code != http.StatusUnprocessableEntity || !strings.Contains(e.Message, "base block size 30") {
		t.Fatalf("documented example = %d %s", res.Code, res.Body)
	}
	// With block sizes that fit the six nodes, the blocks come back.
	w = s.do(http.MethodPost, "/v1/generate", strings.Replace(body, "[30, 120]", "[3, 6]", 1))
	res = s.poll("/v1/topology?uid=" + w.Body.String())
	for _, line := range []string{"BlockName=cr-1 Nodes=node[1-3]\n", "BlockName=cr-2 Nodes=node[4-6]\n", "BlockSizes=3,6\n"} {
		if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), line) {
			t.Fatalf("topology = %d, lacks %q:\n%s", res.Code, line, res.Body)
		}
	}
	signed := emu.Signed()
	slices.Sort(signed)
	if got := strings.Join(slices.Compact(signed), " "); got != "id/region1 id/region2" {
		t.Errorf("EC2 saw %s, want each region asked with the request's key", got)
	}
	if strings.Contains(s.logs.String(), "secret") {
		t.Error("the secret key reached the log")
	}
}

// TestTopographGraphEngine sends Topograph's own graph engine request
// (pkg/server/http_server_test.go, graphPayload, at commit e2b6250) and
// compares the answer with the document Topograph's test expects
// (graphInstancesJSON), as JSON values.
func TestTopographGraphEngine(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	body := `{"provider":{"name":"test","params":{"modelFileName":"small-tree.yaml"}},"engine":{"name":"graph"},` +
		`"nodes":[{"region":"none","instances":{"i-I21":"I21","i-I22":"I22"}}]}`
	want := `{"instances":[{"id":"i-I21","labels":{"topology.kubernetes.io/region":"none"},"network_layers":["S2","S1"]},` +
		`{"id":"i-I22","labels":{"topology.kubernetes.io/region":"none"},"network_layers":["S2","S1"]}]}`
	w := s.do(http.MethodPost, "/v1/generate", body)
	if w.Code != http.StatusAccepted {
		t.Fatalf("generate = %d %s\n%s", w.Code, w.Body, s.logs)
	}
	res := s.poll("/v1/topology?uid=" + w.Body.String())
	if res.Code != http.StatusOK {
		t.Fatalf("topology = %d %s", res.Code, res.Body)
	}
	var got, exp any
	if err := json.Unmarshal(res.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, res.Body)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("graph engine answer\n got %s\nwant %s", res.Body, want)
	}
	if ct := res.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestTopographIntegrationPayloads sends Topograph's own integration
// payloads (testdata/topograph/integration, SOURCE.md there): each gets
// the POST /v1/generate status it asks for, then the GET /v1/topology
// status and text; the valid one, the small-tree model's tree.
func TestTopographIntegrationPayloads(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	files, err := filepath.Glob(filepath.Join("testdata", "topograph", "integration", "*.json"))
	if err != nil || len(files) != 6 {
		t.Fatalf("want Topograph's 6 payloads, got %v (%v)", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Provider struct {
				Params struct {
					Generate int    `json:"generateResponseCode"`
					Topology int    `json:"topologyResponseCode"`
					Message  string `json:"errorMessage"`
				} `json:"params"`
			} `json:"provider"`
		}
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		want := p.Provider.Params
		w := s.do(http.MethodPost, "/v1/generate", string(data))
		if w.Code != want.Generate {
			t.Errorf("%s: generate = %d %q, want %d", f, w.Code, w.Body, want.Generate)
			continue
		}
		if w.Code != http.StatusAccepted {
			if w.Body.String() != want.Message+"\n" {
				t.Errorf("%s: generate body %q, want %q", f, w.Body, want.Message+"\n")
			}
			continue
		}
		var res *httptest.ResponseRecorder
		if want.Topology == http.StatusAccepted {
			// Topograph keeps such a request pending for good, answering
			// 202 with the message (here none) once it has run.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				res = s.do(http.MethodGet, "/v1/topology?uid="+w.Body.String(), "")
				if !strings.HasPrefix(res.Body.String(), "request ID") || time.Now().After(deadline) {
					break
				}
			}
			if res.Body.String() != want.Message {
				t.Errorf("%s: topology body %q, want %q", f, res.Body, want.Message)
			}
		} else {
			res = s.poll("/v1/topology?uid=" + w.Body.String())
		}
		if res.Code != want.Topology {
			t.Errorf("%s: topology = %d %q, want %d", f, res.Code, res.Body, want.Topology)
			continue
		}
		switch {
		case want.Topology == http.StatusOK:
			for _, line := range []string{"SwitchName=S1 Switches=S[2-3]\n", "SwitchName=S2 Nodes=I[21-22,25]\n", "SwitchName=S3 Nodes=I[34-36]\n"} {
				if !strings.Contains(res.Body.String(), line) {
					t.Errorf("%s: output lacks %q:\n%s", f, line, res.Body)
				}
			}
		case want.Topology >= 400 && res.Body.String() != want.Message+"\n":
			t.Errorf("%s: topology body %q, want %q", f, res.Body, want.Message+"\n")
		}
	}
	// Codes Topograph does not take are refused, naming the field.
	for _, body := range []string{
		`{"provider":{"name":"test","params":{"generateResponseCode":200}},"engine":{"name":"slurm"}}`,
		`{"provider":{"name":"test","params":{"topologyResponseCode":302}},"engine":{"name":"slurm"}}`,
	} {
		if w := s.do(http.MethodPost, "/v1/generate", body); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "ResponseCode") {
			t.Errorf("%s: %d %s, want 400 naming the field", body, w.Code, w.Body)
		}
	}
}
