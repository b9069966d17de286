package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service"
)

// ServeDeps are what Serve needs from its caller.
type ServeDeps struct {
	// Registry lists the plugins; Registry() when nil.
	Registry *plugins.Registry
	// Logger receives the service's log.
	Logger *slog.Logger
	// Stdout receives the banner: where the service listens and what to open.
	Stdout io.Writer
	// Version is the binary's version, shown in the banner and /v1/status.
	Version string
	// Listener, when set, is served (with server.tls) instead of
	// listening on server.listen: a test's port chosen by the system.
	Listener net.Listener
}

// DefaultProvider is the provider a configuration without one gets: the
// simulation provider on its bundled default model.
func DefaultProvider() config.Plugin {
	p := config.Plugin{Name: sim.Name}
	config.SetParam(&p.Params, "model", sim.DefaultConfig().Model)
	return p
}

// Serve builds the service and its HTTP front, serves until ctx ends,
// and shuts down: HTTP first (in-flight requests finish), then the
// background work is cancelled through its context, then the store is
// closed.
func Serve(ctx context.Context, cfg *config.File, d ServeDeps) (err error) {
	if d.Registry == nil {
		d.Registry = Registry()
	}
	gin.SetMode(gin.ReleaseMode)
	if os.Getenv("GOGC") == "" {
		// The heap is mostly the long-lived graph and requests make little
		// garbage: a tighter GC goal keeps the resident memory near the
		// graph's size at a small CPU cost (see docs/service.md).
		debug.SetGCPercent(50)
	}
	creds, err := server.LoadCredentials(cfg.Server.Auth, os.Getenv)
	if err != nil {
		return err
	}
	svc, err := service.New(ctx, cfg, service.Deps{Registry: d.Registry, Logger: d.Logger, Stdout: d.Stdout, Version: d.Version,
		OnHangup: func() { reloadCredentials(creds, d.Logger) }, WatchKeys: WatchKeys(d.Registry)})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := svc.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	ext, err := newExtender(cfg, svc, d.Logger)
	if err != nil {
		return err
	}
	handler, err := server.New(server.Deps{Service: svc, Logger: d.Logger, Credentials: creds, Extender: ext})
	if err != nil {
		return err
	}
	var ln net.Listener
	if d.Listener != nil {
		ln, err = server.WrapListener(cfg.Server, d.Listener)
	} else {
		ln, err = server.Listen(cfg.Server)
	}
	if err != nil {
		return err
	}
	printWhere(d.Stdout, d.Version, cfg, ln.Addr(), svc.Loop.ProviderName(), svc.Loop.EngineNames(), svc.Store.Path())
	d.Logger.Info("serving", "addr", ln.Addr().String(), "tls", cfg.Server.TLS.Enabled(),
		"mtls", cfg.Server.TLS.ClientCA != "", "auth", creds.Tokens() != nil, "store", svc.Store.Path())
	bgCtx, stop := context.WithCancel(ctx)
	defer stop()
	wait, err := svc.Start(bgCtx, ln.Addr())
	if err != nil {
		_ = ln.Close()
		return err
	}
	err = server.Serve(ctx, cfg.Server, server.NewHTTPServer(cfg.Server, handler, d.Logger), ln)
	stop()
	wait()
	d.Logger.Info("stopped")
	return err
}

// reloadCredentials loads the credentials again, on SIGHUP: a rotated
// token file or agent secret takes effect without a restart. Credentials
// that cannot be used are logged by key and the ones in force stay.
func reloadCredentials(creds *server.Credentials, log *slog.Logger) {
	if err := creds.Reload(); err != nil {
		log.Error("SIGHUP: the credentials could not be loaded again; the ones in force stay", "err", err)
		return
	}
	log.Info("SIGHUP: credentials loaded again", "auth", creds.Tokens() != nil)
}

// printWhere tells the user where to look.
func printWhere(w io.Writer, version string, cfg *config.File, addr net.Addr, provider string, engineNames []string, storePath string) {
	scheme := "http"
	if cfg.Server.TLS.Enabled() {
		scheme = "https"
	}
	base := scheme + "://" + addr.String()
	engines := "none"
	if len(engineNames) > 0 {
		engines = strings.Join(engineNames, ", ")
	}
	fmt.Fprintf(w, "toposcope %s: listening on %s (provider %s; engines %s)\n", version, base, provider, engines)
	for _, l := range [][2]string{
		{"web view", "/   (docs/web.md)"},
		{"status", "/v1/status"},
		{"graph", "/v1/graph   (Graphviz: /v1/graph?format=dot)"},
		{"one node", "/v1/nodes/<name>"},
		{"domains", "/v1/domains"},
		{"slurm file", "/v1/render/slurm   (NVLink blocks: ?plugin=topology/block)"},
		{"snapshots", "/v1/snapshots   (diffs: /v1/diff)"},
		{"API", "/openapi.json   (docs/api.md)"},
		{"metrics", "/metrics"},
	} {
		fmt.Fprintf(w, "  %-11s %s%s\n", l[0]+":", base, l[1])
	}
	fmt.Fprintf(w, "  %-11s %s\n", "store:", storePath)
}
