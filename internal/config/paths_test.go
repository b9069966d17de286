package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
)

func TestPathsCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	models, outside, out := filepath.Join(dir, "models"), filepath.Join(dir, "elsewhere"), filepath.Join(dir, "slurm")
	for _, d := range []string{models, outside, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inModel, outModel := filepath.Join(models, "m.yaml"), filepath.Join(outside, "secret")
	for _, f := range []string{inModel, outModel} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	escape := filepath.Join(models, "escape.yaml")
	if err := os.Symlink(outModel, escape); err != nil {
		t.Fatal(err)
	}
	spec := config.ParamSpec{Keys: []string{"model", "output"}, Paths: map[string]string{"model": "read", "output": "write"}}
	roots := config.Paths{Read: []string{models}, Write: []string{out}}
	tests := []struct {
		name, key, value string
		ok               bool
	}{
		{"model inside", "model", inModel, true},
		{"bundled name", "model", "nvl72", true},
		{"model outside", "model", outModel, false},
		{"symlink escaping the root", "model", escape, false},
		{"dot-dot escaping the root", "model", filepath.Join(models, "..", "elsewhere", "secret"), false},
		{"output inside, not written yet", "output", filepath.Join(out, "topology.conf"), true},
		{"output outside", "output", filepath.Join(outside, "topology.conf"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var n yaml.Node
			config.SetParam(&n, tt.key, tt.value)
			err := roots.Check(spec, &n, "provider.params")
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, config.ErrOutsideRoots)) {
				t.Fatalf("Check(%s=%s) = %v, want ok=%v", tt.key, tt.value, err, tt.ok)
			}
		})
	}
	if err := (config.Paths{}).Check(spec, func() *yaml.Node { var n yaml.Node; config.SetParam(&n, "model", outModel); return &n }(), "p"); err != nil {
		t.Errorf("no roots bound nothing: %v", err)
	}
}

// TestPathsCheckNested: a file named inside a nested settings struct
// (the lldp provider's snmp.communityFile) is kept below the roots too,
// and the error names the dotted key and its line.
func TestPathsCheckNested(t *testing.T) {
	t.Parallel()
	type snmp struct {
		CommunityFile string `yaml:"communityFile" path:"read"`
	}
	type cfg struct {
		Reports []string `yaml:"reports"`
		SNMP    *snmp    `yaml:"snmp"`
	}
	spec := config.SpecOf(cfg{})
	if spec.Paths["snmp.communityFile"] != "read" {
		t.Fatalf("Paths = %v, want snmp.communityFile read", spec.Paths)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "community"), []byte("c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	roots := config.Paths{Read: []string{dir}}
	for _, tt := range []struct {
		doc string
		ok  bool
	}{
		{"snmp:\n  communityFile: " + filepath.Join(dir, "community") + "\n", true},
		{"snmp:\n  communityFile: /etc/shadow\n", false},
		{"reports: [a]\n", true},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tt.doc), &n); err != nil {
			t.Fatal(err)
		}
		err := roots.Check(spec, n.Content[0], "provider.params")
		var fe *config.FieldError
		if tt.ok != (err == nil) || err != nil && (!errors.As(err, &fe) || fe.Field != "provider.params.snmp.communityFile" || fe.Line != 2) {
			t.Errorf("%q: Check = %v (%+v), want ok=%v", tt.doc, err, fe, tt.ok)
		}
	}
}
