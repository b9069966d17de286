package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// TestCheckReportsEveryProblem: one run of check names every problem of
// the file (unknown keys, values of the wrong type, invalid values, in
// the service sections and in several plugins' parameters), with its path
// and line, and caps a long list.
func TestCheckReportsEveryProblem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, doc string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	three := write("three.yaml", `provider:
  name: sim
  params:
    modl: nvl72
engines:
  - name: slurm
    params:
      plugin: topology/block
      blockSizes: [x]
server:
  listn: ":8080"
`)
	several := write("several.yaml", `provider:
  name: sim
  params:
    model: nvl72
engines:
  - name: slurm
    params:
      colour: red
  - name: k8s-labels
    params:
      flavour: x
server:
  maxBodyBytes: lots
discovery:
  interval: -5s
`)
	var many strings.Builder
	many.WriteString("server:\n")
	for i := range 25 {
		fmt.Fprintf(&many, "  key%02d: 1\n", i)
	}
	tooMany := write("many.yaml", many.String())
	var manyParams strings.Builder
	manyParams.WriteString("provider:\n  name: sim\n  params:\n    model: nvl72\n")
	for i := range 25 {
		fmt.Fprintf(&manyParams, "    key%02d: 1\n", i)
	}
	tooManyParams := write("many-params.yaml", manyParams.String())
	tests := []struct {
		name, path string
		want       []string
	}{
		{"three typos", three, []string{"3 problems:",
			`provider.params.modl (line 4): unknown key; did you mean "model"?`,
			`engines[0].params.blockSizes (line 9): want an integer, got "x"`,
			`server.listn (line 11): unknown key; did you mean "listen"?`}},
		{"several sections", several, []string{"4 problems:",
			"engines[0].params.colour (line 8): unknown key", "engines[1].params.flavour (line 11): unknown key",
			`server.maxBodyBytes (line 13): want an integer, got "lots"`, "discovery.interval (line 15): must be 0 (off) or at least 1s"}},
		{"capped", tooMany, []string{"25 problems:", "server.key00 (line 2)", "server.key19 (line 21)", "and 5 more problems"}},
		// The parameters' decoder caps its own list: the problems it left
		// out are counted, not listed as one more.
		{"capped params", tooManyParams, []string{"25 problems:", "provider.params.key00 (line 5)", "provider.params.key19 (line 24)", "\n  and 5 more problems"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, "check", "--config", tt.path)
			if r.code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", r.code, cli.ExitUsage, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "key20") {
				t.Errorf("more than %d problems listed:\n%s", 20, r.stderr)
			}
		})
	}
}
