package simulate

import (
	"container/heap"
	"math"
)

// Reservation kinds (Options.Reserve).
const (
	// ReserveCount reserves a GPU count for the head of the queue: a
	// later job may start only if it ends by the head job's start.
	ReserveCount = "count"
	// ReserveNodes reserves the concrete nodes the head job will start
	// on (its leaf, for a job that must start inside one): a later job
	// that ends after the head job's start is placed with those nodes'
	// free GPUs hidden, and starts on other nodes when they hold it.
	ReserveNodes = "nodes"
)

// reservation returns when a job of shape sh could start if the running
// jobs end as planned and nothing else starts, as shadow does, and the
// nodes it would take then: for a job confined to one group, that
// group's nodes; for another, the nodes that the jobs ending first free
// (then the nodes free now) until they hold it. The mask is nil when the
// job can never start.
func (s *state) reservation(run []running, sh shape) (float64, []bool) {
	h := runHeap(append(s.scratch.run[:0], run...))
	heap.Init(&h)
	free := make([]int, len(s.nodes))
	groups := make([]int, len(s.groups))
	total := 0
	for i := range s.nodes {
		free[i] = s.nodes[i].free
		p := free[i] / sh.per
		total += p
		if g := s.groupOf[i]; g >= 0 {
			groups[g] += p
		}
	}
	var freed []int // nodes in the order running jobs free them
	for h.Len() > 0 {
		r := heap.Pop(&h).(running)
		for _, t := range r.takes {
			before := free[t.node] / sh.per
			free[t.node] += t.pods * r.per
			d := free[t.node]/sh.per - before
			total += d
			if g := s.groupOf[t.node]; g >= 0 {
				groups[g] += d
			}
			freed = append(freed, t.node)
		}
		if sh.constrained {
			for g, pods := range groups {
				if pods >= sh.pods {
					mask := make([]bool, len(s.nodes))
					for _, n := range s.groups[g] {
						mask[n] = true
					}
					return r.end, mask
				}
			}
			continue
		}
		if total >= sh.pods {
			return r.end, s.takeFirst(free, append(freed, s.order...), sh)
		}
	}
	return math.Inf(1), nil
}

// takeFirst marks nodes of order (repeats skipped) until their free
// GPUs hold sh's pods.
func (s *state) takeFirst(free, order []int, sh shape) []bool {
	mask := make([]bool, len(s.nodes))
	pods := 0
	for _, n := range order {
		if pods >= sh.pods {
			break
		}
		if mask[n] || free[n] < sh.per {
			continue
		}
		mask[n] = true
		pods += free[n] / sh.per
	}
	return mask
}

// touches reports whether takes use a node of mask.
func touches(takes []take, mask []bool) bool {
	for _, t := range takes {
		if mask[t.node] {
			return true
		}
	}
	return false
}

// hider is a policy that keeps its own view of the cluster and must be
// told which free GPUs are hidden from its next choices (nil: none).
type hider interface {
	hide(s *state, hidden []take)
}

// chooseAvoiding is the policy's choice with the free GPUs of the nodes
// in mask shown as used: a job that would run past the head job's start
// looks for room off the nodes reserved for it.
func (r *replayer) chooseAvoiding(j *Job, sh shape, t float64, mask []bool) ([]take, error) {
	s := r.s
	var hidden []take // per=1: a node's free GPUs as pods of one
	for n, m := range mask {
		if m && s.nodes[n].free > 0 {
			hidden = append(hidden, take{n, s.nodes[n].free})
		}
	}
	if len(hidden) == 0 {
		return r.pol.choose(s, j, sh, t)
	}
	if err := s.apply(hidden, 1, 1); err != nil {
		return nil, err
	}
	h, ok := r.pol.(hider)
	if ok {
		h.hide(s, hidden)
	}
	takes, err := r.pol.choose(s, j, sh, t)
	if ok {
		h.hide(s, nil)
	}
	if rerr := s.apply(hidden, 1, -1); err == nil {
		err = rerr
	}
	return takes, err
}
