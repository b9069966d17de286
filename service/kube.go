package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// Triggers and acceptors of the Kubernetes integration.
const (
	// TriggerNodes is a run started by the node watcher. Its engines
	// publish even when the graph is unchanged: a node that joined needs
	// its labels although the fabric is the same (publishing is
	// idempotent and writes only what differs).
	TriggerNodes = "nodes"
	// ByLeader marks a snapshot a follower adopted from the leader.
	ByLeader = "leader"
)

// republish reports whether a run started by trigger publishes an
// unchanged graph again.
func republish(trigger string) bool { return trigger == TriggerNodes }

// publishOne publishes g through eng; a Kubernetes engine is handed the
// shrink guard (kube.GuardedPublisher), every other engine publishes as
// it would anywhere. An engine of the budgets tree
// (engines.BudgetsPublisher) is given the budgets in force as well, and
// the guard when it takes one (kube.GuardedBudgetsPublisher); with no
// budgets set it publishes nothing (and says so), rather than deleting
// what it wrote from an earlier tree.
func (l *Loop) publishOne(ctx context.Context, eng engines.Engine, g *topology.Graph, accepted bool) error {
	guard := l.deps.KubeGuard
	var opts kube.ApplyOptions
	if guard != nil {
		opts.Guard = guard.Check
		if accepted {
			opts.Guard = guard.Record
		}
	}
	if bp, ok := eng.(engines.BudgetsPublisher); ok {
		b := l.budgets()
		if b == nil {
			l.log.Warn("no placement budgets are set (PUT /v1/budgets): the engine of the budgets tree publishes nothing")
			return nil
		}
		eb, err := plugins.EngineBudgets(b)
		if err != nil {
			return err
		}
		if gbp, ok := eng.(kube.GuardedBudgetsPublisher); ok && guard != nil {
			return gbp.PublishBudgetsWith(ctx, g, eb, opts)
		}
		return bp.PublishBudgets(ctx, g, eb)
	}
	gp, ok := eng.(kube.GuardedPublisher)
	if !ok || guard == nil {
		return eng.Publish(ctx, g)
	}
	return gp.PublishWith(ctx, g, opts)
}

// PublishBudgets publishes the budgets in force, on the current
// topology, through every engine of the budgets tree, at once (the
// server calls it after PUT /v1/budgets, so that a new tree need not
// wait for the next discovery run). With accept, the shrink guard lets
// the plan through (Record): the operator accepts a tree that deletes
// more of the engine's objects than discovery.shrinkGuard allows. It
// returns one result per such engine, none before the first topology.
// When every engine had published the current graph and each of these
// succeeds (and settles), the new budgets count as published: the next
// discovery of an unchanged graph publishes nothing.
func (l *Loop) PublishBudgets(ctx context.Context, accept bool) []store.EngineResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.State()
	if st.Graph == nil {
		return nil
	}
	var published string
	if st.Snapshot != nil && strings.HasPrefix(l.published, st.Snapshot.Digest+"+") {
		published = l.publishDigest(st.Snapshot.Digest) // before publishing: budgets may change meanwhile
	}
	var out []store.EngineResult
	for _, e := range l.engines {
		if _, ok := e.eng.(engines.BudgetsPublisher); !ok {
			continue
		}
		r := l.publishEngine(ctx, e, st.Graph, accept, "publish of the budgets failed")
		if r.Error != "" || r.Unsettled {
			published = ""
		}
		out = append(out, r)
	}
	if published != "" {
		l.published = published
	}
	return out
}

// budgets returns the budgets in force, nil without any.
func (l *Loop) budgets() *placement.Budgets {
	if l.deps.Budgets == nil {
		return nil
	}
	return l.deps.Budgets()
}

// publishDigest is what a publish of the graph with the given digest
// records as published: the graph's digest, followed, when an engine
// publishes the budgets tree, by the budgets' digest, so that a change of
// budgets alone is published at the next discovery run.
func (l *Loop) publishDigest(digest string) string {
	for _, e := range l.engines {
		if _, ok := e.eng.(engines.BudgetsPublisher); ok {
			data, err := json.Marshal(l.budgets())
			if err != nil {
				return digest + "+budgets?" // never equal to a recorded digest: publish again
			}
			sum := sha256.Sum256(data)
			return digest + "+" + hex.EncodeToString(sum[:8])
		}
	}
	return digest
}

// Adopt makes g, the leader's accepted topology, this replica's current
// one without discovering or publishing: a follower stores it as an
// accepted snapshot (AcceptedBy ByLeader, with its diff) so that it
// answers queries with it, and so that it guards its own first
// discovery against it when it takes over. An unchanged graph is a
// no-op. It reports whether the current snapshot changed.
func (l *Loop) Adopt(ctx context.Context, g *topology.Graph) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, err := g.MarshalJSON() // not json.Marshal(g): it would copy and keep the whole document again
	if err != nil {
		return false, fmt.Errorf("encode graph: %w", err)
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	st := l.State()
	if st.Snapshot != nil && st.Snapshot.Digest == digest {
		return false, nil
	}
	now := l.deps.Now()
	snap := &store.Snapshot{
		CreatedAt: now, Provider: l.deps.Provider.Name, Trigger: ByLeader, Digest: digest,
		Counts: store.CountsOf(g), Status: store.StatusAccepted, AcceptedAt: &now, AcceptedBy: ByLeader,
	}
	var diff *store.Diff
	if st.Snapshot != nil {
		diff = store.Compare(st.Graph, g)
		diff.From, snap.Parent, snap.Changes = st.Snapshot.ID, st.Snapshot.ID, diff.Summary()
	}
	if err := l.deps.Store.AddSnapshot(ctx, snap, data, diff, nil); err != nil {
		return false, err
	}
	l.setCurrent(snap, g)
	l.log.Info("adopted the leader's topology", "snapshot", snap.ID, "nodes", snap.Counts.Nodes, "switches", snap.Counts.Switches)
	l.prune(ctx)
	return true, nil
}
