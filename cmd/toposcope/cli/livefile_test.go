package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// TestGenerateGuardsLiveSlurmTopology: the sim provider may not replace
// the topology file next to a slurm.conf without --force, the refusal
// leaves the file as it was, and --reconfigure says what it replaces.
func TestGenerateGuardsLiveSlurmTopology(t *testing.T) {
	t.Parallel()
	const real = "SwitchName=leaf1 Nodes=node[1-4]\n"
	tests := []struct {
		name    string
		file    string // output file name
		slurm   bool   // a slurm.conf beside it
		extra   []string
		code    int
		stderr  string
		changed bool
	}{
		{name: "live conf refused", file: "topology.conf", slurm: true, code: cli.ExitUsage, stderr: "--force"},
		{name: "advice names a file that is not live", file: "topology.conf", slurm: true, code: cli.ExitUsage, stderr: "topology-sim.conf)"},
		{name: "live yaml refused", file: "topology.yaml", slurm: true, extra: []string{"--plugin", "topology/yaml", "--slurm-version", "25.05"},
			code: cli.ExitUsage, stderr: "slurmctld reads its topology"},
		{name: "forced", file: "topology.conf", slurm: true, extra: []string{"--force"}, changed: true},
		{name: "not beside slurm.conf", file: "topology.conf", changed: true},
		{name: "other name beside slurm.conf", file: "sim-topology.conf", slurm: true, changed: true},
		{name: "reconfigure tells what it replaces", file: "topology.conf", extra: []string{"--reconfigure", "--engine-param", "reconfigureCommand=true"},
			stderr: "replacing ", changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.slurm {
				if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte("ClusterName=c\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, tt.file)
			if err := os.WriteFile(out, []byte(real), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"generate", "--model", "small-tree", "--output", out}, tt.extra...)
			r := run(t, args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, r.stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(data) != real; got != tt.changed {
				t.Errorf("file changed = %v, want %v:\n%s", got, tt.changed, data)
			}
			if strings.Contains(r.stderr, "under /tmp") {
				t.Errorf("refused a file and advises /tmp:\n%s", r.stderr)
			}
			// The advised file is one the guard lets through.
			if _, advice, ok := strings.Cut(r.stderr, "(--output "); ok {
				preview, _, _ := strings.Cut(advice, ")")
				if r2 := run(t, append([]string{"generate", "--model", "small-tree", "--output", preview}, tt.extra...)...); r2.code != 0 {
					t.Errorf("the advised --output %s: exit %d\n%s", preview, r2.code, r2.stderr)
				}
			}
		})
	}
}
