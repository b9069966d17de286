package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/service/store"
)

// Deps are what New takes from its host besides the configuration.
type Deps struct {
	// Registry builds the configured provider, engines and ledger sources
	// (required).
	Registry *plugins.Registry
	// Logger receives the service's logs; discarded if nil.
	Logger *slog.Logger
	// Stdout receives what engines print; discarded if nil.
	Stdout io.Writer
	// Now is the clock; time.Now if nil.
	Now func() time.Time
	// Metrics is where the service's metrics are registered; nil makes a
	// registry with the Go runtime and process collectors.
	Metrics *prometheus.Registry
	// Version is the binary's version, exported as toposcope_build_info.
	Version string
	// OnHangup, when set, is called on each SIGHUP while the service runs
	// (before the discovery SIGHUP triggers with
	// discovery.triggers.sighup): `toposcope serve` loads its credentials
	// again there.
	OnHangup func()
	// WatchKeys are the Node label and annotation keys the node watcher
	// watches when kubernetes.watchKeys is unset: the keys the providers
	// declare they read (app.WatchKeys). Nil watches none.
	WatchKeys []string
}

// Service is `toposcope serve` without its HTTP front: the store, the
// discovery loop, the asynchronous requests, the placement budgets and
// ledger with their sources, and, when configured, the Kubernetes node
// watcher and leader election. The CLI and the tests build it the same
// way, with New; package server answers HTTP from it.
type Service struct {
	// Config is the configuration the service was built from.
	Config *config.File
	// Registry is the plugin registry it builds from.
	Registry *plugins.Registry
	// Store keeps snapshots, runs, results and agent reports.
	Store *store.Store
	// Loop holds the current topology and runs discoveries.
	Loop *Loop
	// Requests runs the asynchronous generate requests.
	Requests *Requests
	// Placement holds the budgets and the ledger, persisted in Store.
	Placement *placement.Books
	// Placer answers placement questions on the current topology and the
	// ledger: occupancy, standings, ranked placements.
	Placer *Placer
	// Metrics is the registry of every metric the service exports.
	Metrics *prometheus.Registry

	log       *slog.Logger
	syncer    *placement.Syncer
	onHangup  func()
	watchKeys []string // Deps.WatchKeys
	replica   *Replica // on a shared store
}

// New opens the store, builds every configured plugin and restores the
// last state. The discovery loop, the watchers and the ledger sync run
// only from Start; the one exception is the asynchronous requests that
// were pending when the service last stopped, which New resumes at once
// (Requests.Resume starts their work). On error everything opened is
// closed again.
func New(ctx context.Context, cfg *config.File, deps Deps) (_ *Service, err error) {
	if deps.Registry == nil {
		return nil, errors.New("service: a Registry is required")
	}
	if err := deps.Registry.CheckPaths(cfg); err != nil {
		return nil, err
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Stdout == nil {
		deps.Stdout = io.Discard
	}
	if deps.Metrics == nil {
		deps.Metrics = prometheus.NewRegistry()
		if err := deps.Metrics.Register(collectors.NewGoCollector()); err != nil {
			return nil, err
		}
		if err := deps.Metrics.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, err
		}
	}
	st, err := OpenStore(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	s := &Service{Config: cfg, Registry: deps.Registry, Store: st, Metrics: deps.Metrics, log: deps.Logger, onHangup: deps.OnHangup,
		watchKeys: deps.WatchKeys}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	metrics, err := newMetrics(deps.Metrics)
	if err != nil {
		return nil, err
	}
	if err := registerBuildInfo(deps.Metrics, deps.Version); err != nil {
		return nil, err
	}
	if s.Placement, err = placement.OpenBooks(ctx, st); err != nil {
		return nil, err
	}
	// The loop keeps a slot of its own: queued API requests never delay
	// the service's own discovery.
	s.Loop, err = newLoop(LoopDeps{
		Registry: deps.Registry, Store: st, Logger: deps.Logger, Metrics: metrics, Limiter: newLimiter(1), Now: deps.Now,
		Provider: cfg.Provider, Engines: cfg.Engines, Config: cfg.Discovery, Retention: cfg.Store.Retention,
		Stdout: deps.Stdout, KubeGuard: kube.NewShrinkGuard(cfg.Discovery.ShrinkGuard), Budgets: s.Placement.Budgets,
	})
	if err != nil {
		return nil, err
	}
	if err := s.Loop.Load(ctx); err != nil {
		return nil, err
	}
	if st.Shared() {
		if s.replica, err = JoinReplicas(ctx, st, cfg.Store.Database.RefreshInterval, deps.Logger); err != nil {
			return nil, err
		}
	}
	s.Requests = newRequests(RequestsDeps{
		Registry: deps.Registry, Store: st, Logger: deps.Logger, Metrics: metrics, Now: deps.Now,
		Limiter: newLimiter(cfg.Server.MaxConcurrentDiscoveries), Server: cfg.Server, Guard: s.Loop, Retention: cfg.Store.Retention, Provider: cfg.Provider, Engines: cfg.Engines,
		Replica: s.replica,
	})
	if err := s.Requests.Resume(ctx); err != nil {
		deps.Logger.Warn("some pending requests could not be resumed", "err", err)
	}
	s.Placer = newPlacer(s.Loop, s.Placement, deps.Now)
	if s.syncer, err = ledgerSyncer(deps.Registry, cfg.Placement, s.Placement, deps.Now, deps.Logger); err != nil {
		return nil, err
	}
	return s, nil
}

// Start runs the service's background work until ctx is done: the
// discovery loop (as the leader, or following the leader's topology with
// kubernetes.leaderElection), the node watcher, the ledger sources'
// sync and the SIGHUP handler (Deps.OnHangup, the SIGHUP trigger). addr is the address the HTTP front
// listens on (the identity of this replica in leader election). Errors
// of the Kubernetes set-up are returned before anything starts; wait
// blocks until everything started has stopped.
func (s *Service) Start(ctx context.Context, addr net.Addr) (wait func(), err error) {
	lead, campaign, err := kubernetesRoles(s.Config, s.watchKeys, addr, s.Loop, s.log)
	if err != nil {
		return nil, err
	}
	if s.Store.Shared() {
		campaign = s.sharedRoles(addr, campaign)
	}
	var wg sync.WaitGroup
	wg.Go(func() { campaign(ctx, lead) })
	if s.Store.Shared() {
		wg.Go(func() { s.refreshEvery(ctx, s.Config.Store.Database.RefreshInterval) })
	}
	if s.syncer != nil {
		wg.Go(func() { s.syncer.Run(ctx) })
	}
	if trigger := s.Config.Discovery.Triggers.SIGHUP; trigger || s.onHangup != nil {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		wg.Go(func() {
			defer signal.Stop(hup)
			for {
				select {
				case <-ctx.Done():
					return
				case <-hup:
					if s.onHangup != nil {
						s.onHangup()
					}
					if trigger {
						s.Loop.Trigger(TriggerSIGHUP)
					}
				}
			}
		})
	}
	return wg.Wait, nil
}

// Close stops the requests and closes the store.
func (s *Service) Close() error {
	if s.Requests != nil {
		s.Requests.Close()
	}
	var err error
	if s.replica != nil {
		err = s.replica.Leave(context.Background())
	}
	return errors.Join(err, s.Store.Close())
}

// ledgerSyncer builds the configured ledger sources through the
// registry; nil when there are none.
func ledgerSyncer(reg *plugins.Registry, cfg config.Placement, st *placement.Books, now func() time.Time, log *slog.Logger) (*placement.Syncer, error) {
	if len(cfg.Sources) == 0 {
		return nil, nil
	}
	var sources []placement.Source
	for i, p := range cfg.Sources {
		src, err := reg.NewLedgerSource(p.Name, fmt.Sprintf("placement.sources[%d]", i), &p.Params,
			placement.SourceDeps{Logger: log.With("ledgerSource", p.Name)})
		if err != nil {
			return nil, err
		}
		sources = append(sources, src)
	}
	return placement.NewSyncer(st, sources, cfg.SyncInterval, now, log)
}

// registerBuildInfo exports toposcope_build_info{version,goversion} 1.
func registerBuildInfo(reg *prometheus.Registry, version string) error {
	if version == "" {
		version = "unknown"
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "toposcope_build_info",
		Help:        "The toposcope build: its version and the Go version it was built with; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	info.Set(1)
	return reg.Register(info)
}
