package infiniband

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
)

func TestParseNameMap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       NameMap
		err        string
	}{
		{"OpenSM's form", "# site map\n0xe09d730300000001 \"gpu001\"\n\n0XE09D730300000002\t\"gpu002 HCA-1\"  # second\n",
			NameMap{0xe09d730300000001: "gpu001", 0xe09d730300000002: "gpu002 HCA-1"}, ""},
		{"GUID without 0x, name unquoted", "e09d730300000003 spine-01 (core)\n", NameMap{0xe09d730300000003: "spine-01 (core)"}, ""},
		{"the same name twice", "0x1 \"a\"\n0x1 \"a\"\n", NameMap{1: "a"}, ""},
		{"two names", "0x1 \"a\"\n0x0001 \"b\"\n", nil, `map:2: bad node-name-map: GUID 0000000000000001 is mapped to "a" at line 1 and to "b" here`},
		{"bad GUID", "\n0xZZ \"a\"\n", nil, `map:2: bad node-name-map: want a node GUID first, got "0xZZ"`},
		{"no name", "0x1\n", nil, "map:1: bad node-name-map: no name after the GUID"},
		{"unterminated", "0x1 \"a\n", nil, "unterminated quoted name"},
		{"text after the name", "0x1 \"a\" b\n", nil, `text after the quoted name: "b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := ParseNameMap([]byte(tc.text), "map")
			if tc.err != "" {
				if !errors.Is(err, ErrNameMap) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseNameMap = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(m) != len(tc.want) {
				t.Fatalf("ParseNameMap = %v, %v; want %v", m, err, tc.want)
			}
			for g, n := range tc.want {
				if m[g] != n {
					t.Errorf("GUID %x = %q, want %q", g, m[g], n)
				}
			}
		})
	}
}

// TestNodeNameMap: a fabric whose HCAs carry the adapter's generic
// description names no host; with a node-name-map, the default settings
// give the tree, a CA mapped to a host name alone and one mapped to
// "<host> <hca>" alike. A CA the map leaves out stays unnamed.
func TestNodeNameMap(t *testing.T) {
	t.Parallel()
	generic := regexp.MustCompile(`"node00\d mlx5_0"`).ReplaceAllString(exampleOutput, `"MT4129 ConnectX7   Mellanox Technologies"`)
	dir := t.TempDir()
	mapPath := filepath.Join(dir, "node-name-map")
	if err := os.WriteFile(mapPath, []byte("# hosts\n0xe09d730300000001 \"gpu001\"\n0xe09d730300000002 \"gpu002 HCA-1\"\n0xe09d730300000003 \"gpu003\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	discover := func(nameMap string) ([]string, error) {
		cfg := DefaultConfig()
		cfg.OutputText, cfg.NodeNameMap = generic, nameMap
		p, err := New(cfg, providers.Deps{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Discover(context.Background(), providers.Request{})
		if err != nil {
			return nil, err
		}
		var placed []string
		for _, n := range g.Nodes() {
			if n.Leaf != "" {
				placed = append(placed, n.Name+"@"+n.Leaf)
			}
		}
		return placed, nil
	}
	if _, err := discover(""); err == nil || !strings.Contains(err.Error(), "unnamed") {
		t.Fatalf("without a map: %v, want no host named", err)
	}
	placed, err := discover(mapPath)
	if err != nil {
		t.Fatalf("with the map: %v", err)
	}
	if got := strings.Join(placed, " "); !strings.Contains(got, "gpu001@") || !strings.Contains(got, "gpu002@") || !strings.Contains(got, "gpu003@") || strings.Contains(got, "node004") || len(placed) != 3 {
		t.Errorf("placed = %v, want gpu001-gpu003 under their leaves", placed)
	}
	if err := os.WriteFile(mapPath, []byte("0xe09d730300000001 \"gpu001\"\n0xe09d730300000001 \"gpu009\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := discover(mapPath); !errors.Is(err, ErrNameMap) || !strings.Contains(err.Error(), mapPath+":2") {
		t.Errorf("a map naming one GUID twice: %v, want the file and line named", err)
	}
}
