package cli_test

import (
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// TestDidYouMean: a misspelt value or subcommand is refused (exit 2) with
// the closest known one.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"generate", "--model", "nvl73"}, `did you mean "nvl72"?`},
		{[]string{"generate", "--engine", "slurmm"}, `did you mean "slurm"?`},
		{[]string{"generate", "--provider", "infiniban"}, `did you mean "infiniband"?`},
		{[]string{"generate", "--plugin", "topology/blok"}, `did you mean "topology/block"?`},
		{[]string{"model", "gen"}, `unknown command "gen" for "toposcope model"; did you mean "generate"?`},
		{[]string{"model", "genrate"}, `did you mean "generate"?`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.args...)
			if r.code != cli.ExitUsage || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, cli.ExitUsage, tt.want)
			}
		})
	}
}

// TestCompletion asks cobra's __complete command, as the shell scripts
// do, for the values of --model, --provider, --engine and --plugin.
func TestCompletion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args      []string
		want, not []string
		directive string
	}{
		{[]string{"generate", "--model", "nvl"}, []string{"nvl72\t"}, []string{"small-tree"}, ":0"},
		{[]string{"serve", "--model", ""}, []string{"small-tree\t", "fat-tree-512\t", "nvl72\t"}, nil, ":0"},
		{[]string{"show", "--provider", "in"}, []string{"infiniband\t"}, []string{"sim\t"}, ":4"},
		{[]string{"generate", "--provider", ""}, []string{"sim\t", "k8s-labels\t", "slurm-nodes\t"}, nil, ":4"},
		{[]string{"generate", "--engine", "k"}, []string{"k8s-labels\t", "kueue\t", "kai\t"}, []string{"slurm\t"}, ":4"},
		{[]string{"generate", "--plugin", "topology/"}, []string{"topology/tree\t", "topology/block\t", "topology/yaml\t"}, nil, ":4"},
		{[]string{"model", "ge"}, []string{"generate\t"}, nil, ":4"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := run(t, append([]string{"__complete"}, tt.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if last := lines[len(lines)-1]; last != tt.directive {
				t.Errorf("directive %q, want %q", last, tt.directive)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, "\n"+w) && !strings.HasPrefix(r.stdout, w) {
					t.Errorf("completions lack %q:\n%s", w, r.stdout)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(r.stdout, n) {
					t.Errorf("completions offer %q:\n%s", n, r.stdout)
				}
			}
		})
	}
}
