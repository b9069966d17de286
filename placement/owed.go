package placement

import (
	"math"
	"time"
)

// OwedDelivered returns, per account index, Ai2's owed and delivered
// GPU-hours over the window (fairshare.md §9.2): for each hour h,
// owed_h = min(S·C, demand_h) and delivered_h = allocated GPU-hours
// received. Both are on the same basis, allocated work: demand runs from
// Submit (or Start) to End (or now) of allocated records only, because
// unallocated work is free, owed to nobody, and never counts as
// delivered either (counting its demand made accounts that run much free
// work look starved). Values are computed for each account's own
// records; an account's totals add its children's.
func OwedDelivered(t *Tree, records []Record, now time.Time, window time.Duration, capacity int) (owed, delivered []float64) {
	u := accumulate(t, records, t.Index(records), now, window, capacity, 0)
	return u.owed, u.delivered
}

// usage is what one pass over the ledger gives, per account index.
type usage struct {
	own, decayed, owed, delivered []float64
}

// demandSpan is one record's demand in whole seconds from the start of
// the owed window, clipped to it, and its GPUs: small, so that grouping
// the spans by account moves little memory.
type demandSpan struct{ s, e, g int32 }

// owedWindow is where one pass over the ledger counts, in Unix seconds.
type owedWindow struct {
	hours int   // whole hours of owed window, at least 1
	now   int64 // its end
	from  int64 // its start: now less hours
	win   int64 // the start of the usage window
}

// accumulate reads the records once, in order, for each account's window
// usage, decayed usage (when halfLife > 0), delivered GPU-hours and
// demand; the demand spans are then grouped by account (a counting sort
// of small values, not of records) to sum the hourly owed values.
func accumulate(t *Tree, records []Record, idx []int32, now time.Time, window time.Duration, capacity int,
	halfLife time.Duration) usage {
	n := len(t.accounts)
	u := usage{own: make([]float64, n), decayed: make([]float64, n), owed: make([]float64, n),
		delivered: make([]float64, n)}
	w := owedWindow{hours: max(int(math.Ceil(window.Hours())), 1), now: now.Unix()}
	w.from = w.now - int64(w.hours)*3600
	w.win = w.now - int64(window/time.Second)
	var dec *decayTable
	if halfLife > 0 {
		dec = newDecayTable(halfLife)
	}
	spans, count := u.read(records, idx, w, dec)
	grouped := groupSpans(spans, idx, count)
	u.owe(t, grouped, count, w.hours, capacity)
	for i := n - 1; i > 0; i-- {
		p := t.accounts[i].Parent
		u.owed[p] += u.owed[i]
		u.delivered[p] += u.delivered[i]
	}
	return u
}

// read adds each allocated record's usage, decayed usage (with dec) and
// delivered GPU-hours to its account (idx, per record; -1: none), and
// returns its demand span in window w (zero if none) and, at index a+1,
// the number of demand spans of account a.
func (u *usage) read(records []Record, idx []int32, w owedWindow, dec *decayTable) ([]demandSpan, []int32) {
	spans := make([]demandSpan, len(records))
	count := make([]int32, len(u.own)+1)
	for i := range records {
		a := idx[i]
		r := &records[i]
		if a < 0 || !r.Allocated {
			continue // owed and delivered count allocated work only
		}
		start, end := r.Start.Unix(), w.now
		if !r.End.IsZero() {
			end = min(end, r.End.Unix())
		}
		g := float64(r.GPUs)
		u.own[a] += g * float64(max(0, end-max(start, w.win)))
		u.delivered[a] += g * float64(max(0, end-max(start, w.from))) / 3600
		if dec != nil && start < w.now {
			u.decayed[a] += g * dec.integral(w.now-end, w.now-start)
		}
		sub := start
		if !r.Submit.IsZero() {
			sub = min(sub, r.Submit.Unix())
		}
		sub = max(sub, w.from)
		if end > sub {
			spans[i] = demandSpan{s: int32(sub - w.from), e: int32(end - w.from), g: int32(min(r.GPUs, math.MaxInt32))}
			count[a+1]++
		}
	}
	return spans, count
}

// groupSpans returns the non-empty spans grouped by account (idx, per
// span), turning count (the spans of account a at index a+1) into the
// offsets: account a's spans are grouped[count[a]:count[a+1]].
func groupSpans(spans []demandSpan, idx []int32, count []int32) []demandSpan {
	n := len(count) - 1
	for a := range n {
		count[a+1] += count[a]
	}
	grouped := make([]demandSpan, count[n])
	fill := append([]int32(nil), count[:n]...)
	for i := range spans {
		if a := idx[i]; a >= 0 && spans[i].e > spans[i].s {
			grouped[fill[a]] = spans[i]
			fill[a]++
		}
	}
	return grouped
}

// owe sums each account's owed GPU-hours over hours: per hour, its
// demand (its spans, grouped[off[a]:off[a+1]]) capped at its share of
// capacity.
func (u *usage) owe(t *Tree, grouped []demandSpan, off []int32, hours, capacity int) {
	part, diff := make([]float64, hours), make([]float64, hours+1)
	for a := range len(off) - 1 {
		if off[a] == off[a+1] {
			continue
		}
		clear(part)
		clear(diff)
		for _, sp := range grouped[off[a]:off[a+1]] {
			spread(part, diff, float64(sp.s)/3600, float64(sp.e)/3600, float64(sp.g))
		}
		entitled := t.accounts[a].Norm * float64(capacity)
		var rate float64
		for h := range hours {
			rate += diff[h]
			u.owed[a] += min(entitled, part[h]+rate)
		}
	}
}

// spread adds g GPUs over [hs, he) hours into hourly buckets: partial
// hours go into part, whole hours into the difference array diff.
func spread(part, diff []float64, hs, he, g float64) {
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

// decayTable gives 2^(-x/T½) for whole seconds x as the product of three
// table entries (x's 11-bit digits), so that decayed usage costs no
// exponential per record.
type decayTable struct {
	k             float64 // ln 2 / T½, per second
	lo, mid, high [2048]float64
}

func newDecayTable(halfLife time.Duration) *decayTable {
	d := &decayTable{k: math.Ln2 / halfLife.Seconds()}
	for i := range 2048 {
		x := float64(i)
		d.lo[i] = math.Exp(-d.k * x)
		d.mid[i] = math.Exp(-d.k * x * 2048)
		d.high[i] = math.Exp(-d.k * x * 2048 * 2048)
	}
	return d
}

// factor returns 2^(-x/T½) for x ≥ 0 seconds (0 beyond 2^33 s).
func (d *decayTable) factor(x int64) float64 {
	if x >= 1<<33 {
		return 0
	}
	return d.lo[x&2047] * d.mid[x>>11&2047] * d.high[x>>22]
}

// integral returns ∫ 2^(-(now-t)/T½) dt for t from now-b to now-a
// (0 ≤ a ≤ b seconds): one GPU's decayed usage.
func (d *decayTable) integral(a, b int64) float64 {
	return (d.factor(a) - d.factor(b)) / d.k
}
