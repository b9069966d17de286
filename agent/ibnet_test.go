package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/internal/testenv/ibsim"
	"github.com/toposcope/toposcope/providers/infiniband"
)

// countingRunner runs commands for real and counts the runs.
type countingRunner struct{ runs atomic.Int32 }

func (c *countingRunner) Run(ctx context.Context, argv []string) ([]byte, error) {
	c.runs.Add(1)
	return infiniband.ExecRunner{}.Run(ctx, argv)
}

// startSim starts a simulated fabric of two leaves of two hosts.
func startSim(t *testing.T) *ibsim.Sim {
	t.Helper()
	ibsim.Require(t)
	model, err := ibsim.Model(ibsim.ModelSpec{Links: []string{"spine>leaf1", "spine>leaf2"},
		Leaves: map[string]string{"leaf1": "gpu[001-002]", "leaf2": "gpu[003-004]"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := ibsim.Expand(model, ibsim.Expansion{})
	if err != nil {
		t.Fatal(err)
	}
	return ibsim.Start(t, f)
}

// TestFabricDiscoveryRealIbnetdiscover runs the real ibnetdiscover on a
// simulated fabric: the first call runs it and returns output that
// parses, with every host's HCA; calls within the interval reuse it
// without running; after the interval it runs again; the agent's facts
// carry it.
func TestFabricDiscoveryRealIbnetdiscover(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &countingRunner{}
	d := &agent.FabricDiscovery{Command: sim.Command(), Interval: time.Hour, Timeout: time.Minute, Run: run,
		Now: func() time.Time { return now }}
	ctx := context.Background()
	out, err := d.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := infiniband.Parse(strings.NewReader(out), "test")
	if err != nil {
		t.Fatal(err)
	}
	hosts := 0
	for _, n := range topo.Nodes {
		if n.Type == infiniband.CA && strings.HasPrefix(n.Description, "gpu00") {
			hosts++
		}
	}
	if hosts != 4 || run.runs.Load() != 1 {
		t.Fatalf("first call: %d host HCAs, %d runs; want 4 and 1", hosts, run.runs.Load())
	}
	now = now.Add(59 * time.Minute)
	if again, err := d.Output(ctx); err != nil || again != out || run.runs.Load() != 1 {
		t.Errorf("within the interval: err %v, same output %v, %d runs; want the same output and no new run", err, again == out, run.runs.Load())
	}
	now = now.Add(time.Minute)
	if _, err := d.Output(ctx); err != nil || run.runs.Load() != 2 {
		t.Errorf("after the interval: err %v, %d runs; want a second run", err, run.runs.Load())
	}
	g := &agent.Gatherer{Fabric: d}
	f, err := g.Gather(ctx, "gpu001")
	if err != nil || f.IBNetDiscover != out {
		t.Errorf("Gather: err %v, fabric of %d bytes; want the output", err, len(f.IBNetDiscover))
	}
}

// TestFabricDiscoveryFailures: a command that prints something else, or
// one that never answers (ibsim-run with no simulator, bounded by the
// timeout), is an error wrapping ErrGather that names the command; the
// output is then empty until the next run, and Gather reports the other
// facts with no fabric instead of failing.
func TestFabricDiscoveryFailures(t *testing.T) {
	t.Parallel()
	ibsim.Require(t)
	for _, tc := range []struct {
		name    string
		command []string
		cause   error
	}{
		{"not ibnetdiscover output", []string{"echo", "Switch garbage"}, infiniband.ErrSyntax},
		{"no answer", []string{"env", "-u", "LD_PRELOAD", "IBSIM_SOCKNAME=toposcope-nobody-listens", "ibsim-run", "ibnetdiscover"}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &agent.FabricDiscovery{Command: tc.command, Timeout: 2 * time.Second}
			out, err := d.Output(context.Background())
			if out != "" || !errors.Is(err, agent.ErrGather) || !errors.Is(err, tc.cause) || !strings.Contains(err.Error(), tc.command[0]) {
				t.Errorf("Output = %q, %v; want nothing and ErrGather wrapping %v, naming the command", out, err, tc.cause)
			}
			f, err := (&agent.Gatherer{Fabric: &agent.FabricDiscovery{Command: tc.command, Timeout: 2 * time.Second}}).Gather(context.Background(), "gpu001")
			if err != nil || f.IBNetDiscover != "" || f.Node != "gpu001" {
				t.Errorf("Gather = %+v, %v; want the node's facts with no fabric", f, err)
			}
		})
	}
}
