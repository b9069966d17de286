package slurmnodes_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers/slurmnodes"
)

// Slurm 22.05's `scontrol -o show nodes` (trimmed), a Comment with spaces.
const oneLiner2205 = `NodeName=gpu001 CoresPerSocket=1  CPUAlloc=0 AvailableFeatures=instance-id=i-0aaa,region=us-east-1 ActiveFeatures=instance-id=i-0aaa,region=us-east-1 Gres=(null) NodeAddr=127.0.0.1 NodeHostName=gpu001  State=IDLE Partitions=gpu,debug  BootTime=None
NodeName=gpu002 CoresPerSocket=1  CPUAlloc=0 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=gpu002  State=DOWN Partitions=gpu  Reason=cable Owner=N/A Comment=moved to rack 7 Extra=i-0ccc
`

// Slurm 24.11's `scontrol --json show nodes` (trimmed).
const json2411 = `{"nodes": [
 {"name": "gpu001", "hostname": "gpu001", "partitions": ["gpu"], "features": ["instance-id=i-0aaa"], "comment": "", "extra": "", "instance_id": "i-0sim001", "state": ["IDLE"]},
 {"name": "gpu002", "partitions": [], "features": "a,b", "comment": "i-0bbb", "extra": "", "instance_id": ""}
], "errors": [], "warnings": []}`

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []slurmnodes.Node
		err      string
	}{
		{name: "22.05 one-liner", in: oneLiner2205, want: []slurmnodes.Node{
			{Name: "gpu001", Partitions: []string{"gpu", "debug"}, Features: []string{"instance-id=i-0aaa", "region=us-east-1"}},
			{Name: "gpu002", Partitions: []string{"gpu"}, Comment: "moved to rack 7", Extra: "i-0ccc"},
		}},
		{name: "24.11 JSON", in: json2411, want: []slurmnodes.Node{
			{Name: "gpu001", Partitions: []string{"gpu"}, Features: []string{"instance-id=i-0aaa"}, InstanceID: "i-0sim001"},
			{Name: "gpu002", Partitions: []string{}, Features: []string{"a", "b"}, Comment: "i-0bbb"},
		}},
		{name: "empty", in: "  \n", err: "empty"},
		{name: "JSON syntax names the byte, not the text", in: `{"nodes": [{"name": "gpu001", "comment": "s3cret"`, err: "at byte"},
		{name: "JSON wrong type", in: `{"nodes": [{"name": 7}]}`, err: "nodes.name is a JSON number"},
		{name: "no nodes key", in: `{"meta": {}}`, err: `no "nodes"`},
		{name: "scontrol errors", in: `{"nodes": [], "errors": [{"error": "Unable to contact slurm controller"}]}`, err: "Unable to contact"},
		{name: "a line without NodeName", in: "NodeName=a Partitions=x\nPartitionName=gpu Nodes=a\n", err: "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := slurmnodes.Parse([]byte(tt.in))
			if tt.err != "" {
				if !errors.Is(err, slurmnodes.ErrParse) || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("err = %v, want ErrParse with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d nodes, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Name != w.Name || !slices.Equal(g.Partitions, w.Partitions) || !slices.Equal(g.Features, w.Features) ||
					g.Comment != w.Comment || g.Extra != w.Extra || g.InstanceID != w.InstanceID {
					t.Errorf("node %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestParseSavedRESTAnswers reads slurmrestd's nodes answers saved by
// others (testdata/SOURCE.md): the same document as scontrol --json.
func TestParseSavedRESTAnswers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file  string
		count int
		node  string
		parts []string
	}{
		{"nodes-24.11-0.0.42.json", 6, "ia2", []string{"ia"}},
		{"nodes-25.11-0.0.44.json", 8, "gpu3", []string{"gpu"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := slurmnodes.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) != tt.count {
				t.Fatalf("%d nodes, want %d", len(nodes), tt.count)
			}
			i := slices.IndexFunc(nodes, func(n slurmnodes.Node) bool { return n.Name == tt.node })
			if i < 0 || !slices.Equal(nodes[i].Partitions, tt.parts) {
				t.Errorf("node %s: %+v, want partitions %v", tt.node, nodes, tt.parts)
			}
		})
	}
}
