package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/discovery"
	"github.com/toposcope/toposcope/internal/kube"
	"github.com/toposcope/toposcope/internal/registry"
	"github.com/toposcope/toposcope/internal/store"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/server"
)

type serveOptions struct {
	configPath string
	listen     string
	storePath  string
	model      string
	interval   time.Duration
}

func newServeCmd(env *Env, root *rootOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the REST service: discover, keep the topology current, publish it and answer queries",
		Long: `serve runs toposcope as a service. With no --config it serves the bundled
default model (sim provider, small-tree) on ` + config.DefaultListen + ` and publishes
nothing; the configuration file adds engines, a discovery interval and
triggers, the store, tokens and TLS (see docs/service.md and docs/api.md).`,
		Example: `  toposcope serve
  toposcope serve --model nvl72 --listen 127.0.0.1:8080
  toposcope serve --config /etc/toposcope/config.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ro := *root
			if f := cmd.Flag("log-level"); f == nil || !f.Changed {
				ro.logLevel = "info" // a service logs what it does
			}
			log, err := ro.logger(env.Stderr)
			if err != nil {
				return err
			}
			cfg, err := o.config(cmd)
			if err != nil {
				return err
			}
			return runServe(cmd.Context(), env, cfg, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.configPath, "config", "", "YAML configuration file (provider, engines, server, discovery, store)")
	f.StringVar(&o.listen, "listen", "", "host:port to listen on (default "+config.DefaultListen+"; port 0 picks a free one)")
	f.StringVar(&o.storePath, "store", "", "store file (default $XDG_STATE_HOME/toposcope/toposcope.db)")
	f.StringVar(&o.model, "model", "", "sim provider: bundled model name or model file path")
	f.DurationVar(&o.interval, "interval", 0, "time between discoveries (overrides discovery.interval)")
	return cmd
}

// config loads the file (or the defaults) and applies the flags.
func (o *serveOptions) config(cmd *cobra.Command) (*config.File, error) {
	cfg := config.Default()
	if o.configPath != "" {
		var err error
		if cfg, err = config.Load(o.configPath); err != nil {
			return nil, err
		}
	}
	if cfg.Provider.Name == "" {
		cfg.Provider = config.Plugin{Name: sim.Name}
		config.SetParam(&cfg.Provider.Params, "model", sim.DefaultConfig().Model)
	}
	changed := cmd.Flags().Changed
	if changed("model") {
		config.SetParam(&cfg.Provider.Params, "model", o.model)
	}
	if changed("listen") {
		cfg.Server.Listen = o.listen
	}
	if changed("store") {
		cfg.Store.Path = o.storePath
	}
	if changed("interval") {
		cfg.Discovery.Interval = o.interval
	}
	if err := cfg.Server.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if err := cfg.Discovery.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if cfg.Store.Path == "" {
		cfg.Store.Path = defaultStorePath()
	}
	return cfg, nil
}

func defaultStorePath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "toposcope", "toposcope.db")
}

// runServe wires the service together, serves until ctx ends, and shuts
// down: HTTP first (in-flight requests finish), then discoveries are
// cancelled through their context, then the store is closed.
func runServe(ctx context.Context, env *Env, cfg *config.File, log *slog.Logger) (err error) {
	gin.SetMode(gin.ReleaseMode)
	if os.Getenv("GOGC") == "" {
		// The heap is mostly the long-lived graph and requests make little
		// garbage: a tighter GC goal keeps the resident memory near the
		// graph's size at a small CPU cost (see docs/service.md).
		debug.SetGCPercent(50)
	}
	tokens, err := server.LoadTokens(cfg.Server.Auth, os.Getenv)
	if err != nil {
		return err
	}
	st, err := store.Open(cfg.Store.Path, store.Options{LockTimeout: cfg.Store.LockTimeout})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return err
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return err
	}
	metrics, err := discovery.NewMetrics(reg)
	if err != nil {
		return err
	}
	limiter := discovery.NewLimiter(cfg.Server.MaxConcurrentDiscoveries)
	loop, err := discovery.NewLoop(discovery.LoopDeps{
		Registry: env.Registry, Store: st, Logger: log, Metrics: metrics, Limiter: limiter,
		Provider: cfg.Provider, Engines: cfg.Engines, Config: cfg.Discovery, Retention: cfg.Store.Retention,
		Stdout: env.Stdout, KubeGuard: kube.NewShrinkGuard(cfg.Discovery.ShrinkGuard),
	})
	if err != nil {
		return err
	}
	if err := loop.Load(); err != nil {
		return err
	}
	reqs := discovery.NewRequests(discovery.RequestsDeps{
		Registry: env.Registry, Store: st, Logger: log, Metrics: metrics, Limiter: limiter,
		Server: cfg.Server, Retention: cfg.Store.Retention, Provider: cfg.Provider, Engines: cfg.Engines,
	})
	defer reqs.Close()
	if err := reqs.Resume(ctx); err != nil {
		log.Warn("some pending requests could not be resumed", "err", err)
	}
	budgets, err := placement.OpenStore(st)
	if err != nil {
		return err
	}
	syncer, err := ledgerSyncer(cfg.Placement, budgets, log)
	if err != nil {
		return err
	}
	handler, err := server.New(server.Deps{
		Registry: env.Registry, Store: st, Loop: loop, Requests: reqs, Logger: log,
		Metrics: reg, Tokens: tokens, Config: cfg.Server, Placement: budgets,
	})
	if err != nil {
		return err
	}
	ln, err := server.Listen(cfg.Server)
	if err != nil {
		return err
	}
	printWhere(env, cfg, ln.Addr(), loop, st.Path())
	log.Info("serving", "addr", ln.Addr().String(), "tls", cfg.Server.TLS.Enabled(),
		"mtls", cfg.Server.TLS.ClientCA != "", "auth", tokens != nil, "store", st.Path())

	lead, campaign, err := kubernetesRoles(cfg, ln.Addr(), loop, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	loopCtx, stopLoop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { campaign(loopCtx, lead) })
	if syncer != nil {
		wg.Go(func() { syncer.Run(loopCtx) })
	}
	if cfg.Discovery.Triggers.SIGHUP {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		wg.Go(func() {
			for {
				select {
				case <-loopCtx.Done():
					return
				case <-hup:
					loop.Trigger(discovery.TriggerSIGHUP)
				}
			}
		})
	}
	err = server.Serve(ctx, cfg.Server, server.NewHTTPServer(cfg.Server, handler, log), ln)
	stopLoop()
	wg.Wait()
	log.Info("stopped")
	return err
}

// ledgerSyncer builds the configured ledger sources; nil when there are
// none.
func ledgerSyncer(cfg config.Placement, store *placement.Store, log *slog.Logger) (*placement.Syncer, error) {
	if len(cfg.Sources) == 0 {
		return nil, nil
	}
	var sources []placement.Source
	for i, p := range cfg.Sources {
		f, err := registry.LedgerSource(p.Name)
		if err != nil {
			return nil, fmt.Errorf("placement.sources[%d]: %w", i, err)
		}
		src, err := f.New(&p.Params, fmt.Sprintf("placement.sources[%d].params", i), placement.SourceDeps{Logger: log.With("ledgerSource", p.Name)})
		if err != nil {
			return nil, err
		}
		sources = append(sources, src)
	}
	return placement.NewSyncer(store, sources, cfg.SyncInterval, time.Now, log)
}

// printWhere tells the user where to look.
func printWhere(env *Env, cfg *config.File, addr net.Addr, loop *discovery.Loop, storePath string) {
	scheme := "http"
	if cfg.Server.TLS.Enabled() {
		scheme = "https"
	}
	base := scheme + "://" + addr.String()
	fmt.Fprintf(env.Stdout, "toposcope %s: listening on %s (provider %s; engines %v)\n", Version, base, loop.ProviderName(), loop.EngineNames())
	for _, l := range [][2]string{
		{"status", "/v1/status"},
		{"graph", "/v1/graph   (Graphviz: /v1/graph?format=dot)"},
		{"one node", "/v1/nodes/<name>"},
		{"domains", "/v1/domains"},
		{"slurm file", "/v1/render/slurm?plugin=topology/block&slurmVersion=24.11"},
		{"snapshots", "/v1/snapshots   (diffs: /v1/diff)"},
		{"API", "/openapi.json   (docs/api.md)"},
		{"metrics", "/metrics"},
	} {
		fmt.Fprintf(env.Stdout, "  %-11s %s%s\n", l[0]+":", base, l[1])
	}
	fmt.Fprintf(env.Stdout, "  %-11s %s\n", "store:", storePath)
}

// kubernetesRoles returns what the leader runs (the discovery loop and,
// with kubernetes.watchNodes, the node watcher) and how it comes to run:
// at once, or, with kubernetes.leaderElection.enabled, while this replica
// holds the Lease (following the leader's topology otherwise).
func kubernetesRoles(cfg *config.File, addr net.Addr, loop *discovery.Loop, log *slog.Logger) (
	lead func(context.Context), campaign func(context.Context, func(context.Context)), err error,
) {
	kc := cfg.Kubernetes
	lead = func(ctx context.Context) { loop.Run(ctx) }
	campaign = func(ctx context.Context, lead func(context.Context)) { lead(ctx) }
	if !kc.Enabled() {
		return lead, campaign, nil
	}
	cc := kube.ClientConfig{Kubeconfig: kc.Kubeconfig, Context: kc.Context, QPS: kc.QPS, Burst: kc.Burst}
	rc, err := cc.RESTConfig()
	if err != nil {
		return nil, nil, &config.FieldError{Field: "kubernetes.kubeconfig", Err: err}
	}
	rc.Timeout = 0 // a watch lasts; each request has its own deadline
	clients, err := kube.NewClients(rc)
	if err != nil {
		return nil, nil, err
	}
	if kc.WatchNodes {
		w := kube.NewNodeWatcher(clients.Core, kube.NodeWatcherConfig{
			Keys: kc.WatchKeys, Debounce: kc.Debounce, Selector: kc.NodeSelector,
		},
			func(reason string) {
				log.Info("node change: discovering", "change", reason)
				loop.Trigger(discovery.TriggerNodes)
			}, log)
		lead = func(ctx context.Context) {
			var wg sync.WaitGroup
			wg.Go(func() {
				if err := w.Run(ctx); err != nil {
					log.Error("node watcher stopped", "err", err)
				}
			})
			loop.Run(ctx)
			wg.Wait()
		}
	}
	le := kc.LeaderElection
	if !le.Enabled {
		return lead, campaign, nil
	}
	identity, err := advertiseURL(cfg, addr)
	if err != nil {
		return nil, nil, err
	}
	token := ""
	if le.PeerTokenFile != "" {
		data, err := os.ReadFile(le.PeerTokenFile)
		if err != nil {
			return nil, nil, &config.FieldError{Field: "kubernetes.leaderElection.peerTokenFile", Err: err}
		}
		token = strings.TrimSpace(string(data))
	}
	hc, err := server.PeerClient(le.PeerCAFile)
	if err != nil {
		return nil, nil, &config.FieldError{Field: "kubernetes.leaderElection.peerCAFile", Err: err}
	}
	follower := server.NewFollower(server.FollowerConfig{Interval: le.FollowInterval, Token: token, Client: hc}, loop.Adopt, log)
	elector, err := kube.NewElector(clients.Core, kube.ElectorConfig{
		Namespace: le.Namespace, Name: le.Name, Identity: identity,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
	}, log)
	if err != nil {
		return nil, nil, err
	}
	log.Info("leader election", "lease", le.Namespace+"/"+le.Name, "identity", identity)
	campaign = func(ctx context.Context, lead func(context.Context)) {
		if err := elector.Run(ctx, lead, follower.Run); err != nil {
			log.Error("leader election stopped", "err", err)
		}
	}
	return lead, campaign, nil
}

// advertiseURL is kubernetes.leaderElection.advertiseURL, or the
// listener's URL when it listens on a specific address.
func advertiseURL(cfg *config.File, addr net.Addr) (string, error) {
	if u := cfg.Kubernetes.LeaderElection.AdvertiseURL; u != "" {
		return strings.TrimRight(u, "/"), nil
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		return "", config.Errorf("kubernetes.leaderElection.advertiseURL",
			"must be set when server.listen (%s) is not one specific address: followers read the leader's topology from it", addr)
	}
	scheme := "http"
	if cfg.Server.TLS.Enabled() {
		scheme = "https"
	}
	return scheme + "://" + tcp.String(), nil
}
