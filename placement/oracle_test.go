package placement

import (
	"math"
	"time"
)

// The usage of single records, computed the plain way: the reference
// that the one-pass accumulation of standings and owed/delivered is
// checked against (store_test.go, vectors_test.go).

// WindowUsage returns r's allocated GPU-seconds inside [now-window, now]:
// U_raw of fairshare.md §9.2. Unallocated records are free and count 0.
func WindowUsage(r *Record, now time.Time, window time.Duration) float64 {
	if !r.Allocated {
		return 0
	}
	return float64(r.GPUs) * overlap(r.Start, r.End, now.Add(-window), now)
}

// DecayedUsage returns ∫ GPUs·2^(-(now-t)/T½) dt over r's allocated run
// up to now (fairshare.md §9.2, decayed usage).
func DecayedUsage(r *Record, now time.Time, halfLife time.Duration) float64 {
	if !r.Allocated || r.Start.After(now) {
		return 0
	}
	end := r.End
	if end.IsZero() || end.After(now) {
		end = now
	}
	t := halfLife.Seconds()
	k := math.Ln2 / t
	a, b := now.Sub(end).Seconds(), now.Sub(r.Start).Seconds()
	return float64(r.GPUs) / k * (math.Exp(-k*a) - math.Exp(-k*b))
}

// overlap returns the seconds of [s, e) (e zero: open) inside [from, to).
func overlap(s, e, from, to time.Time) float64 {
	if e.IsZero() || e.After(to) {
		e = to
	}
	if s.Before(from) {
		s = from
	}
	if !e.After(s) {
		return 0
	}
	return e.Sub(s).Seconds()
}
