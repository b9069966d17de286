package kueuebudgets

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// Annotations on every object, saying where its numbers come from.
const (
	// AnnotationAccount is the budgets account the object stands for
	// (absent on the root Cohort).
	AnnotationAccount = "toposcope.io/account"
	// AnnotationNormShares is the account's normalized share of the
	// cluster (the product of its and its ancestors' sibling fractions).
	AnnotationNormShares = "toposcope.io/norm-shares"
)

// objects are the desired Cohorts (root first, then the accounts with
// children, in tree order) and ClusterQueues (one per leaf account) for
// b on a cluster of gpus accelerators.
type objects struct {
	cohorts, queues []*unstructured.Unstructured
	gpus            int
}

// build turns b into Kueue objects. It fails, wrapping
// engines.ErrInexpressible and naming the account, on what Kueue cannot
// say: a name that is not an object name, the root's name, useParent, or
// shares finer than a thousandth.
func (e *Engine) build(g *topology.Graph, b *engines.Budgets) (*objects, error) {
	if b.Empty() {
		return nil, fmt.Errorf("%s: %w (no accounts)", Name, engines.ErrNoBudgets)
	}
	gpus := 0
	for _, n := range g.Nodes() {
		gpus += n.GPUs
	}
	if gpus == 0 {
		return nil, fmt.Errorf("%s: the graph has no GPUs to divide: %w", Name, engines.ErrInexpressible)
	}
	accts := b.Accounts
	for _, a := range accts[1:] {
		if err := e.checkAccount(a); err != nil {
			return nil, err
		}
	}
	quota := apportion(accts, gpus)
	out := &objects{gpus: gpus}
	out.cohorts = append(out.cohorts, e.object("Cohort", e.cfg.Root, "", 0, map[string]any{}))
	for i := 1; i < len(accts); i++ {
		a := accts[i]
		parent := e.cfg.Root
		if p := accts[a.Parent]; a.Parent != 0 {
			parent = p.Name
		}
		weight := map[string]any{"weight": weightOf(a.Shares)}
		if len(a.Children) > 0 {
			out.cohorts = append(out.cohorts, e.object("Cohort", a.Name, a.Name, a.Norm,
				map[string]any{"parentName": parent, "fairSharing": weight}))
			continue
		}
		out.queues = append(out.queues, e.object("ClusterQueue", a.Name, a.Name, a.Norm, map[string]any{
			"cohortName":        parent,
			"namespaceSelector": map[string]any{},
			"queueingStrategy":  "BestEffortFIFO",
			"stopPolicy":        "None",
			"flavorFungibility": map[string]any{"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
			"preemption": map[string]any{
				"reclaimWithinCohort": "Any",
				"withinClusterQueue":  "LowerPriority",
				"borrowWithinCohort":  map[string]any{"policy": "Never"},
			},
			"fairSharing": weight,
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{e.cfg.Resource},
				"flavors": []any{map[string]any{
					"name": e.cfg.Flavor,
					"resources": []any{map[string]any{
						"name": e.cfg.Resource, "nominalQuota": strconv.Itoa(quota[i]),
					}},
				}},
			}},
		}))
	}
	return out, nil
}

// checkAccount refuses what Kueue cannot express.
func (e *Engine) checkAccount(a engines.BudgetAccount) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: account %q: %s: %w", Name, a.Name, fmt.Sprintf(format, args...), engines.ErrInexpressible)
	}
	if msgs := validation.IsDNS1123Subdomain(a.Name); len(msgs) > 0 {
		return fail("not a Kubernetes object name (lower case letters, digits, '-' and '.'): %v", msgs)
	}
	if a.Name == e.cfg.Root {
		return fail("is the root Cohort's name (set root to another name)")
	}
	if a.UseParent {
		return fail("useParent has no Kueue equivalent (give it shares)")
	}
	if a.Shares > 0 && math.Round(a.Shares*1000) == 0 {
		return fail("shares %g is below Kueue's weight precision (0.001)", a.Shares)
	}
	return nil
}

// weightOf is shares as a Kubernetes quantity string ("3", "500m").
func weightOf(shares float64) string {
	return resource.NewMilliQuantity(int64(math.Round(shares*1000)), resource.DecimalSI).String()
}

// apportion gives each leaf account its whole number of GPUs: its
// normalized share of gpus, rounded by largest remainder so that the
// leaves' quotas add up to the GPUs their shares cover (all of them
// unless some subtree has only zero shares). Ties go to the account
// first in the tree.
func apportion(accts []engines.BudgetAccount, gpus int) []int {
	quota := make([]int, len(accts))
	type rem struct {
		i    int
		frac float64
	}
	var rems []rem
	var sum float64
	given := 0
	for i, a := range accts {
		if i == 0 || len(a.Children) > 0 {
			continue
		}
		exact := a.Norm * float64(gpus)
		quota[i] = int(math.Floor(exact + 1e-9))
		given += quota[i]
		sum += exact
		rems = append(rems, rem{i, exact - float64(quota[i])})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.frac, a.frac) })
	for k := 0; k < int(math.Round(sum))-given && k < len(rems); k++ {
		quota[rems[k].i]++
	}
	return quota
}

// object is a managed Kueue object of kind with spec.
func (e *Engine) object(kind, name, account string, norm float64, spec map[string]any) *unstructured.Unstructured {
	meta := map[string]any{
		"name":   name,
		"labels": map[string]any{keys.ManagedBy: kubeclient.FieldManager},
	}
	if account != "" {
		meta["annotations"] = map[string]any{
			AnnotationAccount:    account,
			AnnotationNormShares: strconv.FormatFloat(norm, 'g', 6, 64),
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Group + "/" + Version,
		"kind":       kind,
		"metadata":   meta,
		"spec":       spec,
	}}
}
