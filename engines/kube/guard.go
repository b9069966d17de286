package kube

import (
	"context"
	"fmt"
	"sync"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/topology"
)

// GuardedPublisher is the optional ability of a Kubernetes engine to
// publish with options from its caller: the service hands its shrink
// guard to the engine's plan this way (found by type assertion), while
// engines.Engine.Publish publishes unguarded.
type GuardedPublisher interface {
	PublishWith(ctx context.Context, g *topology.Graph, opts ApplyOptions) error
}

// GuardedBudgetsPublisher is GuardedPublisher for an
// engines.BudgetsPublisher: the service hands its shrink guard to the
// plan of the budgets tree this way.
type GuardedBudgetsPublisher interface {
	PublishBudgetsWith(ctx context.Context, g *topology.Graph, b *engines.Budgets, opts ApplyOptions) error
}

// ShrinkGuard is the service's shrink guard on the Kubernetes side: it
// refuses a plan when, since the last plan it let through for the same
// engine, more than Limit of the nodes that were placed then are now
// refused (listed in Kubernetes but not placed by the graph), beyond
// what new nodes explain. The first plan of each engine sets the
// baseline. A plan with Result.Shrink (a tree of objects, not nodes) is
// weighed against the cluster instead: it is refused when it deletes
// more than Limit of the engine's objects it found there. A Limit of 1
// or more lets everything through.
type ShrinkGuard struct {
	limit float64
	mu    sync.Mutex
	last  map[string]guardBase
}

type guardBase struct {
	listed  int
	refused map[string]bool
}

// NewShrinkGuard returns a guard with the given limit (the service's
// discovery.shrinkGuard).
func NewShrinkGuard(limit float64) *ShrinkGuard {
	return &ShrinkGuard{limit: limit, last: map[string]guardBase{}}
}

// Check is a Guard: it refuses plan, or records it as the new baseline.
func (s *ShrinkGuard) Check(_ context.Context, _ *topology.Graph, plan *Result) error {
	if sh := plan.Shrink; sh != nil {
		if s.limit < 1 && sh.Had > 0 && sh.Removed > 0 && float64(sh.Removed)/float64(sh.Had) > s.limit {
			return fmt.Errorf("the plan deletes %d of the %d %s toposcope wrote (shrinkGuard allows %.1f%%)%s",
				sh.Removed, sh.Had, sh.Kind, 100*s.limit, hint(sh.Accept))
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := plan.Changed + plan.Unchanged + len(plan.Refused)
	if base, ok := s.last[plan.Engine]; ok && s.limit < 1 {
		placed := base.listed - len(base.refused)
		lost := 0
		for _, n := range plan.Refused {
			if !base.refused[n] {
				lost++
			}
		}
		lost -= max(0, listed-base.listed) // new nodes the graph does not know yet
		if placed > 0 && lost > 0 && float64(lost)/float64(placed) > s.limit {
			return fmt.Errorf("%d of the %d nodes placed by the last publish are no longer placed by the graph (shrinkGuard allows %.1f%%)",
				lost, placed, 100*s.limit)
		}
	}
	s.record(plan, listed)
	return nil
}

// hint is "; <how to accept>" or "".
func hint(accept string) string {
	if accept == "" {
		return ""
	}
	return "; " + accept
}

// Record is a Guard that lets plan through and makes it the baseline, for
// a publish an operator accepted.
func (s *ShrinkGuard) Record(_ context.Context, _ *topology.Graph, plan *Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record(plan, plan.Changed+plan.Unchanged+len(plan.Refused))
	return nil
}

func (s *ShrinkGuard) record(plan *Result, listed int) {
	refused := make(map[string]bool, len(plan.Refused))
	for _, n := range plan.Refused {
		refused[n] = true
	}
	s.last[plan.Engine] = guardBase{listed: listed, refused: refused}
}
