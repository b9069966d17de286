package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/atomicfile"
	"github.com/toposcope/toposcope/internal/progress"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/simulate"
)

// simulateOptions are the flags of toposcope simulate.
type simulateOptions struct {
	model, trace, writeTrace, budgets, within, order, scenario, reserve, html string
	policies                                                                  []string
	synth                                                                     simulate.SyntheticOptions
	fifo, preempt                                                             bool
	out                                                                       *outputFlags
	format                                                                    string
	defragAfter                                                               time.Duration
	progressOut                                                               func() io.Writer
	// changed reports whether a flag was given.
	changed func(name string) bool
}

func newSimulateCmd(env *Env) *cobra.Command {
	o := &simulateOptions{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Replay a job trace on a simulation model under several placement policies and compare them",
		Long: `Replays a CSV job trace (` + simulate.Header + `), or a synthetic
heavy-tailed one, on a model under each policy and prints, per policy, the
mean leaf span and lowest-common-switch level of multi-node jobs, p50/p90
wait, the wait of the largest jobs, GPU occupancy by useful work, useful
GPU-hours (and, when preempting, the redone ones: work a preemption threw
away and that ran again), delivered/owed GPU-hours per account, and the
capped ratio Σ min(delivered, owed) / Σ owed (comparable with Ai2's
published 98%). See docs/placement.md.`,
		Example: `  toposcope simulate --model fat-tree-512 --jobs 5000 --max-gpus 1024 --interarrival 45 --seed 1
  toposcope simulate --model nvl72 --within domain --trace jobs.csv -o json
  toposcope simulate --scenario venus --preempt --seed 2
  toposcope simulate --model fat-tree-512 --load 0.9 --html simulate.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.changed = cmd.Flags().Changed
			format, err := o.out.resolve(cmd)
			if err != nil {
				return err
			}
			o.format = format
			return runSimulate(cmd.Context(), env, o)
		},
	}
	o.progressOut = progressFlag(cmd, env)
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "bundled scenario ("+strings.Join(simulate.Scenarios(), ", ")+") or scenario file: its model, budgets, order and synthetic workload (--seed, --model and --order still apply)")
	f.StringVar(&o.model, "model", "fat-tree-512", "bundled model name or model file")
	f.StringVar(&o.trace, "trace", "", "CSV job trace (default: a synthetic trace from the flags below)")
	f.StringVar(&o.writeTrace, "write-trace", "", "also write the replayed trace to this CSV file")
	f.StringVar(&o.html, "html", "", "also write the comparison as a self-contained HTML file: the numbers beside SVG charts of the wait distribution, the largest jobs' waits, occupancy over time and each account's delivered/owed over time")
	f.IntVar(&o.synth.Jobs, "jobs", 5000, "synthetic trace: number of jobs")
	f.Uint64Var(&o.synth.Seed, "seed", 1, "synthetic trace: random seed")
	f.IntVar(&o.synth.Accounts, "accounts", 4, "synthetic trace: number of accounts")
	f.IntVar(&o.synth.MaxGPUs, "max-gpus", 256, "synthetic trace: largest job (sizes are powers of two)")
	f.Float64Var(&o.synth.Alpha, "alpha", 1.2, "synthetic trace: Zipf exponent of job sizes")
	f.Float64Var(&o.synth.MeanInterarrival, "interarrival", 300, "synthetic trace: mean seconds between submits")
	f.Float64Var(&o.synth.MeanDuration, "mean-duration", 3600, "synthetic trace: mean runtime in seconds")
	f.Float64Var(&o.synth.DebugShare, "debug-share", 0, "synthetic trace: share of jobs that are debug work (1-8 GPUs, 1-30 min, protected up to 15 min; allowed with --scenario)")
	f.Float64Var(&o.synth.Load, "load", 0, "synthetic trace: offered load as a fraction of the model's GPUs (sets the mean gap between submits; overrides --interarrival)")
	f.StringSliceVar(&o.policies, "policies", simulate.Policies(), "policies to compare")
	f.StringVar(&o.within, "within", "leaf", "jobs that fit one leaf (or NVLink domain) must start in one: leaf, domain or none")
	f.BoolVar(&o.fifo, "fifo", false, "no backfill: the oldest waiting job blocks the queue")
	f.StringVar(&o.order, "order", simulate.OrderSubmit, "queue order for every policy: submit, or fairshare (Fair Tree standing, recomputed every 5 simulated minutes)")
	f.BoolVar(&o.preempt, "preempt", false, "the toposcope policy preempts unallocated or over-served work past its min runtime for allocated jobs (the baselines never preempt)")
	f.StringVar(&o.reserve, "reserve", simulate.ReserveCount, "what backfill reserves for the oldest waiting job, for every policy: count (GPUs; a later job must end by its start) or nodes (the nodes it will start on; a later job may run past its start elsewhere)")
	f.DurationVar(&o.defragAfter, "defrag-after", 0, "the toposcope policy frees whole leaves for the head job once it has waited this long, preempting resumable work past its min runtime where the least is lost, when that loss is at most a quarter of the GPU-time the job gains by not waiting for its reservation (0: never)")
	f.StringVar(&o.budgets, "budgets", "", "budgets YAML for owed GPU-hours (default: equal shares)")
	o.out = addOutputFlags(cmd, " (wide is the tables, which have every column)", outTable, outWide, outJSON, outYAML)
	return cmd
}

func runSimulate(ctx context.Context, env *Env, o *simulateOptions) error {
	if o.defragAfter < 0 {
		return fmt.Errorf("%w: --defrag-after must not be negative (0 turns it off)", ErrUsage)
	}
	if o.synth.Accounts < 1 {
		return fmt.Errorf("%w: --accounts must be at least 1 (got %d)", ErrUsage, o.synth.Accounts)
	}
	if o.trace != "" && o.changed != nil && o.changed("debug-share") {
		return fmt.Errorf("%w: --debug-share shapes a synthetic trace; with --trace, mark debug work in its debug column", ErrUsage)
	}
	sc, err := o.loadScenario()
	if err != nil {
		return err
	}
	g, err := modelGraph(ctx, env, o.model)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes() {
		o.synth.CapacityGPUs += n.GPUs
	}
	if sc != nil {
		debug := o.synth.DebugShare
		o.synth = sc.Synthetic(o.synth.Seed, o.synth.CapacityGPUs)
		if o.changed != nil && o.changed("debug-share") {
			o.synth.DebugShare = debug
		}
	}
	jobs, err := o.jobs()
	if err != nil {
		return err
	}
	if o.writeTrace != "" {
		var buf bytes.Buffer
		if err := simulate.WriteTrace(&buf, jobs); err != nil {
			return err
		}
		if _, err := atomicfile.Write(o.writeTrace, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	opts := simulate.Options{Within: placement.Scope(o.within), FIFO: o.fifo, Order: o.order, Preempt: o.preempt, Reserve: o.reserve,
		DefragAfter: o.defragAfter.Seconds()}
	if o.html != "" {
		opts.Samples = htmlSamples
	}
	var budgets *placement.Budgets
	switch {
	case sc != nil:
		budgets = sc.Budgets()
	case o.budgets != "":
		if budgets, err = readYAML(o.budgets, placement.ParseBudgets); err != nil {
			return err
		}
	}
	if budgets != nil {
		if opts.Tree, err = placement.NewTree(budgets); err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
	}
	var reports []*simulate.Report
	for _, p := range o.policies {
		start := time.Now()
		line := progress.New(o.progressOut(), "simulate "+strings.TrimSpace(p), len(jobs), nil)
		opts.Progress = func(started, _ int) { line.Set(started) }
		r, err := simulate.Run(g, jobs, strings.TrimSpace(p), opts)
		line.Finish()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		el := time.Since(start)
		fmt.Fprintf(env.Stderr, "%s: %d events in %s (%.0f events/s)\n", r.Policy, r.Events, el.Round(time.Millisecond), float64(r.Events)/el.Seconds())
		reports = append(reports, r)
	}
	if o.html != "" {
		if err := o.writeHTML(reports, len(jobs), sc != nil); err != nil {
			return err
		}
	}
	if o.format == outJSON || o.format == outYAML {
		return writeData(env.Stdout, o.format, map[string]any{"policies": reports})
	}
	return simulate.WriteTable(env.Stdout, reports)
}

// htmlSamples is how many points over time --html plots per policy.
const htmlSamples = 100

// writeHTML writes the reports' page to --html.
func (o *simulateOptions) writeHTML(reports []*simulate.Report, jobs int, scenario bool) error {
	source := fmt.Sprintf("a synthetic trace (seed %d)", o.synth.Seed)
	switch {
	case scenario:
		source = fmt.Sprintf("scenario %s (seed %d)", o.scenario, o.synth.Seed)
	case o.trace != "":
		source = "trace " + o.trace
	}
	scope := "jobs that fit one " + o.within + " start in one"
	if o.within == string(simulate.ScopeNone) {
		scope = "no compactness constraint"
	}
	backfill := "backfill reserving by " + o.reserve
	if o.fifo {
		backfill = "no backfill"
	}
	about := fmt.Sprintf("%d jobs from %s on model %s; %s; queue order %s, %s", jobs, source, o.model, scope, o.order, backfill)
	if o.preempt {
		about += "; toposcope preempts"
	}
	if o.defragAfter > 0 {
		about += "; toposcope defragments after " + o.defragAfter.String()
	}
	var buf bytes.Buffer
	if err := simulate.WriteHTML(&buf, simulate.Page{Title: "toposcope simulate: " + o.model, About: about + ".", Reports: reports}); err != nil {
		return err
	}
	if _, err := atomicfile.Write(o.html, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return nil
}

// jobs reads the trace, or generates the synthetic one.
func (o *simulateOptions) jobs() ([]simulate.Job, error) {
	if o.trace == "" {
		jobs, err := simulate.Synthetic(o.synth)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		return jobs, nil
	}
	f, err := os.Open(o.trace)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	defer func() { _ = f.Close() }()
	jobs, err := simulate.ParseTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUsage, o.trace, err)
	}
	return jobs, nil
}

// scenarioSets are the flags a scenario sets and that cannot be given
// with it.
var scenarioSets = []string{"trace", "budgets", "jobs", "accounts", "max-gpus", "alpha", "interarrival", "mean-duration", "load"}

// loadScenario reads --scenario, if given, and takes its model and order
// unless --model or --order was given.
func (o *simulateOptions) loadScenario() (*simulate.Scenario, error) {
	if o.scenario == "" {
		return nil, nil
	}
	for _, name := range scenarioSets {
		if o.changed != nil && o.changed(name) {
			return nil, fmt.Errorf("%w: --%s cannot be given with --scenario, which sets the workload and the budgets", ErrUsage, name)
		}
	}
	sc, err := simulate.LoadScenario(o.scenario)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if o.changed == nil || !o.changed("model") {
		o.model = sc.Model
	}
	if o.changed == nil || !o.changed("order") {
		o.order = sc.Order
	}
	return sc, nil
}
