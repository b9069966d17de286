package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		`{"provider":{"name":"test"},"engine":{"name":"graph"}}`:                                               http.StatusBadRequest,
		`{"provider":{"name":"dsx"},"engine":{"name":"slurm"}}`:                                                http.StatusBadRequest,
		`{"provider":{"name":"test"},"engine":{"name":"slurm","params":{"topologyConfigPath":"/etc/passwd"}}}`: http.StatusForbidden,
		`{"provider":{"name":"test"},"engine":{"name":"slurm","params":{"reconfigure":true}}}`:                 http.StatusForbidden,
	} {
		if w := s.do(http.MethodPost, "/v1/generate", body); w.Code != want || !strings.Contains(w.Body.String(), `"field"`) {
			t.Errorf("%s: %d %s, want %d naming the field", body, w.Code, w.Body, want)
		}
	}
}
