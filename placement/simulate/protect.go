package simulate

import (
	"math"
	"slices"
)

// protectionEnd returns the first time after t that a running job's
// protection ends, if allocated work is queued; +Inf otherwise.
func (r *replayer) protectionEnd(t float64) float64 {
	if !slices.ContainsFunc(r.queue, func(ji int) bool { return r.jobs[ji].MinRuntime > 0 }) {
		return math.Inf(1)
	}
	end := math.Inf(1)
	for _, e := range r.h {
		if e.gen != r.gen[e.job] {
			continue // preempted
		}
		j := &r.jobs[e.job]
		if j.MinRuntime <= 0 {
			continue
		}
		if at := protectedUntil(r.segs[r.cur[e.job]].start, min(j.MinRuntime, r.protectCap)); at > t && at < end {
			end = at
		}
	}
	return end
}

// protectedUntil is when work that started at start seconds, protected
// for p seconds, stops being protected as the planner sees it (times to
// the nanosecond), in seconds: the first one not before that instant.
func protectedUntil(start, p float64) float64 {
	until := epoch(start).Add(secs(p))
	at := start + p
	for epoch(at).Before(until) {
		at = math.Nextafter(at, math.Inf(1))
	}
	return at
}
