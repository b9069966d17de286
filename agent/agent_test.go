package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers"
)

const csv = "7C1C6F5C-1A2B-4C3D-8E9F-0123456789AB, 32766\n7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab, 32766\n"

func runner(out string, err error) agent.Runner {
	return func(context.Context, []string) ([]byte, error) { return []byte(out), err }
}

func sysfs(t *testing.T, hcas map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, guid := range hcas {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if guid != "" {
			if err := os.WriteFile(filepath.Join(dir, name, "node_guid"), []byte(guid+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func placerDown(context.Context) (agent.Placement, error) {
	return agent.Placement{}, errors.New("404")
}

func placerUp(context.Context) (agent.Placement, error) {
	return agent.Placement{Path: []string{"lb1", "nb1", "hpc1"}, Domain: "gmf1"}, nil
}

func TestGather(t *testing.T) {
	t.Parallel()
	down := func(context.Context) (agent.Identity, error) { return agent.Identity{}, errors.New("no route") }
	up := func(context.Context) (agent.Identity, error) {
		return agent.Identity{InstanceID: "i-1", Region: "us-east-1", Zone: "us-east-1a"}, nil
	}
	tests := []struct {
		name    string
		g       agent.Gatherer
		hcas    map[string]string
		want    providers.NodeFacts
		wantErr bool
	}{
		{"everything", agent.Gatherer{Identifiers: []agent.Identifier{down, up}, NvidiaSMI: []string{"nvidia-smi"}, Run: runner(csv, nil)},
			map[string]string{"mlx5_1": "e09d:7303:0000:0002", "mlx5_0": "e09d:7303:0000:0001", "bond0": ""},
			providers.NodeFacts{Node: "n1", InstanceID: "i-1", Region: "us-east-1", Zone: "us-east-1a", GPUs: 2,
				Clique: "7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.32766",
				HCAs:   []providers.HCA{{Name: "bond0"}, {Name: "mlx5_0", NodeGUID: "e09d730300000001"}, {Name: "mlx5_1", NodeGUID: "e09d730300000002"}}}, false},
		{"no metadata, no driver, no sysfs", agent.Gatherer{Identifiers: []agent.Identifier{down}, NvidiaSMI: []string{"nvidia-smi"}, Run: runner("", exec.ErrNotFound)},
			nil, providers.NodeFacts{Node: "n1"}, false},
		{"gpus without fabric", agent.Gatherer{NvidiaSMI: []string{"nvidia-smi"}, Run: runner("[N/A], [N/A]\n", nil)},
			nil, providers.NodeFacts{Node: "n1", GPUs: 1}, false},
		{"garbled nvidia-smi", agent.Gatherer{NvidiaSMI: []string{"nvidia-smi"}, Run: runner("what, is, this\n", nil)},
			nil, providers.NodeFacts{}, true},
		{"nvidia-smi fails", agent.Gatherer{NvidiaSMI: []string{"nvidia-smi"}, Run: runner("", errors.New("exit status 9"))},
			nil, providers.NodeFacts{}, true},
		{"bad guid", agent.Gatherer{}, map[string]string{"mlx5_0": "zz"}, providers.NodeFacts{}, true},
		{"fabric placement from the metadata service", agent.Gatherer{Identifiers: []agent.Identifier{up},
			Placers: []agent.Placer{placerDown, placerUp}}, nil,
			providers.NodeFacts{Node: "n1", InstanceID: "i-1", Region: "us-east-1", Zone: "us-east-1a",
				Fabric: []string{"lb1", "nb1", "hpc1"}, FabricDomain: "gmf1"}, false},
		{"no placement asked without an identity", agent.Gatherer{Identifiers: []agent.Identifier{down},
			Placers: []agent.Placer{func(context.Context) (agent.Placement, error) { panic("asked") }}}, nil,
			providers.NodeFacts{Node: "n1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := tt.g
			if tt.hcas != nil {
				g.SysfsDir = sysfs(t, tt.hcas)
			} else {
				g.SysfsDir = filepath.Join(t.TempDir(), "missing")
			}
			f, err := g.Gather(context.Background(), "n1")
			if tt.wantErr {
				if !errors.Is(err, agent.ErrGather) {
					t.Fatalf("Gather = %+v, %v; want ErrGather", f, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(f)
			b, _ := json.Marshal(tt.want)
			if string(a) != string(b) {
				t.Errorf("facts = %s\nwant    %s", a, b)
			}
		})
	}
}

func TestAnnotate(t *testing.T) {
	t.Parallel()
	core := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Annotations: map[string]string{keys.NVLinkRack: "old-rack", "other": "kept"}}})
	f := providers.NodeFacts{Node: "n1", InstanceID: "i-1", Clique: "u.1", HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: "e09d730300000001"}}}
	ctx := context.Background()
	wrote, err := agent.Annotate(ctx, core.CoreV1().Nodes(), f)
	if err != nil || !wrote {
		t.Fatalf("Annotate = %v, %v", wrote, err)
	}
	n, err := core.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{keys.InstanceID: "i-1", keys.NVLinkClique: "u.1", keys.HCAs: "mlx5_0=e09d730300000001", "other": "kept"}
	if len(n.Annotations) != len(want) {
		t.Errorf("annotations = %v, want %v", n.Annotations, want)
	}
	for k, v := range want {
		if n.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, n.Annotations[k], v)
		}
	}
	if wrote, err := agent.Annotate(ctx, core.CoreV1().Nodes(), f); err != nil || wrote {
		t.Errorf("second Annotate = %v, %v; want no write", wrote, err)
	}
	if _, err := agent.Annotate(ctx, core.CoreV1().Nodes(), providers.NodeFacts{Node: "missing"}); !errors.Is(err, agent.ErrPublish) {
		t.Errorf("Annotate(missing node) = %v", err)
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(body))
		if strings.Contains(r.URL.Path, "denied") {
			http.Error(w, "bad token "+token, http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	r := &agent.Reporter{Server: srv.URL + "/", Token: token, Client: srv.Client()}
	if err := r.Report(context.Background(), providers.NodeFacts{Node: "gpu1", Clique: "u.1"}); err != nil {
		t.Fatal(err)
	}
	want := `PUT /v1/agents/gpu1 Bearer ` + token + ` {"node":"gpu1","clique":"u.1"}`
	if !slices.Equal(got, []string{want}) {
		t.Errorf("requests = %q, want %q", got, want)
	}
	err := r.Report(context.Background(), providers.NodeFacts{Node: "denied"})
	if !errors.Is(err, agent.ErrPublish) || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), token) {
		t.Errorf("Report(denied) = %v", err)
	}
}
