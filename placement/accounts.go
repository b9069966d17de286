package placement

import (
	"errors"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
)

// AccountSpec is one budget in the YAML tree.
type AccountSpec struct {
	// Name is unique across the whole tree.
	Name string `yaml:"name" json:"name"`
	// Shares is the budget weight relative to the siblings; absent means
	// 1. Zero is allowed, as in Slurm: the account has no fair share of
	// its own (it is served after every account with shares).
	Shares *float64 `yaml:"shares" json:"shares,omitempty"`
	// UseParent is Slurm's Fairshare=parent: the account has no share of
	// its own. Under Fair Tree, a parent account's children rank as if
	// they were its parent's, and a user ranks first in its account; in
	// classic mode it takes its parent's factor. Shares must be absent.
	UseParent bool `yaml:"useParent,omitempty" json:"useParent,omitempty"`
	// Children are the sub-budgets (programs, projects, users).
	Children []AccountSpec `yaml:"children" json:"children,omitempty"`
}

// Budgets is the budgets file: the top-level accounts under an implicit root.
type Budgets struct {
	// Accounts are the first-tier accounts.
	Accounts []AccountSpec `yaml:"accounts" json:"accounts"`
}

// Validate reports empty or duplicate names and negative shares.
func (b *Budgets) Validate() error {
	seen := map[string]bool{}
	var errs []error
	var walk func(prefix string, specs []AccountSpec)
	walk = func(prefix string, specs []AccountSpec) {
		for i := range specs {
			s := &specs[i]
			field := fmt.Sprintf("%s[%d]", prefix, i)
			switch {
			case s.Name == "":
				errs = append(errs, config.Errorf(field+".name", "must not be empty"))
			case seen[s.Name]:
				errs = append(errs, config.Errorf(field+".name", "duplicate account %q", s.Name))
			}
			seen[s.Name] = true
			if s.Shares != nil && *s.Shares < 0 {
				errs = append(errs, config.Errorf(field+".shares", "must not be negative"))
			}
			if s.UseParent && s.Shares != nil {
				errs = append(errs, config.Errorf(field+".shares", "must be absent with useParent (the account has no share of its own)"))
			}
			walk(field+".children", s.Children)
		}
	}
	walk("accounts", b.Accounts)
	return errors.Join(errs...)
}

// ParseBudgets strictly decodes a budgets YAML document; errors name the
// key and line and wrap ErrInvalid and config.ErrInvalid.
func ParseBudgets(data []byte) (*Budgets, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: budgets: %w", ErrInvalid, err)
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	b := &Budgets{}
	if err := config.Decode(root, b, "budgets"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	defaultShares(b.Accounts)
	return b, nil
}

// Shares returns a shares value for AccountSpec.Shares.
func Shares(v float64) *float64 { return &v }

// EffectiveShares returns the account's shares, 1 when absent (the
// default the budgets read back say is in force).
func (s *AccountSpec) EffectiveShares() float64 {
	if s.Shares == nil {
		return 1
	}
	return *s.Shares
}

// defaultShares writes the default 1 into every account without shares,
// so that the budgets read back say what is in force.
func defaultShares(specs []AccountSpec) {
	for i := range specs {
		if specs[i].Shares == nil && !specs[i].UseParent {
			specs[i].Shares = Shares(1)
		}
		defaultShares(specs[i].Children)
	}
}

// Account is one node of a built Tree.
type Account struct {
	// Name is the account's name; "" for the root.
	Name string `json:"name"`
	// Parent is the index of the parent; -1 for the root.
	Parent int `json:"-"`
	// Children are the indexes of the children, in input order.
	Children []int `json:"-"`
	// Shares is the raw budget weight.
	Shares float64 `json:"shares"`
	// Norm is the normalized share S: the product of sibling fractions.
	Norm float64 `json:"normShares"`
	// Level is the fraction of the parent: Shares / Σ sibling Shares.
	Level float64 `json:"levelShares"`
	// UseParent is AccountSpec.UseParent; such an account has Level and
	// Norm 0 and is left out of its siblings' share sum.
	UseParent bool `json:"useParent,omitempty"`
}

// Tree is an immutable account tree. Index 0 is the root.
type Tree struct {
	accounts []Account
	index    map[string]int
	leaves   int
}

// NewTree builds a tree from validated budgets.
func NewTree(b *Budgets) (*Tree, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	t := &Tree{accounts: []Account{{Parent: -1, Shares: 1, Norm: 1, Level: 1}}, index: map[string]int{}}
	var add func(parent int, specs []AccountSpec)
	add = func(parent int, specs []AccountSpec) {
		var sum float64
		for _, s := range specs {
			if !s.UseParent {
				sum += s.EffectiveShares()
			}
		}
		for _, s := range specs {
			lvl, shares := 0.0, 0.0
			if !s.UseParent {
				shares = s.EffectiveShares()
			}
			if sum > 0 {
				lvl = shares / sum
			}
			i := len(t.accounts)
			t.accounts = append(t.accounts, Account{Name: s.Name, Parent: parent, Shares: shares,
				Level: lvl, Norm: t.accounts[parent].Norm * lvl, UseParent: s.UseParent})
			t.accounts[parent].Children = append(t.accounts[parent].Children, i)
			t.index[s.Name] = i
			if len(s.Children) == 0 {
				t.leaves++
			}
			add(i, s.Children)
		}
	}
	add(0, b.Accounts)
	return t, nil
}

// EqualTree gives every named account one share under the root: the tree
// used when no budgets are configured.
func EqualTree(names []string) *Tree {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	b := &Budgets{}
	for _, n := range names {
		if n != "" {
			b.Accounts = append(b.Accounts, AccountSpec{Name: n, Shares: Shares(1)})
		}
	}
	t, _ := NewTree(b) // cannot fail: names are unique, non-empty, shares 1
	return t
}

// Accounts returns every account, root first, in depth-first input order.
func (t *Tree) Accounts() []Account { return t.accounts }

// Lookup returns the index of the named account.
func (t *Tree) Lookup(name string) (int, bool) {
	i, ok := t.index[name]
	return i, ok
}

// Leaves returns the number of leaf accounts (Slurm's user associations).
func (t *Tree) Leaves() int { return t.leaves }

// Budgets returns the tree as a budgets document.
func (t *Tree) Budgets() *Budgets {
	var spec func(i int) AccountSpec
	spec = func(i int) AccountSpec {
		a := t.accounts[i]
		s := AccountSpec{Name: a.Name, Shares: Shares(a.Shares)}
		if a.UseParent {
			s.Shares, s.UseParent = nil, true
		}
		for _, c := range a.Children {
			s.Children = append(s.Children, spec(c))
		}
		return s
	}
	return &Budgets{Accounts: spec(0).Children}
}
