package slurmrest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDecodeSavedPartitions reads slurmrestd answers saved by others
// (testdata/SOURCE.md) and by the real slurmrestd 22.05 of this suite.
func TestDecodeSavedPartitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want map[string]int // partition: node count
		spot map[string]string
	}{
		{"partitions-22.05-0.0.38.json", map[string]int{"all": 5, "gpu": 4, "debug": 2}, map[string]string{"debug": "cpu001"}},
		{"partitions-24.05-0.0.41.json", map[string]int{"batch": 512, "debug": 19, "interactive": 1, "ia": 40}, map[string]string{"batch": "cn532", "ia": "gn01"}},
		{"partitions-24.11-0.0.42.json", map[string]int{"standard": 4, "ia": 2}, map[string]string{"ia": "ia2"}},
		{"partitions-25.05-0.0.43.json", map[string]int{"normal": 4, "gpu": 2}, map[string]string{"gpu": "gpu1"}},
		{"partitions-25.11-0.0.44.json", map[string]int{"normal": 4, "gpu": 2}, map[string]string{"normal": "cn4"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodePartitions(raw)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("partitions %v, want %v", keys(got), tt.want)
			}
			for p, n := range tt.want {
				if len(got[p]) != n {
					t.Errorf("partition %s: %d nodes, want %d", p, len(got[p]), n)
				}
			}
			for p, node := range tt.spot {
				if !slices.Contains(got[p], node) {
					t.Errorf("partition %s lacks %s: %v", p, node, got[p])
				}
			}
		})
	}
}

func TestDecodePartitionsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"not JSON", `<html>`, "invalid character"},
		{"no partitions", `{"meta":{}}`, `no "partitions"`},
		{"errors reported", `{"partitions":[],"errors":[{"error":"Invalid user","description":"token expired"}]}`, "the first: Invalid user token expired"},
		{"nameless", `{"partitions":[{"nodes":"a1"}]}`, "partitions[0] has no name"},
		{"bad nodes", `{"partitions":[{"name":"gpu","nodes":{"total":3}}]}`, `partition gpu: nodes: want a hostlist or an object with "configured"`},
		{"bad hostlist", `{"partitions":[{"name":"gpu","nodes":"a[3-1]"}]}`, "partition gpu: nodes:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodePartitions([]byte(tt.body))
			if !errors.Is(err, ErrResponse) || !contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrResponse with %q", err, tt.want)
			}
		})
	}
}

func TestDecodeEmptyPartitions(t *testing.T) {
	t.Parallel()
	got, err := DecodePartitions([]byte(`{"partitions":[{"name":"a","nodes":"(null)"},{"name":"b","nodes":{"configured":""}},{"name":"c","nodes":null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b", "c"} {
		if nodes, ok := got[p]; !ok || len(nodes) != 0 {
			t.Errorf("partition %s: %v (present %v), want present and empty", p, nodes, ok)
		}
	}
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func contains(s, sub string) bool {
	return strings.Contains(s, sub)
}
