package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// install compares a discovered graph with the current one and accepts,
// refuses or ignores it, then records the run.
func (l *Loop) install(ctx context.Context, run *store.Run, g *topology.Graph) error {
	data, err := g.MarshalJSON() // not json.Marshal(g): it would copy and keep the whole document again
	if err != nil {
		run.Outcome, run.Error = store.OutcomeFailed, err.Error()
		return errors.Join(fmt.Errorf("encode graph: %w", err), l.record(ctx, run, false))
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	counts := store.CountsOf(g)
	run.Counts = &counts
	st := l.State()

	if st.Snapshot != nil && st.Snapshot.Digest == digest {
		run.Outcome, run.Snapshot = store.OutcomeUnchanged, st.Snapshot.ID
		if l.published != l.publishDigest(digest) || republish(run.Trigger) {
			run.Engines = l.publish(ctx, st.Graph, digest, false)
		}
		if st.Pending != nil {
			l.log.Info("shrink guard: topology recovered", "pending", st.Pending.ID)
		}
		err := l.record(ctx, run, st.Pending != nil)
		// The discovered copy and its encoding are garbage: give their
		// memory back, as after a change (below).
		debug.FreeOSMemory()
		return err
	}

	var diff *store.Diff
	snap := &store.Snapshot{
		CreatedAt: l.deps.Now(), Provider: l.deps.Provider.Name, Trigger: run.Trigger,
		Digest: digest, Counts: counts, Status: store.StatusAccepted,
	}
	if st.Snapshot != nil {
		diff = store.Compare(st.Graph, g)
		diff.From, snap.Parent, snap.Changes = st.Snapshot.ID, st.Snapshot.ID, diff.Summary()
		base, from := l.shrinkBaseline(ctx, st.Snapshot)
		if reason := shrinkReason(base, counts, l.deps.Config.ShrinkGuard); reason != "" {
			return l.refuse(ctx, run, st, snap, data, diff, reason+from)
		}
	}
	at := snap.CreatedAt
	snap.AcceptedAt, snap.AcceptedBy = &at, store.ByDiscovery
	if err := l.deps.Store.AddSnapshot(ctx, snap, data, diff, nil); err != nil {
		run.Outcome, run.Error = store.OutcomeFailed, err.Error()
		return errors.Join(err, l.record(ctx, run, false))
	}
	l.setCurrent(snap, g)
	l.log.Info("topology changed", "snapshot", snap.ID, "nodes", counts.Nodes, "switches", counts.Switches,
		"domains", counts.Domains, "nodesAdded", snap.Changes.NodesAdded, "nodesRemoved", snap.Changes.NodesRemoved,
		"nodesMoved", snap.Changes.NodesMoved)
	run.Outcome, run.Snapshot = store.OutcomePublished, snap.ID
	run.Engines = l.publish(ctx, g, digest, false)
	markPublishFailed(run)
	err = l.record(ctx, run, false)
	l.prune(ctx)
	// The previous graph and the discovery's garbage are gone; give the
	// memory back rather than keep a peak twice the graph's size.
	debug.FreeOSMemory()
	return err
}

// shrinkBaseline returns what the shrink guard compares a discovery
// with: the most nodes and switches of the accepted snapshots within
// discovery.shrinkWindow (the current one always among them), so that a
// fabric that shrinks a little at a time is refused once the losses add
// up. An operator's accept starts the window anew: the snapshots before
// the newest one an operator accepted are not counted, so a phantom
// switch that the accepted topology dropped is not held against the
// discoveries after it. The text says where the baseline comes from
// when it is not the current snapshot.
func (l *Loop) shrinkBaseline(ctx context.Context, cur *store.Snapshot) (store.Counts, string) {
	base, from := cur.Counts, ""
	window := l.deps.Config.ShrinkWindow
	if window <= 0 {
		return base, ""
	}
	since := l.deps.Now().Add(-window)
	const page = 256
	var before uint64
	for {
		list, err := l.deps.Store.Snapshots(ctx, page, before)
		if err != nil {
			l.log.Warn("shrink guard: reading earlier snapshots", "err", err)
			return base, from
		}
		for _, s := range list {
			if s.CreatedAt.Before(since) {
				return base, from
			}
			if s.Status != store.StatusAccepted {
				continue
			}
			if s.Counts.Nodes > base.Nodes || s.Counts.Switches > base.Switches {
				base.Nodes, base.Switches = max(base.Nodes, s.Counts.Nodes), max(base.Switches, s.Counts.Switches)
				from = fmt.Sprintf(" (against the largest topology accepted within discovery.shrinkWindow %s, snapshot %d)", window, s.ID)
			}
			if s.AcceptedBy == store.ByOperator {
				return base, from
			}
		}
		if len(list) < page {
			return base, from
		}
		before = list[len(list)-1].ID
	}
}

// markPublishFailed turns a published run whose engines all failed into
// OutcomePublishFailed: the topology is current, but no consumer has it.
func markPublishFailed(run *store.Run) {
	if len(run.Engines) == 0 {
		return
	}
	var errs []string
	for _, e := range run.Engines {
		if e.Error == "" {
			return
		}
		errs = append(errs, e.Engine+": "+e.Error)
	}
	run.Outcome, run.Error = store.OutcomePublishFailed, "every engine failed: "+strings.Join(errs, "; ")
}

// shrinkReason says why a graph of counts next shrank too much from the
// last accepted cur, or "".
func shrinkReason(cur, next store.Counts, limit float64) string {
	if limit >= 1 {
		return ""
	}
	check := func(what string, was, now int) string {
		if was == 0 || now >= was {
			return ""
		}
		if lost := float64(was-now) / float64(was); lost > limit {
			return fmt.Sprintf("%s fell from %d to %d (%.1f%% lost, shrinkGuard allows %.1f%%)", what, was, now, 100*lost, 100*limit)
		}
		return ""
	}
	if r := check("nodes", cur.Nodes, next.Nodes); r != "" {
		return r
	}
	return check("switches", cur.Switches, next.Switches)
}

// refuse keeps the current topology and records the refused one as
// pending (once per distinct graph).
func (l *Loop) refuse(ctx context.Context, run *store.Run, st *State, snap *store.Snapshot, data []byte, diff *store.Diff, reason string) error {
	l.deps.Metrics.refusals.Inc()
	l.deps.Metrics.setRefusing(true)
	run.Outcome, run.Error = store.OutcomeRefused, reason
	if st.Pending != nil && st.Pending.Digest == snap.Digest {
		run.Snapshot = st.Pending.ID
		l.refusedLog(st.Snapshot.ID, st.Pending.ID, reason)
		return l.record(ctx, run, false)
	}
	snap.Status, snap.Reason = store.StatusRefused, reason
	if err := l.deps.Store.AddSnapshot(ctx, snap, data, diff, nil); err != nil {
		return errors.Join(err, l.record(ctx, run, false))
	}
	run.Snapshot = snap.ID
	l.refusedLog(st.Snapshot.ID, snap.ID, reason)
	next := *l.State()
	next.Pending = snap
	l.state.Store(&next)
	return l.record(ctx, run, false)
}

// CheckPublish implements PublishGuard: g, which an API request is about
// to publish through a configured engine, must not shrink more than the
// shrink guard allows against the largest topology accepted within the
// window, and no refused topology may be pending.
func (l *Loop) CheckPublish(ctx context.Context, g *topology.Graph) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.State()
	if st.Pending != nil {
		return fmt.Errorf("%w: snapshot %d is pending an operator's accept (%s)", ErrShrinkRefused, st.Pending.ID, AcceptRequest(st.Pending.ID))
	}
	if st.Snapshot == nil {
		return nil
	}
	base, from := l.shrinkBaseline(ctx, st.Snapshot)
	if reason := shrinkReason(base, store.CountsOf(g), l.deps.Config.ShrinkGuard); reason != "" {
		return fmt.Errorf("%w: %s%s", ErrShrinkRefused, reason, from)
	}
	return nil
}

// RequestPublished implements PublishGuard: the engines' outputs may no
// longer be the current snapshot's, so the next discovery publishes it
// again even when the topology is unchanged.
func (l *Loop) RequestPublished() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.published = ""
}

// AcceptRequest is the request that accepts the pending snapshot id, for
// logs and GET /v1/status.
func AcceptRequest(id uint64) string {
	return fmt.Sprintf("POST /v1/snapshots/%d/accept (with a write token)", id)
}

// refusedLog tells the operator what was refused and how to accept it.
func (l *Loop) refusedLog(current, pending uint64, reason string) {
	l.log.Warn("shrink guard refused the discovered topology; the current one stays until it recovers or an operator accepts",
		"current", current, "pending", pending, "reason", reason, "accept", AcceptRequest(pending))
}

// Accept makes the pending snapshot id current, as an operator
// confirming a refused discovery, and publishes it with ctx.
func (l *Loop) Accept(ctx context.Context, id uint64) (*store.Snapshot, *store.Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.refreshLocked(ctx); err != nil {
		return nil, nil, err
	}
	g, err := l.deps.Store.Graph(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	snap, err := l.deps.Store.AcceptPending(ctx, id, l.deps.Now(), store.ByOperator)
	if err != nil {
		return nil, nil, err
	}
	l.log.Warn("operator accepted a refused topology", "snapshot", id, "nodes", snap.Counts.Nodes)
	l.setCurrent(snap, g)
	next := *l.State()
	next.Pending = nil
	l.state.Store(&next)
	l.deps.Metrics.setRefusing(false)
	counts := snap.Counts
	run := &store.Run{
		StartedAt: l.deps.Now(), Trigger: TriggerAccept, Provider: snap.Provider,
		Outcome: store.OutcomePublished, Snapshot: id, Counts: &counts,
	}
	run.Engines = l.publish(ctx, g, snap.Digest, true)
	markPublishFailed(run)
	return snap, run, l.record(ctx, run, false)
}

func (l *Loop) setCurrent(snap *store.Snapshot, g *topology.Graph) {
	next := *l.State()
	next.Snapshot, next.Graph = snap, g
	if next.Pending != nil && snap.Status == store.StatusAccepted && snap.AcceptedBy == store.ByDiscovery {
		next.Pending = nil // a good discovery ends a refusal
		l.deps.Metrics.setRefusing(false)
	}
	l.state.Store(&next)
	l.deps.Metrics.current(snap.Counts)
}

// publish hands g to every engine in order; a failing engine does not
// stop the others. It remembers digest when all succeeded and settled
// (engines.Settler), so that an unchanged graph is not published again.
// Kubernetes engines get the shrink guard as an explicit option: Check
// for a discovery, Record (let through, new baseline) when an operator
// accepted the graph.
func (l *Loop) publish(ctx context.Context, g *topology.Graph, digest string, accepted bool) []store.EngineResult {
	out := make([]store.EngineResult, 0, len(l.engines))
	published := l.publishDigest(digest) // before publishing: budgets may change meanwhile
	ok := true
	for _, e := range l.engines {
		r := l.publishEngine(ctx, e, g, accepted, "publish failed")
		ok = ok && r.Error == "" && !r.Unsettled
		out = append(out, r)
	}
	if ok {
		l.published = published
	}
	return out
}

// publishEngine publishes g through e (publishOne) and returns its
// result, timed and counted in the metrics; a failure is logged with
// msg. The result counts the nodes the engine leaves out
// (engines.CoverageReporter), and is Unsettled when the engine left work
// for a later publish (engines.Settler): then the graph does not count
// as published.
func (l *Loop) publishEngine(ctx context.Context, e namedEngine, g *topology.Graph, accepted bool, msg string) store.EngineResult {
	start := time.Now()
	r := store.EngineResult{Engine: e.name}
	if cr, is := e.eng.(engines.CoverageReporter); is {
		r.Uncovered = len(cr.Coverage(g).Uncovered)
	}
	if err := l.publishOne(ctx, e.eng, g, accepted); err != nil {
		r.Error = err.Error()
		l.log.Error(msg, "engine", e.name, "err", err)
	} else if st, is := e.eng.(engines.Settler); is && !st.Settled() {
		r.Unsettled = true
		l.log.Info("engine left work for a later publish; the next discovery publishes again", "engine", e.name)
	}
	r.DurationSeconds = time.Since(start).Seconds()
	l.deps.Metrics.published(r)
	return r
}

func (l *Loop) prune(ctx context.Context) {
	p, err := l.deps.Store.Prune(ctx, l.deps.Now(), l.deps.Retention)
	if err != nil {
		l.log.Warn("prune store", "err", err)
		return
	}
	if p != (store.Pruned{}) {
		l.log.Debug("pruned store", "snapshots", p.Snapshots, "results", p.Results, "runs", p.Runs)
	}
}
