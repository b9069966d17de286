package placement

import (
	"math"
	"time"
)

// Decay returns the exact decay factor 2^(-dt/halfLife).
func Decay(dt, halfLife time.Duration) float64 {
	return math.Exp2(-dt.Seconds() / halfLife.Seconds())
}

// SlurmDecay returns Slurm's first-order approximation
// (1 - 0.693/T½)^dt, with both in seconds (fairshare.md §2.3).
func SlurmDecay(dt, halfLife time.Duration) float64 {
	return math.Pow(1-0.693/halfLife.Seconds(), dt.Seconds())
}

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

// EntryPenalty returns Kueue AFS's alpha(Δ, T½) = 1 − 0.5^(Δ/T½); the
// penalty added at admission is alpha × request (fairshare.md §3.4).
func EntryPenalty(sampling, halfLife time.Duration) float64 {
	if halfLife <= 0 {
		return 0
	}
	return 1 - math.Pow(0.5, sampling.Seconds()/halfLife.Seconds())
}

// DRS returns Kueue's integer-scaled dominant resource share for one
// resource, borrowed·1000/lendable, divided by weight (fairshare.md §3.2):
// the unrounded DRS and the rounded-up weighted share. Weight 0 while
// borrowing is +Inf; not borrowing is 0.
func DRS(borrowed, lendable, weight float64) (drs, weighted float64) {
	if borrowed <= 0 || lendable <= 0 {
		return 0, 0
	}
	drs = borrowed * 1000 / lendable
	if weight == 0 {
		return drs, math.Inf(1)
	}
	return drs, math.Ceil(drs / weight)
}

// KAIShares divides spare capacity as KAI's time-based fair share does:
// P_q = max(0, W'_q + k·(W'_q − U'_q)), normalised to sum 1 (§4.2).
func KAIShares(weights, usage []float64, k float64) []float64 {
	var sum float64
	p := make([]float64, len(weights))
	for i := range weights {
		p[i] = max(0, weights[i]+k*(weights[i]-usage[i]))
		sum += p[i]
	}
	for i := range p {
		if sum > 0 {
			p[i] /= sum
		}
	}
	return p
}
