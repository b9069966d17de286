package simulate

import (
	"cmp"
	"math"
	"slices"
)

// defragLossRatio bounds what a defragmentation may lose: the victims'
// GPU-time since their last checkpoint, at most this share of the
// GPU-time the head job gains by starting now instead of at its
// reservation. At 1 (loss no more than the gain) defragmentation stopped
// 139 jobs per run on a 768-node fat tree at load 1.2 and gained
// nothing; at 0.25 it stopped 52, lost 340 GPU-hours and shortened the
// largest jobs' wait by 1.7% (docs/placement.md).
const defragLossRatio = 0.25

// leafCost is what freeing one leaf switch would cost: its GPUs, the
// GPU-seconds its running jobs would lose and those jobs; freeable is
// false when a job on it may not be preempted.
type leafCost struct {
	gpus     int
	lost     float64
	victims  []int
	freeable bool
}

// defragment frees whole leaves for job ji, the head of the queue, once
// it has waited defragAfter and if it needs at least a leaf: it preempts
// resumable work smaller than the job and past its min runtime (or
// unallocated) on the leaves cheapest to free, in GPU-seconds lost, until
// those leaves hold the job, and starts the job if the policy then finds
// it room. It reports whether the job started. A job smaller than a leaf,
// that no set of freeable leaves holds, or for which the loss would be
// out of proportion to its wait (defragPays) is left to wait; in that
// last case it also returns the job's shadow time, which defragPays
// computed on the state as it stays, and NaN otherwise.
func (r *replayer) defragment(ji int, t float64) (started bool, shadow float64, err error) {
	j, sh := &r.jobs[ji], r.shapes[ji]
	if !sh.wholeNodes || t-j.Submit < r.defragAfter {
		return false, math.NaN(), nil
	}
	costs, smallest := r.leafGPUs()
	if j.GPUs < smallest {
		return false, math.NaN(), nil // not a job that needs a whole leaf
	}
	r.chargeLeaves(costs, j, t)
	victims, have := r.cheapestLeaves(costs, j, sh)
	if have < j.GPUs || len(victims) == 0 || !r.fitsWithout(victims, sh) {
		return false, math.NaN(), nil
	}
	if pays, shadow := r.defragPays(j, sh, victims, t); !pays {
		return false, shadow, nil
	}
	started, err = r.startFreed(ji, victims, t)
	return started, math.NaN(), err
}

// leafGPUs returns, per switch, a leaf's GPUs as a freeable leafCost,
// and the fewest GPUs of a leaf.
func (r *replayer) leafGPUs() ([]leafCost, int) {
	s := r.s
	costs := make([]leafCost, len(s.switches))
	smallest := math.MaxInt
	for _, l := range s.leaves {
		costs[l].freeable = true
		for _, n := range s.switches[l].nodes {
			costs[l].gpus += s.nodes[n].gpus
		}
		smallest = min(smallest, costs[l].gpus)
	}
	return costs, smallest
}

// chargeLeaves adds each running job to the cost of the leaves it runs
// on: as a victim with the GPU-seconds it would lose at t, or, when it
// may not move for job j, by making them not freeable.
func (r *replayer) chargeLeaves(costs []leafCost, j *Job, t float64) {
	var touched []int
	for v, si := range r.cur {
		if si < 0 {
			continue
		}
		job, ran := &r.jobs[v], t-r.segs[si].start
		// Only smaller work moves, past its protection (its min runtime,
		// at most the planner's cap): a job as large as this one is not
		// stopped to start it.
		movable := job.Resumable && ran >= min(job.MinRuntime, r.protectCap) && job.GPUs < j.GPUs
		lost := float64(job.GPUs) * math.Mod(ran, r.checkpoint)
		touched = r.leavesOf(r.runs[v].takes, touched[:0])
		for _, l := range touched {
			c := &costs[l]
			if !movable {
				c.freeable = false
				continue
			}
			c.lost += lost
			c.victims = append(c.victims, v)
		}
	}
}

// leavesOf appends to leaves, once each, the leaf switches takes use.
func (r *replayer) leavesOf(takes []take, leaves []int) []int {
	for _, tk := range takes {
		if l := r.s.nodes[tk.node].leaf; l >= 0 && !slices.Contains(leaves, l) {
			leaves = append(leaves, l)
		}
	}
	return leaves
}

// cheapestLeaves takes freeable leaves, those that lose the fewest
// GPU-seconds first, until they hold job j of shape sh (a job confined to
// one leaf only from leaves that hold it), and returns their victims and
// their GPUs.
func (r *replayer) cheapestLeaves(costs []leafCost, j *Job, sh shape) (victims []int, have int) {
	order := make([]int, 0, len(r.s.leaves))
	for _, l := range r.s.leaves {
		if costs[l].freeable {
			order = append(order, l)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(costs[a].lost, costs[b].lost) })
	for _, l := range order {
		if have >= j.GPUs {
			break
		}
		if sh.constrained && costs[l].gpus < j.GPUs {
			continue // it must start inside one leaf: only a leaf that holds it helps
		}
		have += costs[l].gpus
		for _, v := range costs[l].victims {
			if !slices.Contains(victims, v) {
				victims = append(victims, v)
			}
		}
	}
	return victims, have
}

// startFreed preempts the victims and starts job ji at t if the policy
// then finds it room, reporting whether it started.
func (r *replayer) startFreed(ji int, victims []int, t float64) (bool, error) {
	for _, v := range victims {
		if err := r.preemptJob(v, t); err != nil {
			return false, err
		}
	}
	takes, err := r.pol.choose(r.s, &r.jobs[ji], r.shapes[ji], t)
	if err != nil || takes == nil {
		return false, err
	}
	r.defrags++
	return true, r.start(ji, takes, t)
}

// fitsWithout reports whether shape sh would fit once the victims'
// GPUs are free, leaving the state as it was.
func (r *replayer) fitsWithout(victims []int, sh shape) bool {
	for _, v := range victims {
		e := r.runs[v]
		_ = r.s.apply(e.takes, e.per, -1) // the running job's own takes: cannot fail
	}
	fits := r.s.fits(sh)
	for _, v := range victims {
		e := r.runs[v]
		_ = r.s.apply(e.takes, e.per, 1)
	}
	return fits
}

// defragPays reports whether freeing the victims' GPUs for job j at t
// loses little enough GPU-time for what it gains: the victims lose what
// they ran since their last checkpoint, which must be at most
// defragLossRatio of j's GPUs for as long as j would otherwise wait
// (until the running jobs free room for it, its EASY reservation). The
// gain is not capacity: the cluster runs the same work in another
// order, while the loss is run again. Stopping much work for a job that
// starts soon anyway made every large job wait longer. It also returns
// that reservation, j's shadow time.
func (r *replayer) defragPays(j *Job, sh shape, victims []int, t float64) (bool, float64) {
	var lost float64
	for _, v := range victims {
		lost += float64(r.jobs[v].GPUs) * math.Mod(t-r.segs[r.cur[v]].start, r.checkpoint)
	}
	start := r.s.shadow(r.liveRuns(), sh)
	return lost <= defragLossRatio*float64(j.GPUs)*(start-t), start
}
