package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
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
// it would anywhere.
func (l *Loop) publishOne(ctx context.Context, eng engines.Engine, g *topology.Graph, accepted bool) error {
	gp, ok := eng.(kube.GuardedPublisher)
	guard := l.deps.KubeGuard
	if !ok || guard == nil {
		return eng.Publish(ctx, g)
	}
	opts := kube.ApplyOptions{Guard: guard.Check}
	if accepted {
		opts.Guard = guard.Record
	}
	return gp.PublishWith(ctx, g, opts)
}

// Adopt makes g, the leader's accepted topology, this replica's current
// one without discovering or publishing: a follower stores it as an
// accepted snapshot (AcceptedBy ByLeader, with its diff) so that it
// answers queries with it, and so that it guards its own first
// discovery against it when it takes over. An unchanged graph is a
// no-op. It reports whether the current snapshot changed.
func (l *Loop) Adopt(g *topology.Graph) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, err := json.Marshal(g)
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
	if err := l.deps.Store.AddSnapshot(snap, data, diff, nil); err != nil {
		return false, err
	}
	l.setCurrent(snap, g)
	l.log.Info("adopted the leader's topology", "snapshot", snap.ID, "nodes", snap.Counts.Nodes, "switches", snap.Counts.Switches)
	l.prune()
	return true, nil
}
