package simulate

import (
	"cmp"
	"slices"

	"github.com/toposcope/toposcope/placement"
)

// windowUsage is the allocated GPU-seconds each account ran in the last
// fairShareWindow, from the replay's runs: what the fair-share order and
// the toposcope policy's preemption standings both rank by.
type windowUsage struct {
	runs *[]seg    // the replay's runs
	acct []int     // per job, its account's tree index
	gpus []float64 // per job, its GPUs
	free []bool    // per job, unallocated work (charges no budget)
	live []int     // runs of allocated jobs that may still be in the window
	own  []float64
}

func newWindowUsage(tree *placement.Tree, jobs []Job) *windowUsage {
	u := &windowUsage{acct: make([]int, len(jobs)), gpus: make([]float64, len(jobs)), free: make([]bool, len(jobs)),
		own: make([]float64, len(tree.Accounts()))}
	for i, j := range jobs {
		u.acct[i], _ = tree.Lookup(j.Account)
		u.gpus[i] = float64(j.GPUs)
		u.free[i] = j.MinRuntime <= 0
	}
	return u
}

// start records run si of job j.
func (u *windowUsage) start(si int, j *Job) {
	if j.MinRuntime > 0 {
		u.live = append(u.live, si)
	}
}

// at returns each account's usage at t, indexed as the tree's accounts;
// it is valid until the next call, and t must not decrease between calls.
func (u *windowUsage) at(t float64) []float64 {
	clear(u.own)
	from := t - fairShareWindow
	kept := u.live[:0]
	for _, si := range u.live {
		sg := &(*u.runs)[si]
		if sg.end < from {
			continue // out of the window for good: t only grows
		}
		kept = append(kept, si)
		if ran := min(t, sg.end) - max(from, sg.start); ran > 0 {
			u.own[u.acct[sg.job]] += u.gpus[sg.job] * ran
		}
	}
	u.live = kept
	return u.own
}

// fairOrder sorts the queue by Fair Tree standing.
type fairOrder struct {
	tree  *placement.Tree
	usage *windowUsage
	// rank is each account's place by FairShare (0 first), computed at
	// rankAt.
	rank   []int
	rankAt float64
	fresh  bool
}

func newFairOrder(tree *placement.Tree, usage *windowUsage) *fairOrder {
	return &fairOrder{tree: tree, usage: usage, rank: make([]int, len(tree.Accounts()))}
}

// sort orders queue: allocated work before unallocated work (as a QOS
// of higher priority would in Slurm: unallocated work charges no budget
// and runs on what allocated work leaves), each by FairShare, highest
// first, then submit order; the FairShares are those of the last
// priorityCalcPeriod boundary. When they did not change, queue[:sorted]
// is in order already and only the jobs after it are put in place.
func (f *fairOrder) sort(queue []int, sorted int, t float64) {
	acct, free := f.usage.acct, f.usage.free
	less := func(a, b int) int {
		return cmp.Or(compareBool(free[a], free[b]), cmp.Compare(f.rank[acct[a]], f.rank[acct[b]]), cmp.Compare(a, b))
	}
	if !f.fresh || t >= f.rankAt+priorityCalcPeriod {
		f.rerank(t)
		slices.SortFunc(queue, less)
		return
	}
	for i := sorted; i < len(queue); i++ {
		ji := queue[i]
		at, _ := slices.BinarySearchFunc(queue[:i], ji, less)
		copy(queue[at+1:i+1], queue[at:i])
		queue[at] = ji
	}
}

// rerank computes every account's FairShare at t and its place.
func (f *fairOrder) rerank(t float64) {
	fs := f.tree.FairShares(f.usage.at(t))
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(fs[b], fs[a]) })
	for place, a := range order {
		f.rank[a] = place
		if place > 0 && fs[a] == fs[order[place-1]] {
			f.rank[a] = f.rank[order[place-1]] // equals keep submit order
		}
	}
	f.rankAt, f.fresh = t, true
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
