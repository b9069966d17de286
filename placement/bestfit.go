package placement

import (
	"cmp"
	"slices"
)

// BestFit takes need units from groups with the given capacities and
// returns how much it takes from each. It is the descent of Kueue's
// BestFit and Slurm topology/tree (fairshare.md §3.5, §6.1): while no
// single group holds the remainder it takes the largest group whole
// (first index on ties); then it takes the remainder from the smallest
// group that holds it. It returns nil when the total is too small.
func BestFit(caps []int, need int) []int {
	take := make([]int, len(caps))
	if need <= 0 {
		return take
	}
	total := 0
	for _, c := range caps {
		total += max(0, c)
	}
	if total < need {
		return nil
	}
	order := make([]int, len(caps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(caps[b], caps[a]) })
	for pos := 0; need > 0; pos++ {
		// smallest unused group that holds the remainder, scanning from the end.
		fit := -1
		for j := len(order) - 1; j >= pos; j-- {
			if c := caps[order[j]]; c >= need && take[order[j]] == 0 {
				if fit < 0 || c < caps[fit] || c == caps[fit] && order[j] < fit {
					fit = order[j]
				}
			}
		}
		if fit >= 0 {
			take[fit] = need
			return take
		}
		i := order[pos]
		take[i] = caps[i]
		need -= caps[i]
	}
	return take
}
