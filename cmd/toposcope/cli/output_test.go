package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestOutputFormats: every command that prints data takes -o json, -o
// yaml and -o wide (and --json, the same as -o json); JSON and YAML are
// the same document; an unknown format, or --json with another -o, is a
// usage error.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	now := "--now=2026-12-02T12:00:00Z"
	place := []string{"place", "--model", "nvl72", "--account", "A", "--gpus", "64", now}
	sim := []string{"simulate", "--model", "small-tree", "--jobs", "50", "--policies", "bestfit"}
	show := []string{"show", "--model", "small-tree"}
	tests := []struct {
		name string
		args []string
		// key is a key of the JSON (and YAML) document, found by a
		// substring of the JSON text.
		key string
	}{
		{"models", []string{"models"}, `"nodes"`},
		{"providers", []string{"providers"}, `"requestKeys"`},
		{"engines", []string{"engines"}, `"summary"`},
		{"provider params", []string{"providers", "--params", "ufm"}, `"request"`},
		{"show", show, `"nodes"`},
		{"place", place, `"candidates"`},
		{"simulate", sim, `"policies"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			js, alias, ym := run(t, append(tt.args, "-o", "json")...), run(t, append(tt.args, "--json")...), run(t, append(tt.args, "-o", "yaml")...)
			for _, r := range []result{js, alias, ym} {
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
			}
			if js.stdout != alias.stdout {
				t.Errorf("--json and -o json differ")
			}
			var fromJSON, fromYAML any
			if err := json.Unmarshal([]byte(js.stdout), &fromJSON); err != nil || !strings.Contains(js.stdout, tt.key) {
				t.Fatalf("-o json: %v, want a key %s:\n%.300s", err, tt.key, js.stdout)
			}
			if err := yaml.Unmarshal([]byte(ym.stdout), &fromYAML); err != nil {
				t.Fatalf("-o yaml: %v", err)
			}
			a, _ := json.Marshal(fromJSON)
			b, _ := json.Marshal(fromYAML)
			if string(a) != string(b) {
				t.Errorf("-o yaml is not the document of -o json:\n%.300s\n%.300s", a, b)
			}
			if wide := run(t, append(tt.args, "-o", "wide")...); wide.code != 0 || wide.stdout == "" {
				t.Errorf("-o wide: exit %d: %s", wide.code, wide.stderr)
			}
			for _, bad := range [][]string{{"-o", "xml"}, {"--json", "-o", "yaml"}} {
				if r := run(t, append(tt.args, bad...)...); r.code != 2 || !strings.Contains(r.stderr, "-o") {
					t.Errorf("%v: exit %d, %q; want 2 naming -o", bad, r.code, r.stderr)
				}
			}
		})
	}
}

// TestWideShowsMore: -o wide adds what the table leaves out.
func TestWideShowsMore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"providers", "-o", "wide"}, "REQUEST KEYS"},
		{[]string{"show", "--model", "small-tree", "-o", "wide"}, "gpu"},
	} {
		table := run(t, tt.args[:len(tt.args)-2]...)
		wide := run(t, tt.args...)
		if wide.code != 0 || !strings.Contains(wide.stdout, tt.want) || strings.Contains(table.stdout, tt.want) {
			t.Errorf("%v: exit %d, want %q only in wide:\n%s\ntable:\n%s", tt.args, wide.code, tt.want, wide.stdout, table.stdout)
		}
	}
}
