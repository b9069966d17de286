package infiniband

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
)

// railsWith returns the four-rail fixture with host descriptions
// rewritten by the replacer.
func railsWith(t *testing.T, r *strings.Replacer) string {
	t.Helper()
	data, err := os.ReadFile("testdata/ibsim-rails.out")
	if err != nil {
		t.Fatal(err)
	}
	return r.Replace(string(data))
}

// TestHostsFilteredOutEntirely: with an HCA selection and no nodes list,
// a host whose HCAs are all named otherwise is an error naming it and the
// way out (nodes, notCompute), not a host silently missing; a localhost
// is not a compute node and is left out by the notCompute rule.
func TestHostsFilteredOutEntirely(t *testing.T) {
	t.Parallel()
	renamed := railsWith(t, strings.NewReplacer(`"gpu003 mlx5_0"`, `"gpu003 mlx5_8"`, `"gpu003 mlx5_1"`, `"gpu003 mlx5_9"`))
	cfg := DefaultConfig()
	cfg.OutputText, cfg.HCAs = renamed, []string{"mlx5_[0-1]"}
	p, err := New(cfg, providers.Deps{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Discover(context.Background(), providers.Request{})
	if !errors.Is(err, ErrNoHCAMatch) || !strings.Contains(err.Error(), `host "gpu003"`) || !strings.Contains(err.Error(), "notCompute") {
		t.Fatalf("Discover = %v, want ErrNoHCAMatch naming gpu003 and notCompute", err)
	}

	local := railsWith(t, strings.NewReplacer(`"gpu004 mlx5_`, `"localhost mlx5_`))
	cfg = DefaultConfig()
	cfg.OutputText, cfg.HCAs = local, []string{"mlx5_0"}
	p, err = New(cfg, providers.Deps{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range g.Nodes() {
		names = append(names, n.Name)
	}
	if slices.Contains(names, "localhost") || !slices.Contains(names, "gpu003") {
		t.Errorf("nodes %v: localhost published, or a compute host missing", names)
	}
}
