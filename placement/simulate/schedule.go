package simulate

import (
	"fmt"
	"math"
	"slices"
)

// reserved is the backfill reservation of one scheduling pass: the
// oldest queued job that found no room, when it is expected to start and,
// with concrete reservations, the nodes held for it.
type reserved struct {
	job int // index of the reserved job; -1 while none
	// shadow is when the reserved job is expected to start, once known.
	shadow float64
	// known is unset until shadow is computed, and again when GPUs come
	// free: the reservation may move.
	known bool
	// nodes are, with concrete reservations, the reserved job's nodes.
	nodes []bool
}

// schedule tries the first depth queued jobs at t.
func (r *replayer) schedule(t float64) error {
	kept := r.queue[:0]
	rv := reserved{job: -1, shadow: math.Inf(1)}
	for qi, ji := range r.queue {
		if qi >= r.depth {
			kept = append(kept, r.queue[qi:]...)
			break
		}
		takes, victims, held, err := r.place(&rv, ji, t)
		if err != nil {
			return err
		}
		if takes == nil && rv.job < 0 && !held && r.defragAfter > 0 {
			started, err := r.tryDefrag(&rv, ji, t)
			if err != nil {
				return err
			}
			if started {
				continue
			}
		}
		if takes == nil && r.fifo {
			kept = append(kept, r.queue[qi:]...)
			break
		}
		if takes == nil {
			kept = append(kept, ji)
			if rv.job < 0 {
				rv.job = ji
			}
			continue
		}
		if err := r.startPreempting(&rv, ji, takes, victims, t); err != nil {
			return err
		}
	}
	r.requeue(kept)
	return nil
}

// place finds room for queued job ji at t: on free GPUs, off the
// reserved nodes if starting it would delay the reserved job (held), or
// else, for allocated work, by preempting the victims (job IDs) it
// returns. The takes are nil when there is no room.
func (r *replayer) place(rv *reserved, ji int, t float64) (takes []take, victims []int, held bool, err error) {
	j, sh := &r.jobs[ji], r.shapes[ji]
	fits := r.s.fits(sh)
	if rv.job >= 0 && (fits || r.pre != nil) {
		// It would delay the oldest waiting job, whether it starts on
		// free GPUs or by preemption; with concrete reservations only if
		// it took one of the nodes reserved for that job, so it looks for
		// room on the others.
		held = r.delays(rv, ji, t)
		fits = fits && (!held || rv.nodes != nil)
	}
	if fits {
		if takes, err = r.chooseFree(rv, ji, held, t); err != nil {
			return nil, nil, held, err
		}
	}
	if takes == nil && !held && r.pre != nil && j.MinRuntime > 0 {
		if takes, victims, err = r.pre.preempt(r.s, j, sh, t); err != nil {
			return nil, nil, held, err
		}
	}
	return takes, victims, held, nil
}

// delays reports whether job ji, started at t, would still run when the
// reserved job is expected to start, computing that time if it is not
// known.
func (r *replayer) delays(rv *reserved, ji int, t float64) bool {
	if !rv.known {
		if r.concrete {
			rv.shadow, rv.nodes = r.s.reservation(r.liveRuns(), r.shapes[rv.job])
		} else {
			rv.shadow = r.s.shadow(r.liveRuns(), r.shapes[rv.job])
		}
		rv.known = true
	}
	return t+r.left[ji] > rv.shadow
}

// chooseFree is the policy's choice of free GPUs for job ji at t; a held
// job's avoids the reserved nodes.
func (r *replayer) chooseFree(rv *reserved, ji int, held bool, t float64) ([]take, error) {
	j, sh := &r.jobs[ji], r.shapes[ji]
	if !held {
		return r.pol.choose(r.s, j, sh, t)
	}
	takes, err := r.chooseAvoiding(j, sh, t, rv.nodes)
	if err != nil {
		return nil, err
	}
	if touches(takes, rv.nodes) {
		return nil, fmt.Errorf("simulate: policy %s takes nodes reserved for job %d", r.name, r.jobs[rv.job].ID)
	}
	return takes, nil
}

// tryDefrag defragments for job ji, the first to find no room, and
// reports whether it started. If it did not but defragPays computed its
// shadow, that is the reservation's, the job becoming the reserved one.
func (r *replayer) tryDefrag(rv *reserved, ji int, t float64) (bool, error) {
	started, head, err := r.defragment(ji, t)
	if err != nil {
		return false, err
	}
	if started {
		rv.known = false
		return true, nil
	}
	if !math.IsNaN(head) && !r.concrete {
		// This job becomes the reserved one, on the state defragPays
		// saw: its shadow is already known.
		rv.shadow, rv.known = head, true
	}
	return false, nil
}

// startPreempting preempts victims (job IDs) and starts job ji on takes
// at t.
func (r *replayer) startPreempting(rv *reserved, ji int, takes []take, victims []int, t float64) error {
	for _, id := range victims {
		v, ok := r.byID[id]
		if !ok {
			return fmt.Errorf("simulate: policy %s preempts job %d, which is not in the trace", r.name, id)
		}
		if err := r.preemptJob(v, t); err != nil {
			return err
		}
		rv.known = false // GPUs came free: the reservation may move
	}
	return r.start(ji, takes, t)
}

// requeue makes kept the queue, with the jobs preempted in the pass
// behind it.
func (r *replayer) requeue(kept []int) {
	r.queue = kept
	r.sorted = len(kept) // in queue order: only jobs added after it may be out of place
	if len(r.requeued) > 0 {
		r.queue = append(r.queue, r.requeued...)
		r.requeued = r.requeued[:0]
		if r.order == nil {
			slices.Sort(r.queue) // submit order; the fair-share order sorts at the next event
		}
	}
}
