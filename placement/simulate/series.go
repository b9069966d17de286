package simulate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/toposcope/toposcope/placement"
)

// MaxSamples caps Options.Samples.
const MaxSamples = 1000

// Series are one policy's figures for plotting, each of a size bounded
// by Options.Samples and the trace's distinct job sizes, not by its
// length: a long replay keeps as few points as a short one.
type Series struct {
	// Times are the ends of Samples equal intervals from the first
	// submit to the last finish, in seconds from the first submit.
	Times []float64 `json:"timesSeconds"`
	// Occupancy is, per interval, the share of the cluster's GPUs that
	// ran useful work, averaged over the interval (work a preemption
	// threw away does not count, as in Report.Occupancy).
	Occupancy []float64 `json:"occupancy"`
	// AccountTimes are at most Samples times, in seconds from the first
	// submit, each a whole number of hours before the last finish (the
	// last is the span): owed GPU-hours are counted per hour, on hours
	// counted back from the last finish.
	AccountTimes []float64 `json:"accountTimesSeconds"`
	// Accounts are, per account and AccountTimes, the GPU-hours owed and
	// delivered from the first submit up to that time, counted as the
	// report counts them at the end: the last values are
	// Report.Accounts'.
	Accounts []AccountSeries `json:"accounts"`
	// WaitQuantiles are the waits (start minus submit, in seconds) at
	// Samples+1 evenly spaced quantiles from 0 to 1, nearest rank: the
	// waits' distribution function.
	WaitQuantiles []float64 `json:"waitQuantilesSeconds"`
	// BySize are the waits per job size (GPUs), smallest first.
	BySize []SizeWait `json:"waitsBySize"`
}

// AccountSeries is one account's owed and delivered GPU-hours over time
// (Series.AccountTimes).
type AccountSeries struct {
	Account   string    `json:"name"`
	Owed      []float64 `json:"owedGPUHours"`
	Delivered []float64 `json:"deliveredGPUHours"`
}

// SizeWait is the waits of the jobs of one size, in seconds.
type SizeWait struct {
	GPUs     int     `json:"gpus"`
	Jobs     int     `json:"jobs"`
	MeanWait float64 `json:"meanWaitSeconds"`
	MaxWait  float64 `json:"maxWaitSeconds"`
}

// series samples a finished replay at n points.
func series(s *state, rp *replayer, tree *placement.Tree, n int) *Series {
	jobs := rp.jobs
	n = min(n, MaxSamples)
	out := &Series{}
	if len(jobs) == 0 || n <= 0 {
		return out
	}
	t0, end := jobs[0].Submit, jobs[0].Submit
	for _, sg := range rp.segs {
		end = max(end, sg.end)
	}
	span := end - t0
	if span <= 0 {
		span = 1 // every job ran for no time: one second keeps the axes apart
	}
	out.Times = make([]float64, n)
	for k := range n {
		out.Times[k] = span * float64(k+1) / float64(n)
	}
	out.Occupancy = occupancySeries(s, rp, t0, span, n)
	out.AccountTimes, out.Accounts = accountSeries(s, rp, tree, t0, end, n)
	out.WaitQuantiles, out.BySize = waitSeries(rp, n)
	return out
}

// occupancySeries integrates the useful part of every run into n equal
// buckets from t0 over span: partial buckets directly, whole ones
// through a difference array, so that a run costs the same whatever its
// length.
func occupancySeries(s *state, rp *replayer, t0, span float64, n int) []float64 {
	part, diff := make([]float64, n), make([]float64, n+1)
	width := span / float64(n)
	for _, sg := range rp.segs {
		lo, hi := (sg.start-t0)/width, (sg.end-sg.lost-t0)/width
		if hi <= lo {
			continue
		}
		g := float64(rp.jobs[sg.job].GPUs)
		first, last := int(lo), int(hi)
		if last >= n { // the last finish ends exactly at the end of the last bucket
			last, hi = n-1, min(hi, float64(n))
		}
		if first == last {
			part[first] += g * (hi - lo)
			continue
		}
		part[first] += g * (float64(first+1) - lo)
		part[last] += g * (hi - float64(last))
		diff[first+1] += g
		diff[last] -= g
	}
	occ := make([]float64, n)
	var rate float64
	for k := range n {
		rate += diff[k]
		occ[k] = round4((part[k] + rate) / float64(s.gpus))
	}
	return occ
}

// accountSeries computes each account's owed and delivered GPU-hours
// from the first submit up to at most n times. Owed GPU-hours are
// counted per hour (an account is owed at most its share of each hour),
// on hours counted back from the last finish as the report counts them;
// the times are whole hours back from it, so that each value adds whole
// hours to the one before and the last is the report's own.
func accountSeries(s *state, rp *replayer, tree *placement.Tree, t0, end float64, n int) ([]float64, []AccountSeries) {
	hours := max(int(math.Ceil((end-t0)/3600)), 1)
	m := min(n, hours)
	times := make([]float64, m)
	accounts := accountsOf(rp.jobs)
	out := make([]AccountSeries, len(accounts))
	idx := make([]int, len(accounts))
	for i, a := range accounts {
		out[i] = AccountSeries{Account: a, Owed: make([]float64, m), Delivered: make([]float64, m)}
		idx[i], _ = tree.Lookup(a)
	}
	recs := usageRecords(rp)
	for k := range m {
		in := (hours*(k+1) + m/2) / m // hours counted up to this time
		now := end - float64(hours-in)*3600
		times[k] = max(now-t0, 0)
		owed, delivered := placement.OwedDelivered(tree, recs, epoch(now), time.Duration(in)*time.Hour, s.gpus)
		for i, a := range idx {
			out[i].Owed[k], out[i].Delivered[k] = round2(owed[a]), round2(delivered[a])
		}
	}
	return times, out
}

// usageRecords returns one usage record per run, ending where its useful
// part ends: a preempted job's demand goes on from there (through the
// part the preemption threw away, and its wait), its delivery only while
// it runs work it keeps. They are the records the report's owed and
// delivered GPU-hours come from.
func usageRecords(rp *replayer) []placement.Record {
	jobs := rp.jobs
	recs := make([]placement.Record, len(rp.segs))
	demand := make([]float64, len(jobs)) // per job, when its demand resumed
	for i := range jobs {
		demand[i] = jobs[i].Submit
	}
	for i, sg := range rp.segs {
		j := &jobs[sg.job]
		kept := sg.end - sg.lost
		recs[i] = placement.Record{Account: j.Account, Workload: fmt.Sprint(j.ID), GPUs: j.GPUs,
			Submit: epoch(demand[sg.job]), Start: epoch(sg.start), End: epoch(kept), Allocated: j.MinRuntime > 0}
		demand[sg.job] = kept
	}
	return recs
}

// waitSeries returns the waits at n+1 quantiles and the waits per job
// size.
func waitSeries(rp *replayer, n int) ([]float64, []SizeWait) {
	waits := make([]float64, len(rp.jobs))
	bySize := map[int]*SizeWait{}
	for i, j := range rp.jobs {
		waits[i] = rp.out[i].start - j.Submit
		sw := bySize[j.GPUs]
		if sw == nil {
			sw = &SizeWait{GPUs: j.GPUs}
			bySize[j.GPUs] = sw
		}
		sw.Jobs++
		sw.MeanWait += waits[i]
		sw.MaxWait = max(sw.MaxWait, waits[i])
	}
	slices.Sort(waits)
	q := make([]float64, n+1)
	for k := range q {
		q[k] = percentile(waits, float64(k)/float64(n))
	}
	sizes := make([]SizeWait, 0, len(bySize))
	for _, sw := range bySize {
		sw.MeanWait = round2(sw.MeanWait / float64(sw.Jobs))
		sizes = append(sizes, *sw)
	}
	slices.SortFunc(sizes, func(a, b SizeWait) int { return a.GPUs - b.GPUs })
	return q, sizes
}
