package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/atomicfile"
	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/topology"
)

// ErrReconfigure is wrapped when the reconfigure command fails; the file
// was written, and the next Publish runs the command again.
var ErrReconfigure = errors.New("slurm reconfigure command failed")

// ErrWrite is wrapped when the output file cannot be replaced; the old
// file is left as it was.
var ErrWrite = errors.New("cannot write the Slurm topology file")

// fileMode is the mode of the written file: slurmctld and every node's
// slurmd read it.
const fileMode = 0o644

// Publish renders g and delivers it. When rendering fails nothing is
// written. With Output set, the file is replaced atomically (same
// directory, fsync, rename, fsync of the directory) unless it already holds
// the same bytes; then, when Reconfigure is set and the file changed (or a
// previous reconfigure failed), ReconfigureCommand is run and its failure
// is returned with its exit status. Without Output, the document goes
// to Deps.Stdout.
func (e *Engine) Publish(ctx context.Context, g *topology.Graph) error {
	data, plan, err := e.render(ctx, g)
	if err != nil {
		return err // the caller reports it (the CLI, the service's log): once
	}
	log := e.deps.Logger.With("plugin", e.cfg.Plugin, "slurmVersion", e.version.String())
	if w := e.loweredBase(plan); w != "" {
		log.WarnContext(ctx, w)
	}
	var cov engines.Coverage
	if plan != nil {
		cov = blockCoverageReport(g, plan, nil, e.version) // Coverage, from the plan just rendered
	} else {
		cov = e.Coverage(g)
	}
	if len(cov.Uncovered) > 0 {
		log.WarnContext(ctx, "slurm: nodes left out of the topology", "count", len(cov.Uncovered), "reason", cov.Reason, "first", cov.Uncovered[0])
	}
	if un := g.NodesWithoutSwitch(); len(un) > 0 && e.cfg.Plugin == PluginTree && e.cfg.UnplacedSwitch != "" {
		log.WarnContext(ctx, "slurm: nodes with no place in the fabric are under switch "+e.cfg.UnplacedSwitch+" (usable, no locality)",
			"count", len(un), "first", un[0])
	}
	if e.cfg.Output == "" {
		if _, err := e.deps.Stdout.Write(data); err != nil {
			return fmt.Errorf("slurm: write to stdout: %w: %w", ErrWrite, err)
		}
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	changed, err := atomicfile.Write(e.cfg.Output, data, fileMode)
	if err != nil {
		log.ErrorContext(ctx, "slurm: cannot replace the topology file", "output", e.cfg.Output, "error", err)
		return fmt.Errorf("slurm: %s: %w: %w", e.cfg.Output, ErrWrite, err)
	}
	if changed {
		log.InfoContext(ctx, "slurm: topology file written", "output", e.cfg.Output, "bytes", len(data))
		e.reconfigurePending = e.cfg.Reconfigure
	} else {
		log.DebugContext(ctx, "slurm: topology file unchanged", "output", e.cfg.Output)
	}
	if !e.reconfigurePending {
		return nil
	}
	if err := e.reconfigure(ctx); err != nil {
		attrs := []any{"command", e.cfg.ReconfigureCommand, "error", err}
		if ex, ok := bounded.Excerpt(err); ok {
			attrs = append(attrs, "stderr", ex) // the log is the operator's; the error (which may reach an API caller) never quotes it
		}
		log.ErrorContext(ctx, "slurm: reconfigure failed; slurmctld may still run the old topology", attrs...)
		return err
	}
	e.reconfigurePending = false
	log.InfoContext(ctx, "slurm: slurmctld reconfigured", "command", e.cfg.ReconfigureCommand)
	return nil
}

// reconfigureOutput caps what ReconfigureCommand may print on standard
// output, which is never quoted.
const reconfigureOutput = 1 << 20

// reconfigure runs ReconfigureCommand, directly (no shell). A failure says
// how it ended, never what it printed; the end of its standard error
// goes to the log (see bounded.Excerpt).
func (e *Engine) reconfigure(ctx context.Context) error {
	argv := e.cfg.ReconfigureCommand
	if _, err := bounded.Run(ctx, argv, reconfigureOutput); err != nil {
		return fmt.Errorf("slurm: %s: %w: %w", strings.Join(argv, " "), ErrReconfigure, err)
	}
	return nil
}

// loweredBase says, for an inferred topology/block base block size below
// the size of most domains in p, the plan of the file (nil for the other
// plugins), why and what to do; "" otherwise. A few small domains
// otherwise quietly shrink every block Slurm allocates by.
func (e *Engine) loweredBase(p *blockPlan) string {
	if p == nil || len(e.cfg.BlockSizes) > 0 || p.nominal == 0 {
		return ""
	}
	return fmt.Sprintf("slurm: base block size %d nodes, not the %d of most domains: %s only %d "+
		"(Slurm %s refuses a block smaller than the base); set smallBlocks: drop to keep %d and leave %s out, "+
		"or target Slurm 25.05 or later, which accepts smaller blocks",
		p.base, p.nominal, smallDomains(p.small), p.base, e.version, p.nominal, pronoun(len(p.small)))
}

// smallDomains names the small domains: "domain X has" or "5 domains (X,
// Y, Z, and 2 more) have".
func smallDomains(names []string) string {
	if len(names) == 1 {
		return "domain " + names[0] + " has"
	}
	return plural(len(names), "domain") + " (" + abbreviate(names, 3) + ") have"
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
