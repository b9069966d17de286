package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// TestGenerateSaysItOnce: one short NVLink domain lowering the inferred
// base block size is a warning on stderr, once; a topology that cannot be
// expressed is said once, with exit 3.
func TestGenerateSaysItOnce(t *testing.T) {
	t.Parallel()
	model := filepath.Join(t.TempDir(), "odd.yaml")
	// 100 nodes in domains of 18: five full ones and one of 10.
	if r := run(t, "model", "generate", "--shape", "fat-tree", "--nodes", "100", "--domain-size", "18", "-o", model); r.code != 0 {
		t.Fatalf("model generate: %+v", r)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		once   string
		stdout string
	}{
		{"lowered base", []string{"generate", "--model", model, "--plugin", "topology/block"}, 0,
			"base block size 10 nodes, not the 18 of most domains", "BlockSizes=10,"},
		{"nominal base kept when asked", []string{"generate", "--model", model, "--plugin", "topology/block", "--engine-param", "smallBlocks=drop"}, 0,
			"10 nodes not covered", "BlockSizes=18"},
		{"inexpressible", []string{"generate", "--plugin", "topology/block"}, cli.ExitInexpressible,
			"no accelerator domain", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tt.code, r.stderr)
			}
			if n := strings.Count(r.stderr, tt.once); n != 1 {
				t.Errorf("stderr says %q %d times, want once:\n%s", tt.once, n, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, r.stdout)
			}
			if tt.code == 0 && tt.name != "lowered base" && strings.Contains(r.stderr, "base block size") {
				t.Errorf("warns of a lowered base it did not lower:\n%s", r.stderr)
			}
		})
	}
}
