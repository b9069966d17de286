package placement

import (
	"cmp"
	"math"
	"slices"
)

// LevelFairShare returns Slurm Fair Tree's LF per account (fairshare.md
// §2.5): (Shares/Σ sibling Shares) / (U/Σ sibling U), +Inf with no usage,
// and 0 for an account with no shares.
// usage is the subtree usage per account index.
func LevelFairShare(t *Tree, usage []float64) []float64 {
	lf := make([]float64, len(t.accounts))
	lf[0] = math.Inf(1)
	for p := range t.accounts {
		var su float64
		for _, c := range t.accounts[p].Children {
			su += usage[c]
		}
		for _, c := range t.accounts[p].Children {
			if t.accounts[c].Level == 0 {
				lf[c] = 0 // no shares: no fair share, whatever the usage (as Slurm)
				continue
			}
			if usage[c] <= 0 || su <= 0 {
				lf[c] = math.Inf(1)
				continue
			}
			lf[c] = t.accounts[c].Level / (usage[c] / su)
		}
	}
	return lf
}

// FairTreeRanks runs the Fair Tree ranking: children visited depth-first
// by LF descending; leaf i gets rank[i] (n for the best, 1 for the worst)
// and FairShare rank/n. Ties follow Slurm: tied sibling leaves share a
// rank, tied sibling accounts have their children merged, and a leaf tied
// with an account gets the rank of that account's highest leaf. Non-leaf
// accounts get the rank of their highest leaf.
func FairTreeRanks(t *Tree, lf []float64) (rank []int, fairShare []float64) {
	rank = make([]int, len(t.accounts))
	next := t.leaves
	var visit func(group []int) int
	visit = func(group []int) int {
		group = slices.Clone(group)
		slices.SortStableFunc(group, func(a, b int) int {
			return cmp.Or(cmp.Compare(lf[b], lf[a]), cmp.Compare(t.accounts[a].Name, t.accounts[b].Name))
		})
		top := 0
		for i := 0; i < len(group); {
			j := i
			for j < len(group) && lf[group[j]] == lf[group[i]] {
				j++
			}
			var leaves, merged []int
			var accts []int
			for _, a := range group[i:j] {
				if len(t.accounts[a].Children) == 0 {
					leaves = append(leaves, a)
				} else {
					accts = append(accts, a)
					merged = append(merged, t.accounts[a].Children...)
				}
			}
			r := next
			if len(merged) > 0 {
				r = visit(merged)
				for _, a := range accts {
					rank[a] = r
				}
			}
			for _, a := range leaves {
				rank[a] = r
			}
			next -= len(leaves)
			if top == 0 {
				top = r
			}
			i = j
		}
		return top
	}
	visit(t.accounts[0].Children)
	fairShare = make([]float64, len(t.accounts))
	for i := range rank {
		if t.leaves > 0 {
			fairShare[i] = float64(rank[i]) / float64(t.leaves)
		}
	}
	return rank, fairShare
}

// Classic returns Slurm's classic effective usage U_E and factor
// F = 2^(-U_E/S) per account (fairshare.md §2.4). usage is the subtree
// usage per account and total the cluster's total usage (R_H, which may
// exceed the tree's own usage); U = usage/total. First-tier
// accounts use U_E = U; below, U_E = U + (U_E,parent − U)·S_child/S_siblings.
func Classic(t *Tree, usage []float64, total float64) (ue, f []float64) {
	n := len(t.accounts)
	ue, f = make([]float64, n), make([]float64, n)
	norm := func(i int) float64 {
		if total <= 0 {
			return 0
		}
		return usage[i] / total
	}
	// accounts are stored parents before children.
	for i := 1; i < n; i++ {
		a := &t.accounts[i]
		u := norm(i)
		if a.Parent == 0 {
			ue[i] = u
		} else {
			ue[i] = u + (ue[a.Parent]-u)*a.Level
		}
		if a.Norm > 0 {
			f[i] = math.Exp2(-ue[i] / a.Norm)
		}
	}
	return ue, f
}

// subtreeUsage adds each account's own usage into its ancestors.
func subtreeUsage(t *Tree, own []float64) []float64 {
	u := slices.Clone(own)
	for i := len(t.accounts) - 1; i > 0; i-- {
		u[t.accounts[i].Parent] += u[i]
	}
	return u
}
