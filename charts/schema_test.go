package charts_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/testenv/helmtest"
)

// configSchema is the chart's schema of its config value: the schema of
// the configuration file that the code generates (toposcope config
// schema), so that helm refuses a values file whose config the service
// would refuse.
func configSchema(t *testing.T) []byte {
	t.Helper()
	s := app.Registry().ConfigSchema()
	delete(s, "$schema")
	delete(s, "$id")
	delete(s, "title")
	s["description"] = "The toposcope configuration file (docs/config.schema.json, toposcope config schema): the provider, the engines and the service sections, each key checked."
	s["default"] = config.Schema{}
	b, err := config.MarshalSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// spliceConfig returns the chart's values.schema.json with the config
// property (at four spaces of indentation) replaced by schema.
func spliceConfig(doc, schema []byte) ([]byte, error) {
	const open = "\n    \"config\": {\n"
	start := bytes.Index(doc, []byte(open))
	if start < 0 {
		return nil, errors.New(`no "config" property at the top level`)
	}
	end := bytes.Index(doc[start+len(open):], []byte("\n    }"))
	if end < 0 {
		return nil, errors.New(`the "config" property does not end`)
	}
	end += start + len(open) + len("\n    }")
	indented := strings.ReplaceAll(string(schema), "\n", "\n    ")
	var out bytes.Buffer
	out.Write(doc[:start])
	out.WriteString("\n    \"config\": " + indented)
	out.Write(doc[end:])
	return out.Bytes(), nil
}

// TestChartConfigSchema keeps the config property of the chart's
// values.schema.json equal to the configuration schema the code
// generates (go test ./charts/ -run ChartConfigSchema -update).
func TestChartConfigSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(chartDir, "values.schema.json")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := spliceConfig(doc, configSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		doc = want
	}
	if !bytes.Equal(doc, want) {
		t.Fatalf("%s: config is not the generated configuration schema: run go test ./charts/ -run ChartConfigSchema -update", path)
	}
}

// TestChartRefusesConfigTypo: helm lint and helm template refuse a values
// file whose config misspells a key (which the pod would refuse at start),
// in a service section and in a plugin's params, naming the key; the same
// values spelt right pass.
func TestChartRefusesConfigTypo(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	dir := t.TempDir()
	tests := []struct {
		name, values, bad string
	}{
		{"section key", "config:\n  discovery:\n    intervall: 10m\n", "intervall"},
		{"plugin param", "config:\n  provider:\n    name: sim\n    params:\n      modell: small-tree\n", "modell"},
		{"param type", "config:\n  engines:\n    - name: slurm\n      params:\n        header: maybe\n", "header"},
		{"param enum", "config:\n  engines:\n    - name: k8s-labels\n      params:\n        mode: aply\n", "mode"},
		{"plugin name", "config:\n  engines:\n    - name: slurmm\n", "name"},
	}
	good := "config:\n  discovery:\n    interval: 10m\n  provider:\n    name: sim\n    params:\n      model: small-tree\n" +
		"  engines:\n    - name: slurm\n      params:\n        header: false\n    - name: k8s-labels\n      params:\n        mode: apply\n"
	goodPath := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(goodPath, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := render(t, h, "-f", goodPath); err != nil {
		t.Fatalf("helm template refuses the values spelt right: %v\n%s", err, out)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(tt.values), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range [][]string{
				{"template", "toposcope", chartDir, "-f", path},
				{"lint", chartDir, "-f", path},
			} {
				out, err := h.Run(t.Context(), cmd...)
				if err == nil {
					t.Fatalf("helm %s accepts config with %s:\n%.300s", cmd[0], tt.bad, out)
				}
				if !strings.Contains(err.Error()+out, tt.bad) || !strings.Contains(err.Error()+out, "config") {
					t.Errorf("helm %s refuses, but does not name config and %q: %v\n%s", cmd[0], tt.bad, err, out)
				}
			}
		})
	}
}

// TestExamplesMatchSchema: every configuration example names the
// checked-in schema on its first line (for editors), and passes it: helm
// validates each as the chart's config value.
func TestExamplesMatchSchema(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v %v", files, err)
	}
	const line = "# yaml-language-server: $schema=../docs/config.schema.json\n"
	if _, err := os.Stat("../docs/config.schema.json"); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), line) {
				t.Errorf("%s: the first line is not %q", f, line)
			}
			values := "config:\n  " + strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "\n  ") + "\n"
			path := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(path, []byte(values), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := h.Run(t.Context(), "lint", chartDir, "-f", path); err != nil {
				t.Fatalf("%s does not pass the configuration schema: %v\n%s", f, err, out)
			}
		})
	}
}
