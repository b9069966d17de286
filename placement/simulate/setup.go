package simulate

import (
	"fmt"
	"slices"

	"github.com/toposcope/toposcope/placement"
)

// withinScope defaults o.Within to placement.ScopeLeaf and returns the
// planner's scope for it.
func withinScope(o *Options) (placement.Scope, error) {
	if o.Within == "" {
		o.Within = placement.ScopeLeaf
	}
	switch o.Within {
	case placement.ScopeLeaf, placement.ScopeDomain:
		return o.Within, nil
	case ScopeNone:
		return placement.ScopeNone, nil
	}
	return "", fmt.Errorf("%w: within %q: want leaf, domain or none", ErrScenario, o.Within)
}

// budgetTree returns tree, or an equal share for every account of jobs
// when it is nil, once every account of jobs has a budget in it.
func budgetTree(tree *placement.Tree, jobs []Job) (*placement.Tree, error) {
	accounts := accountsOf(jobs)
	if tree == nil {
		tree = placement.EqualTree(accounts)
	}
	for _, a := range accounts {
		if _, ok := tree.Lookup(a); !ok {
			return nil, fmt.Errorf("%w: account %q of the trace has no budget", ErrScenario, a)
		}
	}
	return tree, nil
}

// capDebug returns jobs with debug work protected at most the planner's
// DebugMinRuntime: a copy if any job is debug work, else jobs.
func capDebug(jobs []Job) []Job {
	if !slices.ContainsFunc(jobs, func(j Job) bool { return j.Debug }) {
		return jobs
	}
	limit := placement.DefaultConfig().DebugMinRuntime.Seconds()
	jobs = slices.Clone(jobs)
	for i := range jobs {
		if jobs[i].Debug {
			jobs[i].MinRuntime = min(jobs[i].MinRuntime, limit)
		}
	}
	return jobs
}

// newPolicy returns the named policy on s. The toposcope policy ranks
// preemption by usage when preempt is set.
func newPolicy(s *state, policy string, tree *placement.Tree, usage *windowUsage, preempt bool) (chooser, error) {
	switch policy {
	case PolicyToposcope:
		var own *windowUsage
		if preempt {
			own = usage
		}
		return newToposcope(s, tree, own)
	case PolicyFirstFit:
		return firstFit{}, nil
	case PolicyBestFit:
		return bestFit{}, nil
	case PolicySlurmTree:
		return slurmTree{}, nil
	}
	return nil, fmt.Errorf("%w: policy %q: want one of %v", ErrScenario, policy, Policies())
}

// shapesOf returns the shape of each job on s, refusing a job the empty
// cluster could not hold.
func shapesOf(s *state, jobs []Job) ([]shape, error) {
	shapes := make([]shape, len(jobs))
	byGPUs := map[int]shape{}
	for i := range jobs {
		sh, ok := byGPUs[jobs[i].GPUs]
		if !ok {
			sh = s.shapeOf(jobs[i].GPUs)
			if s.capacity(s.order, sh.per, true) < sh.pods {
				return nil, fmt.Errorf("%w: job %d asks for %d GPUs; the cluster has %d", ErrScenario, jobs[i].ID, jobs[i].GPUs, s.gpus)
			}
			byGPUs[jobs[i].GPUs] = sh
		}
		shapes[i] = sh
	}
	return shapes, nil
}

// queueOrder defaults o.Order to OrderSubmit and returns the fair-share
// order for OrderFairShare (nil for submit order).
func queueOrder(o *Options, tree *placement.Tree, usage *windowUsage) (*fairOrder, error) {
	switch o.Order {
	case "", OrderSubmit:
		o.Order = OrderSubmit
		return nil, nil
	case OrderFairShare:
		return newFairOrder(tree, usage), nil
	}
	return nil, fmt.Errorf("%w: order %q: want %s or %s", ErrScenario, o.Order, OrderSubmit, OrderFairShare)
}

// configure sets the queue and preemption settings of o on r, with
// queue order order.
func (r *replayer) configure(o Options, order *fairOrder) error {
	r.depth, r.fifo, r.order = o.BackfillDepth, o.FIFO, order
	if r.depth <= 0 {
		r.depth = 500
	}
	switch o.Reserve {
	case "", ReserveCount:
	case ReserveNodes:
		r.concrete = true
	default:
		return fmt.Errorf("%w: reserve %q: want %s or %s", ErrScenario, o.Reserve, ReserveCount, ReserveNodes)
	}
	if o.Preempt {
		r.pre, _ = r.pol.(preempter)
	}
	if o.DefragAfter > 0 && r.name == PolicyToposcope {
		r.defragAfter = o.DefragAfter
	}
	if r.pre != nil || r.defragAfter > 0 {
		cfg := placement.DefaultConfig()
		r.checkpoint, r.protectCap = cfg.CheckpointInterval.Seconds(), cfg.MinRuntimeCap.Seconds()
	}
	return nil
}
