package simulate

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/topology"
)

// ErrScenario is wrapped when a trace cannot be replayed on a model: an
// unknown policy, a job larger than the cluster, an account without a
// budget.
var ErrScenario = errors.New("invalid scenario")

// Options are the replay settings shared by every policy.
type Options struct {
	// Within is the compactness scope (default placement.ScopeLeaf):
	// a job that one leaf (or NVLink domain) of the empty cluster can
	// hold must start inside one, as with Slurm's --switches=1 or
	// Kueue's required topology; bigger jobs go anywhere. "none" turns
	// the constraint off.
	Within placement.Scope
	// FIFO turns backfill off: the first queued job that does not fit
	// blocks every job behind it. By default the queue is backfilled
	// EASY-style: the oldest job that does not fit gets a reservation at
	// the time enough GPUs free up (by count, as running jobs end), and a
	// later job starts now if it fits and ends by then. The first
	// BackfillDepth queued jobs are tried, as Slurm's bf_max_job_test
	// bounds its backfill.
	FIFO bool
	// BackfillDepth is how many queued jobs are tried at each event
	// (default 500).
	BackfillDepth int
	// Tree is the budget tree for owed and delivered GPU-hours and for
	// the fair-share order; nil gives every account of the trace an
	// equal share.
	Tree *placement.Tree
	// Order is the queue order every policy gets: OrderSubmit (default)
	// or OrderFairShare.
	Order string
	// Preempt lets the toposcope policy preempt running work for an
	// allocated job that finds no free room, as the planner ranks it:
	// unallocated work, or work past its min runtime whose account
	// stands below the job's, in proportion to the job
	// (placement.Config.MaxVictimRatio). Preempted work is queued again;
	// resumable work resumes from its last checkpoint
	// (placement.Config.CheckpointInterval), other work restarts. While
	// allocated work waits, the end of a running job's protection is an
	// event of its own. The baseline policies never preempt.
	Preempt bool
	// Reserve is how backfill holds room for the oldest waiting job:
	// ReserveCount (default) or ReserveNodes. Every policy gets it.
	Reserve string
	// DefragAfter, when positive, is how many seconds the head of the
	// queue may wait for whole nodes before the toposcope policy frees
	// whole leaves for it: it preempts resumable work smaller than the
	// job and past its min runtime (capped as the planner caps it), of
	// any account, on the leaves that lose the fewest GPU-seconds (since
	// each job's last checkpoint) until they hold the job, when the job
	// then fits and that loss is at most a quarter of the GPU-time the
	// job gains by starting now instead of at its EASY reservation. The
	// baselines never defragment.
	DefragAfter float64
	// Progress, if set, is called after each event time with the number
	// of jobs started so far and the number of jobs.
	Progress func(started, total int)
	// Samples, when positive, makes Report.Series hold the figures over
	// time at that many points (at most MaxSamples); 0 records none.
	Samples int
}

// Queue orders (Options.Order).
const (
	// OrderSubmit tries queued jobs in submit order.
	OrderSubmit = "submit"
	// OrderFairShare tries them by their account's Fair Tree FairShare,
	// highest first (submit order among equals), from the allocated
	// GPU-seconds run in the last 7 days, recomputed every
	// priorityCalcPeriod.
	OrderFairShare = "fairshare"
)

// maxReplaySeconds bounds a replay's span: well within time.Duration
// (292 years) and the owed GPU-hours' 32-bit seconds (68 years), which
// jobs of at most MaxTraceSeconds each could still pass if they ran one
// after another for long enough.
const maxReplaySeconds = 50 * 365 * 24 * 3600.0

// fairShareWindow is the usage window of OrderFairShare.
const fairShareWindow = 7 * 24 * 3600.0

// priorityCalcPeriod is how often, in simulated seconds, the fair-share
// order and the preemption standings are recomputed: Slurm's
// PriorityCalcPeriod default, 5 minutes.
const priorityCalcPeriod = 300.0

// ScopeNone is Options.Within for no constraint at all.
const ScopeNone placement.Scope = "none"

// epochBase is the wall-clock time of simulated second 0.
var epochBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func epoch(sec float64) time.Time { return epochBase.Add(secs(sec)) }

func secs(sec float64) time.Duration { return time.Duration(sec * float64(time.Second)) }

// tracker is a policy that follows starts and ends (finished or
// preempted).
type tracker interface {
	started(s *state, j *Job, takes []take, per int, now float64)
	finished(j *Job)
}

// preempter is a policy that may preempt running work for a job it
// finds no free room for: it returns the takes and the jobs (IDs) to
// preempt first, or nil takes.
type preempter interface {
	preempt(s *state, j *Job, sh shape, now float64) ([]take, []int, error)
}

// outcome is what happened to one job: its first start, where it last
// ran, and how often it was preempted.
type outcome struct {
	started       bool
	start         float64
	nodes, leaves int
	lca           int
	preempted     int
}

// Run replays jobs (in submit order, as ParseTrace returns them) on g
// under one policy and reports the result.
func Run(g *topology.Graph, jobs []Job, policy string, o Options) (*Report, error) {
	within, err := withinScope(&o)
	if err != nil {
		return nil, err
	}
	if err := checkJobs(jobs); err != nil {
		return nil, err
	}
	s, err := newState(g, within)
	if err != nil {
		return nil, err
	}
	tree, err := budgetTree(o.Tree, jobs)
	if err != nil {
		return nil, err
	}
	jobs = capDebug(jobs)
	var usage *windowUsage // what the fair-share order and preemption rank by
	if o.Order == OrderFairShare || o.Preempt {
		usage = newWindowUsage(tree, jobs)
	}
	pol, err := newPolicy(s, policy, tree, usage, o.Preempt)
	if err != nil {
		return nil, err
	}
	shapes, err := shapesOf(s, jobs)
	if err != nil {
		return nil, err
	}
	order, err := queueOrder(&o, tree, usage)
	if err != nil {
		return nil, err
	}
	rp, err := newReplayer(s, jobs, shapes, pol, policy, usage)
	if err != nil {
		return nil, err
	}
	if err := rp.configure(o, order); err != nil {
		return nil, err
	}
	if err := rp.run(o.Progress); err != nil {
		return nil, err
	}
	r := report(s, rp, policy, tree)
	r.Order, r.Preempt, r.DefragAfterSeconds = o.Order, rp.pre != nil, rp.defragAfter
	if o.Samples > 0 {
		r.Series = series(s, rp, tree, o.Samples)
	}
	return r, nil
}

// idleGPUs integrates, over the arrival window (first to last submit),
// the free GPUs on partly used nodes and the free GPUs while the head of
// the queue fits by count but has not started; events counts the events.
type idleGPUs struct {
	events              int
	partSec, blockedSec float64
	lastT               float64
	lastPart, lastBlock int
}

// advance adds the last sample's GPUs over [lastT, t] ∩ [w0, w1].
func (d *idleGPUs) advance(t, w0, w1 float64) {
	if lo, hi := max(d.lastT, w0), min(t, w1); hi > lo {
		d.partSec += float64(d.lastPart) * (hi - lo)
		d.blockedSec += float64(d.lastBlock) * (hi - lo)
	}
	d.lastT = t
}

// check rejects takes that do not add up to the job or, for a
// constrained job, leave its group: a policy bug, never a wait.
func (s *state) check(takes []take, sh shape, policy string, id int) error {
	pods, grp := 0, -2
	for _, t := range takes {
		pods += t.pods
		if sh.constrained {
			g := s.groupOf[t.node]
			if grp == -2 {
				grp = g
			}
			if g < 0 || g != grp {
				return fmt.Errorf("simulate: policy %s put constrained job %d across groups", policy, id)
			}
		}
	}
	if pods != sh.pods {
		return fmt.Errorf("simulate: policy %s gave job %d %d pods, want %d", policy, id, pods, sh.pods)
	}
	return nil
}

// checkJobs refuses what ParseTrace refuses in jobs built another way
// (Synthetic, a caller's own): no jobs, or a time out of range, which
// the replay could not represent.
func checkJobs(jobs []Job) error {
	if len(jobs) == 0 {
		return fmt.Errorf("%w: no jobs to replay", ErrScenario)
	}
	for _, j := range jobs {
		for _, f := range []struct {
			name string
			v    float64
		}{{"submit", j.Submit}, {"duration", j.Duration}, {"min runtime", j.MinRuntime}} {
			if !(f.v >= 0 && f.v <= MaxTraceSeconds) {
				return fmt.Errorf("%w: job %d: %s %g s is not in [0, %.0f] (ten years)", ErrScenario, j.ID, f.name, f.v, MaxTraceSeconds)
			}
		}
	}
	return nil
}

func accountsOf(jobs []Job) []string {
	var out []string
	seen := map[string]bool{}
	for _, j := range jobs {
		if !seen[j.Account] {
			seen[j.Account] = true
			out = append(out, j.Account)
		}
	}
	slices.Sort(out)
	return out
}
