package slurm

import "math/bits"

// aggregate is one aggregated block slurmctld builds: the base blocks
// [start, end) in file order, for the level whose size is mult base
// blocks.
type aggregate struct {
	mult, start, end int
}

// effectiveMults is the part of mults (ascending powers of two, the first
// being 1) that slurmctld uses for n base blocks: block_record.c stops at
// the first level that covers every block.
func effectiveMults(n int, mults []int) []int {
	for i, m := range mults {
		if m >= n {
			return mults[:i+1]
		}
	}
	return mults
}

// levelAggregates lists the aggregates of level j (j ≥ 1) of mults for n
// base blocks, following block_record_validate() of Slurm 24.05 and later:
// an aggregate starts at every index i with i % m == 0 and takes the next
// m blocks, except that a trailing group is skipped when it is shorter than
// m and the previous level already covers it. implicit gives the plain
// aligned groups that Slurm 23.11 evaluates (no records, no skip rule).
// Aggregates of a single block are left out: they add nothing.
func levelAggregates(n int, mults []int, j int, implicit bool) []aggregate {
	mults = effectiveMults(n, mults)
	if j <= 0 || j >= len(mults) {
		return nil
	}
	m, prev := mults[j], mults[j-1]
	out := make([]aggregate, 0, n/m+1)
	for i := 0; i < n; i += m {
		rem := n - i
		if !implicit && m > rem && prev >= rem {
			continue
		}
		end := min(i+m, n)
		if end-i >= 2 {
			out = append(out, aggregate{mult: m, start: i, end: end})
		}
	}
	return out
}

// slurmAggregates lists every aggregate slurmctld 24.05+ builds for n base
// blocks and level multipliers mults, level by level.
func slurmAggregates(n int, mults []int) []aggregate {
	var out []aggregate
	for j := 1; j < len(effectiveMults(n, mults)); j++ {
		out = append(out, levelAggregates(n, mults, j, false)...)
	}
	return out
}

// ceilLog2 returns the smallest k with 2^k ≥ n (0 for n ≤ 1).
func ceilLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// padTo is the length a group of size n occupies in a padded layout whose
// largest aggregate spans limit blocks: the next power of two up to limit,
// then a multiple of limit.
func padTo(n, limit int) int {
	if n <= limit {
		return 1 << ceilLog2(n)
	}
	return (n + limit - 1) / limit * limit
}
