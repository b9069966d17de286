// Package service is toposcope's service without its HTTP front: the
// discovery loop (discover, validate, diff against the last snapshot,
// guard against shrinking, publish only on change, record the outcome),
// the Topograph-compatible asynchronous requests of POST /v1/generate,
// the Kubernetes node watcher, leader election and follower, and New,
// which builds all of it from the configuration. It knows nothing about
// HTTP; package server maps its errors to statuses.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// Triggers: what started a run.
const (
	TriggerStartup  = "startup"
	TriggerInterval = "interval"
	TriggerAPI      = "api"
	TriggerSIGHUP   = "sighup"
	TriggerFile     = "file"
	TriggerAccept   = "accept"
)

// State is what the loop currently holds. It is immutable: the loop
// replaces it whole.
type State struct {
	// Snapshot and Graph are the current (accepted) topology; nil before
	// the first one.
	Snapshot *store.Snapshot
	Graph    *topology.Graph
	// Pending is the snapshot the shrink guard refused, awaiting an
	// operator's accept; nil when none.
	Pending *store.Snapshot
	// LastRun is the newest run record; nil before the first.
	LastRun *store.Run
	// Failures counts the discoveries that failed in a row, up to
	// LastRun (0 once one succeeds).
	Failures int
}

// LoopDeps are what a Loop needs.
type LoopDeps struct {
	Registry *plugins.Registry
	Store    *store.Store
	Logger   *slog.Logger
	Now      func() time.Time
	Metrics  *Metrics
	Limiter  *Limiter
	// Provider and Engines are the configured plugins.
	Provider config.Plugin
	Engines  []config.Plugin
	// Config and Retention are the discovery and store settings.
	Config    config.Discovery
	Retention config.Retention
	// Stdout is given to engines with no output of their own.
	Stdout io.Writer
	// KubeGuard, when set, is handed to Kubernetes engines as their
	// ApplyOptions.Guard (see kube.go).
	KubeGuard *kube.ShrinkGuard
	// Budgets, when set, returns the placement budgets in force (nil when
	// none are set), for the engines of the budgets tree
	// (engines.BudgetsPublisher; see kube.go).
	Budgets func() *placement.Budgets
}

// Loop keeps the current topology up to date. Build it with newLoop,
// call Load, then Run.
type Loop struct {
	deps    LoopDeps
	log     *slog.Logger
	engines []namedEngine
	state   atomic.Pointer[State]
	kick    chan string

	mu        sync.Mutex // serializes runs and accepts
	published string     // digest last published to every engine
}

type namedEngine struct {
	name string
	eng  engines.Engine
}

// newLoop validates the configured plugins (building the provider once
// to check its parameters) and returns the loop.
func newLoop(deps LoopDeps) (*Loop, error) {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Stdout == nil {
		deps.Stdout = io.Discard
	}
	l := &Loop{deps: deps, log: deps.Logger.With("component", "discovery"), kick: make(chan string, 1)}
	if _, err := l.newProvider(); err != nil {
		return nil, err
	}
	for i, e := range deps.Engines {
		eng, err := deps.Registry.NewEngine(e.Name, fmt.Sprintf("engines[%d]", i), &e.Params, engines.Deps{
			Logger: deps.Logger.With("engine", e.Name), Stdout: deps.Stdout, Now: deps.Now,
		})
		if err != nil {
			return nil, err
		}
		l.engines = append(l.engines, namedEngine{e.Name, eng})
	}
	l.state.Store(&State{})
	return l, nil
}

// newProvider builds the provider afresh: a run holds it (and whatever
// it loaded) only while it discovers.
func (l *Loop) newProvider() (providers.Provider, error) {
	name := l.deps.Provider.Name
	return l.deps.Registry.NewProvider(name, "provider", &l.deps.Provider.Params,
		providerDeps(l.deps.Logger, l.deps.Now, l.deps.Store, l.deps.Metrics, name))
}

// ProviderName returns the configured provider's name.
func (l *Loop) ProviderName() string { return l.deps.Provider.Name }

// EngineNames returns the configured engines' names, in publish order.
func (l *Loop) EngineNames() []string {
	out := make([]string, len(l.engines))
	for i, e := range l.engines {
		out[i] = e.name
	}
	return out
}

// State returns the current state; never nil.
func (l *Loop) State() *State { return l.state.Load() }

// Ready returns nil when the service may take traffic: a topology is
// current (else ErrNoTopology) and fewer than Discovery.UnreadyAfter
// discoveries failed in a row since (else ErrDiscoveryFailing).
func (l *Loop) Ready() error {
	st := l.State()
	if st.Graph == nil {
		return ErrNoTopology
	}
	if n := l.deps.Config.UnreadyAfter; n > 0 && st.Failures >= n {
		// The runs' errors stay behind a read token (GET /v1/runs):
		// /readyz needs none.
		return fmt.Errorf("%w: %d in a row, serving an older topology (see GET /v1/runs)", ErrDiscoveryFailing, st.Failures)
	}
	return nil
}

// Load restores the current and the pending snapshot from the store, so
// that the service answers queries before its first discovery.
func (l *Loop) Load(ctx context.Context) error {
	st, _, err := l.readHeads(ctx, State{})
	if err != nil {
		return err
	}
	if runs, err := l.deps.Store.Runs(ctx, 1); err == nil && len(runs) == 1 {
		st.LastRun = &runs[0]
	}
	l.state.Store(&st)
	return nil
}

// readHeads returns st with the store's current and pending snapshot,
// reading a snapshot and its graph only when it is not st's already, and
// whether they changed.
func (l *Loop) readHeads(ctx context.Context, st State) (State, bool, error) {
	cur, pend, err := l.deps.Store.Heads(ctx)
	if err != nil {
		return st, false, err
	}
	if idOf(st.Snapshot) == cur && idOf(st.Pending) == pend {
		return st, false, nil
	}
	if idOf(st.Snapshot) != cur {
		st.Snapshot, st.Graph = nil, nil
		if cur != 0 {
			if st.Snapshot, err = l.deps.Store.Snapshot(ctx, cur); err != nil {
				return st, false, err
			}
			if st.Graph, err = l.deps.Store.Graph(ctx, cur); err != nil {
				return st, false, err
			}
			l.deps.Metrics.current(st.Snapshot.Counts)
		}
	}
	st.Pending = nil
	if pend != 0 {
		if st.Pending, err = l.deps.Store.Snapshot(ctx, pend); err != nil {
			return st, false, err
		}
	}
	l.deps.Metrics.setRefusing(st.Pending != nil)
	return st, true, nil
}

// Trigger asks the loop for a discovery soon. Requests made while one is
// already queued are merged. It reports false when triggers of that kind
// are turned off.
func (l *Loop) Trigger(reason string) bool {
	if reason == TriggerAPI && !l.deps.Config.Triggers.API {
		return false
	}
	select {
	case l.kick <- reason:
	default:
	}
	return true
}

// Run discovers on every trigger until ctx is done; a discovery in
// progress is cancelled through ctx.
func (l *Loop) Run(ctx context.Context) {
	cfg := l.deps.Config
	if cfg.Triggers.Startup {
		l.Trigger(TriggerStartup)
	}
	var tick <-chan time.Time
	if cfg.Interval > 0 {
		t := time.NewTicker(cfg.Interval)
		defer t.Stop()
		tick = t.C
	}
	var watch <-chan time.Time
	w := newWatcher(cfg.Triggers.WatchFiles)
	if w != nil {
		t := time.NewTicker(cfg.Triggers.WatchInterval)
		defer t.Stop()
		watch = t.C
	}
	for {
		var reason string
		select {
		case <-ctx.Done():
			return
		case reason = <-l.kick:
		case <-tick:
			reason = TriggerInterval
		case <-watch:
			if !w.changed() {
				continue
			}
			reason = TriggerFile
		}
		if (reason == TriggerAPI || reason == TriggerSIGHUP) && !l.debounce(ctx) {
			return
		}
		if _, err := l.RunOnce(ctx, reason); err != nil && ctx.Err() == nil {
			l.log.Warn("discovery failed", "trigger", reason, "err", err)
		}
	}
}

// debounce waits Triggers.Debounce, merging the triggers that arrive
// meanwhile; it reports false when ctx ended first.
func (l *Loop) debounce(ctx context.Context) bool {
	d := l.deps.Config.Triggers.Debounce
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-l.kick: // merged into the coming discovery
		case <-t.C:
			return true
		}
	}
}

// RunOnce discovers now and returns the run record.
func (l *Loop) RunOnce(ctx context.Context, trigger string) (*store.Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	run := &store.Run{StartedAt: l.deps.Now(), Trigger: trigger, Provider: l.deps.Provider.Name}
	if _, err := l.refreshLocked(ctx); err != nil { // compare with what the shared store holds now
		return nil, fmt.Errorf("read the shared store before discovering: %w", err)
	}
	if err := l.deps.Limiter.Acquire(ctx); err != nil {
		return nil, err
	}
	defer l.deps.Limiter.Release()
	ctx, cancel := context.WithTimeout(ctx, l.deps.Config.Timeout)
	defer cancel()
	g, err := l.discover(ctx)
	if err != nil {
		run.Outcome, run.Error = store.OutcomeFailed, err.Error()
		return run, errors.Join(err, l.record(ctx, run, false))
	}
	return run, l.install(ctx, run, g)
}

func (l *Loop) discover(ctx context.Context) (*topology.Graph, error) {
	start := time.Now()
	p, err := l.newProvider()
	if err == nil {
		var g *topology.Graph
		g, err = p.Discover(ctx, providers.Request{})
		l.deps.Metrics.discovered(l.deps.Provider.Name, time.Since(start).Seconds(), err)
		if err == nil {
			return g, nil
		}
	}
	return nil, fmt.Errorf("discover with %s: %w", l.deps.Provider.Name, err)
}

// record stores run (with no new snapshot) and makes it the last run.
func (l *Loop) record(ctx context.Context, run *store.Run, clearPending bool) error {
	run.FinishedAt = l.deps.Now()
	err := l.deps.Store.AddRun(ctx, run, clearPending)
	st := *l.State()
	st.LastRun = run
	if run.Outcome == store.OutcomeFailed {
		st.Failures++
	} else {
		st.Failures = 0
	}
	if clearPending {
		st.Pending = nil
		l.deps.Metrics.setRefusing(false)
	}
	l.state.Store(&st)
	return err
}

// providerDeps are the dependencies of a provider built by the loop or
// a request: its logger, the clock, the store's agent reports (a nil
// interface, not a typed nil, without a store) and the metrics.
func providerDeps(log *slog.Logger, now func() time.Time, st *store.Store, m *Metrics, name string) providers.Deps {
	d := providers.Deps{Logger: log.With("provider", name), Now: now, Observer: m.Observer()}
	if st != nil {
		d.Agents = st
	}
	return d.WithDefaults()
}
