package placement

import (
	"math"
	"time"
)

// OwedDelivered returns, per account index, Ai2's owed and delivered
// GPU-hours over the window (fairshare.md §9.2): for each hour h,
// owed_h = min(S·C, demand_h) and delivered_h = allocated GPU-hours
// received. Demand runs from Submit (or Start) to End (or now), for
// allocated and unallocated work alike. Values are computed for each
// account's own records; an account's totals add its children's.
func OwedDelivered(t *Tree, records []Record, now time.Time, window time.Duration, capacity int) (owed, delivered []float64) {
	return owedDelivered(t, records, t.Index(records), now, window, capacity, nil)
}

// owedDelivered also calls visit (if not nil) once per known record, in
// account order, so that callers accumulate usage in the same pass.
func owedDelivered(t *Tree, records []Record, idx []int32, now time.Time, window time.Duration, capacity int,
	visit func(int32, *Record)) (owed, delivered []float64) {
	n := len(t.accounts)
	owed, delivered = make([]float64, n), make([]float64, n)
	hours := int(math.Ceil(window.Hours()))
	hours = max(hours, 1)
	from := now.Add(-time.Duration(hours) * time.Hour)
	// Group record indexes by account (counting sort) so each account's
	// hourly buckets stay small and hot.
	start := make([]int32, n+1)
	for _, a := range idx {
		if a >= 0 {
			start[a+1]++
		}
	}
	for i := range n {
		start[i+1] += start[i]
	}
	order := make([]int32, start[n])
	fill := append([]int32(nil), start[:n]...)
	for i, a := range idx {
		if a >= 0 {
			order[fill[a]] = int32(i)
			fill[a]++
		}
	}
	part, diff := make([]float64, hours), make([]float64, hours+1)
	for a := range n {
		if start[a] == start[a+1] {
			continue
		}
		clear(part)
		clear(diff)
		for _, ri := range order[start[a]:start[a+1]] {
			r := &records[ri]
			if visit != nil {
				visit(int32(a), r)
			}
			if r.Allocated {
				delivered[a] += float64(r.GPUs) * overlap(r.Start, r.End, from, now) / 3600
			}
			sub := r.Submit
			if sub.IsZero() || sub.After(r.Start) {
				sub = r.Start
			}
			spread(part, diff, sub, r.End, from, now, float64(r.GPUs))
		}
		entitled := t.accounts[a].Norm * float64(capacity)
		var rate float64
		for h := range hours {
			rate += diff[h]
			owed[a] += min(entitled, part[h]+rate)
		}
	}
	for i := n - 1; i > 0; i-- {
		p := t.accounts[i].Parent
		owed[p] += owed[i]
		delivered[p] += delivered[i]
	}
	return owed, delivered
}

// spread adds g GPUs over [s, e) into hourly buckets starting at from:
// partial hours go into part, whole hours into the difference array diff.
func spread(part, diff []float64, s, e, from, to time.Time, g float64) {
	if e.IsZero() || e.After(to) {
		e = to
	}
	if s.Before(from) {
		s = from
	}
	if !e.After(s) {
		return
	}
	hs, he := s.Sub(from).Hours(), e.Sub(from).Hours()
	first, last := int(hs), int(he)
	if first == last || last >= len(part) && first == len(part)-1 {
		part[min(first, len(part)-1)] += g * (he - hs)
		return
	}
	part[first] += g * (float64(first+1) - hs)
	if last < len(part) {
		part[last] += g * (he - float64(last))
	}
	if first+1 < min(last, len(part)) {
		diff[first+1] += g
		diff[min(last, len(part))] -= g
	}
}
