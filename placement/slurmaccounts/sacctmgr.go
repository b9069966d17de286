// Package slurmaccounts writes the placement budgets tree as a Slurm
// account hierarchy in the flat-file format of `sacctmgr load`
// (sacctmgr(1), FLAT FILE DUMP AND LOAD): a `Cluster - ` line, then,
// for each account with children (root first), a `Parent - ` line and
// one `Account - ` line per child with its Fairshare. Slurm then ranks
// the accounts with the shares toposcope ranks them with.
package slurmaccounts

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/placement"
)

// ErrInexpressible is wrapped when the budgets cannot be written for
// sacctmgr: an account name Slurm would change or cannot read, or shares
// that no whole Fairshare values keep in proportion. Nothing is written.
var ErrInexpressible = errors.New("budgets cannot be expressed as a sacctmgr file")

// namePattern is what the file holds unchanged: Slurm keeps names in
// lower case, and ':', '=', quotes and spaces are the file's syntax.
var namePattern = regexp.MustCompile(`^[a-z0-9_][a-z0-9_.-]*$`)

// maxScale bounds the power of ten that makes sibling shares whole:
// shares are kept to three decimals.
const maxScale = 1000

// File returns the sacctmgr load file of b for the Slurm cluster named
// cluster (its ClusterName). Siblings' shares are scaled by the same
// power of ten when some are fractional (1.5 and 3 become 15 and 30):
// Fair Tree and the classic factor read only the ratio of siblings'
// shares, so the ranking is unchanged. useParent is Fairshare=parent.
// Leaf accounts have no users: add `User - ` lines (or sacctmgr add
// user) for the people who submit under them.
func File(cluster string, b *placement.Budgets) ([]byte, error) {
	if !namePattern.MatchString(cluster) {
		return nil, fmt.Errorf("cluster %q: want lower case letters, digits, '_', '.' and '-': %w", cluster, ErrInexpressible)
	}
	if b == nil || len(b.Accounts) == 0 {
		return nil, fmt.Errorf("no accounts: %w", ErrInexpressible)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInexpressible, err)
	}
	values := map[string]string{}
	if err := assign(values, "root", b.Accounts); err != nil {
		return nil, err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "# Slurm accounts of the toposcope budgets tree: load with `sacctmgr load file=FILE`\n")
	fmt.Fprintf(&out, "# (add users under the leaf accounts; Fairshare is the accounts' shares, scaled per set of siblings to whole numbers).\n")
	fmt.Fprintf(&out, "Cluster - '%s':Fairshare=1\n", cluster)
	type family struct {
		parent string
		kids   []placement.AccountSpec
	}
	queue := []family{{"root", b.Accounts}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		fmt.Fprintf(&out, "Parent - '%s'\n", p.parent)
		for _, a := range p.kids {
			fmt.Fprintf(&out, "Account - '%s':Fairshare=%s\n", a.Name, values[a.Name])
			if len(a.Children) > 0 {
				queue = append(queue, family{a.Name, a.Children})
			}
		}
	}
	return []byte(out.String()), nil
}

// assign sets the Fairshare of parent's children and, below them, of
// every account: siblings are scaled together as Slurm ranks them, the
// children of a useParent account with its own siblings (Slurm reparents
// them for fair share to the first ancestor without Fairshare=parent).
func assign(values map[string]string, parent string, kids []placement.AccountSpec) error {
	var eff []placement.AccountSpec
	var flatten func(kids []placement.AccountSpec) error
	flatten = func(kids []placement.AccountSpec) error {
		for _, a := range kids {
			if !namePattern.MatchString(a.Name) || a.Name == "root" {
				return fmt.Errorf("account %q: Slurm keeps names in lower case and the file reserves ':', '=', quotes and spaces (and root is Slurm's own): %w", a.Name, ErrInexpressible)
			}
			if a.UseParent && len(a.Children) > 0 {
				values[a.Name] = "parent"
				if err := flatten(a.Children); err != nil {
					return err
				}
				continue
			}
			eff = append(eff, a)
		}
		return nil
	}
	if err := flatten(kids); err != nil {
		return err
	}
	shares, err := fairshares(eff)
	if err != nil {
		return fmt.Errorf("accounts ranked under %q: %w", parent, err)
	}
	for i, a := range eff {
		values[a.Name] = shares[i]
		if len(a.Children) > 0 {
			if err := assign(values, a.Name, a.Children); err != nil {
				return err
			}
		}
	}
	return nil
}

// fairshares returns the Fairshare values of siblings: "parent" for
// useParent, else the shares times the smallest power of ten (at most
// maxScale) that makes all of them whole.
func fairshares(kids []placement.AccountSpec) ([]string, error) {
	scale := 1
	for ; scale <= maxScale; scale *= 10 {
		whole := true
		for _, a := range kids {
			if v := a.EffectiveShares() * float64(scale); !a.UseParent && math.Abs(v-math.Round(v)) > 1e-9*math.Max(1, v) {
				whole = false
				break
			}
		}
		if whole {
			break
		}
	}
	if scale > maxScale {
		scale = maxScale // rounded to three decimals below
	}
	out := make([]string, len(kids))
	for i, a := range kids {
		if a.UseParent {
			out[i] = "parent"
			continue
		}
		v := math.Round(a.EffectiveShares() * float64(scale))
		if v > math.MaxUint32-1 || (v == 0 && a.EffectiveShares() > 0) {
			return nil, fmt.Errorf("account %q: shares %g has no whole Fairshare in proportion to its siblings': %w", a.Name, a.EffectiveShares(), ErrInexpressible)
		}
		out[i] = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return out, nil
}
