package simulate

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
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
	// Progress, if set, is called after each event time with the number
	// of jobs started so far and the number of jobs.
	Progress func(started, total int)
}

// Queue orders (Options.Order).
const (
	// OrderSubmit tries queued jobs in submit order.
	OrderSubmit = "submit"
	// OrderFairShare tries them by their account's Fair Tree FairShare,
	// highest first (submit order among equals), recomputed at every
	// event from the allocated GPU-seconds run so far in the last 7 days.
	OrderFairShare = "fairshare"
)

// fairShareWindow is the usage window of OrderFairShare.
const fairShareWindow = 7 * 24 * 3600.0

// ScopeNone is Options.Within for no constraint at all.
const ScopeNone placement.Scope = "none"

// epochBase is the wall-clock time of simulated second 0.
var epochBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func epoch(sec float64) time.Time { return epochBase.Add(secs(sec)) }

func secs(sec float64) time.Duration { return time.Duration(sec * float64(time.Second)) }

// tracker is a policy that follows starts and finishes.
type tracker interface {
	started(s *state, j *Job, takes []take, per int, now float64)
	finished(j *Job)
}

// running is a started job, ordered by end time in a heap.
type running struct {
	end   float64
	job   int
	takes []take
	per   int
}

type runHeap []running

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	return h[i].end < h[j].end || h[i].end == h[j].end && h[i].job < h[j].job
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(running)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// outcome is what happened to one job.
type outcome struct {
	start         float64
	nodes, leaves int
	lca           int
}

// Run replays jobs (in submit order, as ParseTrace returns them) on g
// under one policy and reports the result.
func Run(g *topology.Graph, jobs []Job, policy string, o Options) (*Report, error) {
	if o.Within == "" {
		o.Within = placement.ScopeLeaf
	}
	within := o.Within
	switch within {
	case placement.ScopeLeaf, placement.ScopeDomain:
	case ScopeNone:
		within = placement.ScopeNone
	default:
		return nil, fmt.Errorf("%w: within %q: want leaf, domain or none", ErrScenario, o.Within)
	}
	s, err := newState(g, within)
	if err != nil {
		return nil, err
	}
	accounts := accountsOf(jobs)
	tree := o.Tree
	if tree == nil {
		tree = placement.EqualTree(accounts)
	}
	for _, a := range accounts {
		if _, ok := tree.Lookup(a); !ok {
			return nil, fmt.Errorf("%w: account %q of the trace has no budget", ErrScenario, a)
		}
	}
	var pol chooser
	switch policy {
	case PolicyToposcope:
		if pol, err = newToposcope(s, accounts); err != nil {
			return nil, err
		}
	case PolicyFirstFit:
		pol = firstFit{}
	case PolicyBestFit:
		pol = bestFit{}
	case PolicySlurmTree:
		pol = slurmTree{}
	default:
		return nil, fmt.Errorf("%w: policy %q: want one of %v", ErrScenario, policy, Policies())
	}
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
	if o.BackfillDepth <= 0 {
		o.BackfillDepth = 500
	}
	var order *fairOrder
	switch o.Order {
	case "", OrderSubmit:
		o.Order = OrderSubmit
	case OrderFairShare:
		order = newFairOrder(tree, jobs)
	default:
		return nil, fmt.Errorf("%w: order %q: want %s or %s", ErrScenario, o.Order, OrderSubmit, OrderFairShare)
	}
	out, idle, err := replay(s, jobs, shapes, pol, policy, o.BackfillDepth, o.FIFO, order, o.Progress)
	if err != nil {
		return nil, err
	}
	r := report(s, jobs, out, idle, policy, tree)
	r.Order = o.Order
	return r, nil
}

// fairOrder sorts the queue by Fair Tree standing.
type fairOrder struct {
	tree    *placement.Tree
	acct    []int // per job, its account's tree index
	started []int // started allocated jobs
	own     []float64
}

func newFairOrder(tree *placement.Tree, jobs []Job) *fairOrder {
	f := &fairOrder{tree: tree, acct: make([]int, len(jobs)), own: make([]float64, len(tree.Accounts()))}
	for i, j := range jobs {
		f.acct[i], _ = tree.Lookup(j.Account)
	}
	return f
}

// start records a started job.
func (f *fairOrder) start(ji int, jobs []Job) {
	if jobs[ji].MinRuntime > 0 {
		f.started = append(f.started, ji)
	}
}

// sort orders queue by FairShare at t, highest first, then submit order.
func (f *fairOrder) sort(queue []int, jobs []Job, out []outcome, t float64) {
	if len(queue) < 2 {
		return
	}
	clear(f.own)
	from := t - fairShareWindow
	for _, ji := range f.started {
		j := &jobs[ji]
		if ran := min(t, out[ji].start+j.Duration) - max(from, out[ji].start); ran > 0 {
			f.own[f.acct[ji]] += float64(j.GPUs) * ran
		}
	}
	fs := f.tree.FairShares(f.own)
	slices.SortStableFunc(queue, func(a, b int) int {
		return cmp.Or(cmp.Compare(fs[f.acct[b]], fs[f.acct[a]]), cmp.Compare(a, b))
	})
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

// replay is the event loop: at each event time the finishes, then the
// submits, then the first depth queued jobs in submit order, each
// started if the policy finds it room (with fifo, until one is not).
func replay(s *state, jobs []Job, shapes []shape, pol chooser, name string, depth int, fifo bool, order *fairOrder,
	progress func(int, int)) ([]outcome, idleGPUs, error) {
	out := make([]outcome, len(jobs))
	tr, _ := pol.(tracker)
	h := &runHeap{}
	var queue []int
	next, events := 0, 0
	var idle idleGPUs
	w0, w1 := 0.0, 0.0
	if len(jobs) > 0 {
		w0, w1 = jobs[0].Submit, jobs[len(jobs)-1].Submit
		idle.lastT = w0
	}
	for next < len(jobs) || len(queue) > 0 {
		t := math.Inf(1)
		if next < len(jobs) {
			t = jobs[next].Submit
		}
		if h.Len() > 0 {
			t = min(t, (*h)[0].end)
		}
		if math.IsInf(t, 1) {
			j := jobs[queue[0]]
			return nil, idle, fmt.Errorf("%w: policy %s cannot place job %d (%d GPUs) on the idle cluster", ErrScenario, name, j.ID, j.GPUs)
		}
		idle.advance(t, w0, w1)
		for h.Len() > 0 && (*h)[0].end <= t {
			r := heap.Pop(h).(running)
			if err := s.apply(r.takes, r.per, -1); err != nil {
				return nil, idle, err
			}
			if tr != nil {
				tr.finished(&jobs[r.job])
			}
			events++
		}
		for next < len(jobs) && jobs[next].Submit <= t {
			queue = append(queue, next)
			next++
			events++
		}
		if order != nil {
			order.sort(queue, jobs, out, t)
		}
		kept := queue[:0]
		shadow, reserved, known := math.Inf(1), -1, false
		for qi, ji := range queue {
			if qi >= depth {
				kept = append(kept, queue[qi:]...)
				break
			}
			j, sh := &jobs[ji], shapes[ji]
			var takes []take
			fits := s.fits(sh)
			if fits && reserved >= 0 {
				if !known {
					shadow, known = s.shadow(*h, shapes[reserved]), true
				}
				fits = t+j.Duration <= shadow // else it would delay the oldest waiting job
			}
			if fits {
				var err error
				if takes, err = pol.choose(s, j, sh, t); err != nil {
					return nil, idle, err
				}
			}
			if takes == nil && fifo {
				kept = append(kept, queue[qi:]...)
				break
			}
			if takes == nil {
				kept = append(kept, ji)
				if reserved < 0 {
					reserved = ji
				}
				continue
			}
			if err := s.check(takes, sh, name, j.ID); err != nil {
				return nil, idle, err
			}
			if err := s.apply(takes, sh.per, 1); err != nil {
				return nil, idle, err
			}
			if tr != nil {
				tr.started(s, j, takes, sh.per, t)
			}
			o := outcome{start: t, nodes: len(takes)}
			o.lca, o.leaves = s.lca(takes)
			out[ji] = o
			if order != nil {
				order.start(ji, jobs)
			}
			heap.Push(h, running{end: t + j.Duration, job: ji, takes: takes, per: sh.per})
		}
		queue = kept
		idle.lastPart, idle.lastBlock = s.partFree, 0
		if len(queue) > 0 && jobs[queue[0]].GPUs <= s.free {
			idle.lastBlock = s.free // the head fits by count, yet waits
		}
		if progress != nil {
			progress(next-len(queue), len(jobs))
		}
	}
	idle.advance(w1, w0, w1)
	idle.events = events + h.Len() // the finishes still to come change nothing more
	return out, idle, nil
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
