package engines

// Budgets is the fair-share account tree an engine of the budgets tree
// publishes (BudgetsPublisher), flattened: index 0 is the root, every
// other account names its parent's index. The service builds it from
// the placement budgets (plugins.EngineBudgets), so that engines need
// not know how shares are normalized.
type Budgets struct {
	Accounts []BudgetAccount
}

// BudgetAccount is one account of Budgets.
type BudgetAccount struct {
	// Name is the account's name; "" for the root.
	Name string
	// Parent is the index of the parent; -1 for the root.
	Parent int
	// Children are the indexes of the children, in input order.
	Children []int
	// Shares is the raw budget weight among siblings.
	Shares float64
	// Norm is the normalized share: the product of sibling fractions.
	Norm float64
	// UseParent is Slurm's Fairshare=parent: no share of its own.
	UseParent bool
}

// Empty reports whether b has no account beside the root.
func (b *Budgets) Empty() bool { return b == nil || len(b.Accounts) <= 1 }
