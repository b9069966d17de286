package agent

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers/infiniband"
)

// Defaults of FabricDiscovery.
const (
	// DefaultFabricInterval is how often ibnetdiscover runs at most.
	DefaultFabricInterval = time.Hour
	// DefaultFabricTimeout bounds one run of ibnetdiscover.
	DefaultFabricTimeout = 5 * time.Minute
)

// FabricDiscovery runs the real ibnetdiscover on the node, at most once
// every Interval, and keeps the last run's output for the reports in
// between (none when that run failed). The command comes from the agent's
// own configuration (its flags), never from a request. It is safe for
// concurrent use.
type FabricDiscovery struct {
	// Command is the ibnetdiscover command (e.g. ["ibnetdiscover"]); its
	// standard output is capped at providers.MaxSourceBytes.
	Command config.Command
	// Interval is the least time between two runs (DefaultFabricInterval
	// when 0).
	Interval time.Duration
	// Timeout bounds one run (DefaultFabricTimeout when 0).
	Timeout time.Duration
	// Run runs Command (infiniband.ExecRunner when nil).
	Run infiniband.Runner
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	lastRun time.Time
	output  string
}

// Output returns the fabric: ibnetdiscover's output, from a new run when
// the last run was Interval ago or more, else that run's output. A run
// that fails, or prints what is not ibnetdiscover output (it is parsed),
// is an error wrapping ErrGather, and until the next run Output returns
// "" (no stale fabric): a failing command is rerun only after Interval.
func (d *FabricDiscovery) Output(ctx context.Context) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	interval := d.Interval
	if interval <= 0 {
		interval = DefaultFabricInterval
	}
	if !d.lastRun.IsZero() && now().Sub(d.lastRun) < interval {
		return d.output, nil
	}
	d.lastRun = now()
	out, err := d.run(ctx)
	d.output = out
	return out, err
}

func (d *FabricDiscovery) run(ctx context.Context) (string, error) {
	if len(d.Command) == 0 {
		return "", fmt.Errorf("%w: ibnetdiscover: no command", ErrGather)
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultFabricTimeout
	}
	run := d.Run
	if run == nil {
		run = infiniband.ExecRunner{}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := fmt.Sprintf("ibnetdiscover command %q", d.Command.String())
	out, err := run.Run(ctx, d.Command)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrGather, name, err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "", fmt.Errorf("%w: %s printed nothing", ErrGather, name)
	}
	if _, err := infiniband.Parse(bytes.NewReader(out), name); err != nil {
		return "", fmt.Errorf("%w: %w", ErrGather, err)
	}
	return string(out), nil
}
