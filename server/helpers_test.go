package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/extender"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
	"github.com/toposcope/toposcope/testenv/proctest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	os.Exit(m.Run())
}

// stack is the whole service in-process: real store, registry, sim
// provider, loop and requests, behind the real router.
type stack struct {
	t         testing.TB
	handler   http.Handler
	loop      *service.Loop
	store     *store.Store
	reqs      *service.Requests
	svc       *service.Service
	logs      *proctest.Output
	metrics   *prometheus.Registry
	modelPath string
	storePath string
}

type stackOpts struct {
	model    []byte // model file contents; a generated fat tree if nil
	provider string // the configured provider; sim on the model if empty
	params   string // the configured provider's params (YAML mapping)
	listen   string // server.listen; the default (loopback) if empty
	tokens   string
	engines  string // YAML list of engines
	publish  bool
	guard    float64
	quiet    bool // log at info level (benchmarks), not debug
	// agentSecret, with tokens, also accepts agents' per-node tokens.
	agentSecret string
	// allowedHosts are server.auth.allowedHosts.
	allowedHosts []string
	// snapshotReads is server.maxSnapshotReads; the default if 0.
	snapshotReads int
	// maxBody is server.maxBodyBytes; 64 KiB if 0.
	maxBody int64
	// bodyMemory and bodyTimeout are server.maxBodyMemory and
	// server.bodyReadTimeout; the defaults if 0.
	bodyMemory  int64
	bodyTimeout time.Duration
	// extender turns placement.extender on, with these client names.
	extender        bool
	extenderClients []string
	// extenderMax and extenderHeld are maxConcurrent and maxHeld; the
	// defaults if 0.
	extenderMax, extenderHeld int
	// database, when set, keeps the store in that server's database
	// (store.database) instead of the stack's bbolt file.
	database *dbtest.Server
}

func writeModel(t testing.TB, path string, nodes int) []byte {
	t.Helper()
	data, err := sim.Generate(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: nodes, DomainSize: 18})
	if err != nil {
		t.Fatal(err)
	}
	if path != "" {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

func newStack(t testing.TB, o stackOpts) *stack {
	t.Helper()
	dir := t.TempDir()
	s := &stack{t: t, logs: &proctest.Output{}, modelPath: filepath.Join(dir, "model.yaml"), storePath: filepath.Join(dir, "store.db")}
	if o.model == nil {
		o.model = writeModel(t, "", 100)
	}
	if err := os.WriteFile(s.modelPath, o.model, 0o644); err != nil {
		t.Fatal(err)
	}
	level := slog.LevelDebug
	if o.quiet {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: level}))
	cfg := config.Default()
	cfg.Store.Path = s.storePath
	cfg.Provider.Name = sim.Name
	config.SetParam(&cfg.Provider.Params, "model", s.modelPath)
	if o.provider != "" {
		cfg.Provider = config.Plugin{Name: o.provider}
		if o.params != "" {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(o.params), &doc); err != nil {
				t.Fatal(err)
			}
			cfg.Provider.Params = *doc.Content[0]
		}
	}
	if o.engines != "" {
		if err := yaml.Unmarshal([]byte(o.engines), &cfg.Engines); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Discovery.ShrinkGuard = 0.1
	if o.guard != 0 {
		cfg.Discovery.ShrinkGuard = o.guard
	}
	cfg.Server.MaxBodyBytes = 64 << 10
	if o.maxBody != 0 {
		cfg.Server.MaxBodyBytes = o.maxBody
	}
	if o.bodyMemory != 0 {
		cfg.Server.MaxBodyMemory = o.bodyMemory
	}
	if o.bodyTimeout != 0 {
		cfg.Server.BodyReadTimeout = o.bodyTimeout
	}
	cfg.Server.MaxConcurrentDiscoveries = 2
	cfg.Server.Publish = o.publish
	if o.listen != "" {
		cfg.Server.Listen = o.listen
	}
	cfg.Server.Auth.AllowedHosts = o.allowedHosts
	if o.snapshotReads != 0 {
		cfg.Server.MaxSnapshotReads = o.snapshotReads
	}
	if o.database != nil {
		dsn := filepath.Join(t.TempDir(), "dsn")
		if err := os.WriteFile(dsn, []byte(o.database.DSN()), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.Store.Database.Driver, cfg.Store.Database.DSNFile = o.database.Driver(), dsn
	}
	s.metrics = prometheus.NewRegistry()
	svc, err := service.New(context.Background(), cfg, service.Deps{Registry: app.Registry(), Logger: log, Metrics: s.metrics})
	if err != nil {
		t.Fatal(err)
	}
	s.store, s.loop, s.reqs, s.svc = svc.Store, svc.Loop, svc.Requests, svc
	var tokens *server.Tokens
	if o.tokens != "" {
		if tokens, err = server.ParseTokens(o.tokens, "test"); err != nil {
			t.Fatal(err)
		}
		if o.agentSecret != "" {
			tokens = tokens.WithAgentSecret([]byte(o.agentSecret))
		}
	}
	var ext *extender.Extender
	if o.extender {
		ec := config.DefaultExtender()
		ec.Enabled, ec.Clients = true, o.extenderClients
		if o.extenderMax != 0 {
			ec.MaxConcurrent = o.extenderMax
		}
		if o.extenderHeld != 0 {
			ec.MaxHeld = o.extenderHeld
		}
		svc.Config.Placement.Extender = ec
		eo := extender.Options{Planner: svc.Placer, Config: ec, Pods: podsource.DefaultConfig(), Placement: placement.DefaultConfig(), Logger: log}
		if svc.Store.Shared() {
			eo.Shared = svc.Store // as app does
		}
		ext, err = extender.New(eo)
		if err != nil {
			t.Fatal(err)
		}
	}
	s.handler, err = server.New(server.Deps{Service: svc, Logger: log, Credentials: server.StaticCredentials(tokens), Extender: ext})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// discover runs the loop once and fails the test on error.
func (s *stack) discover() *store.Run {
	s.t.Helper()
	run, err := s.loop.RunOnce(context.Background(), service.TriggerAPI)
	if err != nil {
		s.t.Fatal(err)
	}
	return run
}

// do sends a request to the router and returns the recorded response.
func (s *stack) do(method, target, body string, header ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	req.Host = "127.0.0.1:49021" // as a client of the default listener sends it
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // as every API client sends it
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, req)
	return w
}

// metric returns the value of the counter or gauge name whose labels
// include labels, and whether there is one.
func (s *stack) metric(name string, labels map[string]string) (float64, bool) {
	s.t.Helper()
	families, err := s.metrics.Gather()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// errorOf decodes a JSON error body.
func errorOf(t *testing.T, w *httptest.ResponseRecorder) server.ErrorDetail {
	t.Helper()
	var body server.ErrorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body %q: %v", w.Body.String(), err)
	}
	if body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("error body %q lacks code or message", w.Body.String())
	}
	return body.Error
}

// poll GETs target until it answers something other than 202, or the
// deadline passes.
func (s *stack) poll(target string, header ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		w := s.do(http.MethodGet, target, "", header...)
		if w.Code != http.StatusAccepted || time.Now().After(deadline) {
			return w
		}
		time.Sleep(10 * time.Millisecond)
	}
}
