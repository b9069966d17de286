package placement

import (
	"cmp"
	"math"
	"slices"
)

// LevelFairShare returns Slurm Fair Tree's LF per account (fairshare.md
// §2.5): (Shares/Σ sibling Shares) / (U/Σ sibling U), +Inf with no usage,
// and 0 for an account with no shares. Siblings are the effective
// children (a useParent account's children count as its parent's); a
// useParent user has LF +Inf and no part of the share sum, and its usage
// counts in the sibling usage. usage is the subtree usage per account
// index.
func LevelFairShare(t *Tree, usage []float64) []float64 {
	lf := make([]float64, len(t.accounts))
	for i := range lf {
		lf[i] = math.Inf(1)
	}
	for p := range t.accounts {
		if t.accounts[p].UseParent && p != 0 {
			continue // its children are ranked with its parent's
		}
		kids := t.effectiveChildren(p)
		var su, ss float64
		for _, c := range kids {
			su += usage[c]
			ss += t.accounts[c].Shares
		}
		for _, c := range kids {
			switch {
			case t.accounts[c].UseParent:
				lf[c] = math.Inf(1)
			case t.accounts[c].Shares == 0 || ss == 0:
				lf[c] = 0 // no shares: no fair share, whatever the usage (as Slurm)
			case usage[c] <= 0 || su <= 0:
				lf[c] = math.Inf(1)
			default:
				lf[c] = (t.accounts[c].Shares / ss) / (usage[c] / su)
			}
		}
	}
	return lf
}

// effectiveChildren returns p's children with every useParent account
// that has children replaced by its own effective children.
func (t *Tree) effectiveChildren(p int) []int {
	var out []int
	for _, c := range t.accounts[p].Children {
		if t.accounts[c].UseParent && len(t.accounts[c].Children) > 0 {
			out = append(out, t.effectiveChildren(c)...)
			continue
		}
		out = append(out, c)
	}
	return out
}

// FairTreeRanks runs the Fair Tree ranking: effective children visited
// depth-first by LF descending; leaf i gets rank[i] (n for the best, 1
// for the worst) and FairShare rank/n. Ties follow Slurm (its regression
// test test24.4): tied siblings share a rank, users before accounts; the
// users of a tie take the current rank, and so does the highest group of
// the tied accounts' merged children; the rank then drops by the number
// of users that took it. Non-leaf accounts get the rank of their highest
// leaf.
func FairTreeRanks(t *Tree, lf []float64) (rank []int, fairShare []float64) {
	rank = make([]int, len(t.accounts))
	next := t.leaves
	isLeaf := func(a int) bool { return len(t.accounts[a].Children) == 0 }
	var visit func(group []int, carry int) int
	visit = func(group []int, carry int) int {
		group = slices.Clone(group)
		slices.SortStableFunc(group, func(a, b int) int {
			return cmp.Or(cmp.Compare(lf[b], lf[a]), cmp.Compare(boolInt(!isLeaf(a)), boolInt(!isLeaf(b))),
				cmp.Compare(t.accounts[a].Name, t.accounts[b].Name))
		})
		top, pending := 0, carry
		if len(group) == 0 {
			next -= pending
			return next
		}
		for i := 0; i < len(group); {
			j := i
			for j < len(group) && lf[group[j]] == lf[group[i]] {
				j++
			}
			r := next
			var merged, accts []int
			for _, a := range group[i:j] {
				if isLeaf(a) {
					rank[a] = r
					pending++
					continue
				}
				accts = append(accts, a)
				merged = append(merged, t.effectiveChildren(a)...)
			}
			if len(accts) > 0 {
				visit(merged, pending)
				for _, a := range accts {
					rank[a] = r
				}
			} else {
				next -= pending
			}
			pending = 0
			if top == 0 {
				top = r
			}
			i = j
		}
		return top
	}
	visit(t.effectiveChildren(0), 0)
	fairShare = make([]float64, len(t.accounts))
	for i := range rank {
		if t.leaves > 0 {
			fairShare[i] = float64(rank[i]) / float64(t.leaves)
		}
	}
	return rank, fairShare
}

// FairShares returns every account's Fair Tree FairShare (rank/#leaves)
// from each account's own usage (indexed as Accounts).
func (t *Tree) FairShares(own []float64) []float64 {
	_, fs := FairTreeRanks(t, LevelFairShare(t, subtreeUsage(t, own)))
	return fs
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
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
		switch {
		case a.UseParent && a.Parent != 0:
			ue[i], f[i] = ue[a.Parent], f[a.Parent] // Slurm's Fairshare=parent
			continue
		case a.Parent == 0:
			ue[i] = u
		default:
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
