package plugins

import (
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/placement"
)

// EngineBudgets flattens placement budgets into the tree engines
// publish, shares normalized as the placement planner normalizes them;
// nil budgets give nil.
func EngineBudgets(b *placement.Budgets) (*engines.Budgets, error) {
	if b == nil {
		return nil, nil
	}
	t, err := placement.NewTree(b)
	if err != nil {
		return nil, err
	}
	accts := t.Accounts()
	out := &engines.Budgets{Accounts: make([]engines.BudgetAccount, len(accts))}
	for i, a := range accts {
		out.Accounts[i] = engines.BudgetAccount{Name: a.Name, Parent: a.Parent, Children: a.Children,
			Shares: a.Shares, Norm: a.Norm, UseParent: a.UseParent}
	}
	return out, nil
}
