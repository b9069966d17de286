package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// TestBudgetsCmd covers toposcope budgets (the sacctmgr file, whose
// content placement/slurmaccounts checks against its golden file) and
// generate --budgets with the kueue-budgets engine.
func TestBudgetsCmd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	budgets := filepath.Join(dir, "budgets.yaml")
	if err := os.WriteFile(budgets, []byte("accounts:\n  - name: research\n    shares: 3\n    children:\n      - name: nlp\n      - name: vision\n  - name: production\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	upper := filepath.Join(dir, "upper.yaml")
	if err := os.WriteFile(upper, []byte("accounts:\n  - name: Research\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../../../placement/slurmaccounts/testdata/budgets.sacctmgr")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{name: "sacctmgr", args: []string{"budgets", "--budgets", budgets, "--cluster", "tux"},
			stdout: []string{"Cluster - 'tux':Fairshare=1\nParent - 'root'\nAccount - 'research':Fairshare=3\nAccount - 'production':Fairshare=1\nParent - 'research'\nAccount - 'nlp':Fairshare=1\n"}},
		{name: "same as the package's golden file", args: []string{"budgets", "--budgets", "../../../placement/slurmaccounts/testdata/budgets.yaml", "--cluster", "tux"},
			stdout: []string{string(golden)}},
		{name: "no cluster", args: []string{"budgets", "--budgets", budgets}, code: cli.ExitUsage, stderr: "--cluster"},
		{name: "unknown format", args: []string{"budgets", "--budgets", budgets, "--cluster", "tux", "--format", "csv"}, code: cli.ExitUsage, stderr: `--format "csv"`},
		{name: "name Slurm would change", args: []string{"budgets", "--budgets", upper, "--cluster", "tux"}, code: cli.ExitUsage, stderr: `account "Research"`},
		{name: "kueue-budgets print", args: []string{"generate", "--model", "small-tree", "--engine", "kueue-budgets", "--budgets", budgets, "--engine-param", "mode=print"},
			stdout: []string{"2 Cohorts, 3 ClusterQueues, 128 nvidia.com/gpu", "kind: ClusterQueue", "cohortName: research", "nominalQuota: \"48\""}},
		{name: "kueue-budgets needs --budgets", args: []string{"generate", "--engine", "kueue-budgets", "--engine-param", "mode=print"},
			code: cli.ExitUsage, stderr: "give --budgets FILE"},
		{name: "--budgets for another engine", args: []string{"generate", "--budgets", budgets}, code: cli.ExitUsage, stderr: "does not publish the budgets tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, tc.code, r.stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, r.stderr)
			}
		})
	}
}
