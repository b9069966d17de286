// Package server is toposcope's REST service on gin: the
// Topograph-compatible asynchronous API (POST /v1/generate, GET
// /v1/topology), synchronous queries on the current topology, snapshots
// and diffs, /metrics, health checks and the OpenAPI document.
//
// Handlers are thin: they decode, call package service or the store,
// and encode. HTTP statuses are chosen for errors only in statusOf.
package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/extender"
	"github.com/toposcope/toposcope/service/store"
)

// Deps are the router's dependencies.
type Deps struct {
	// Service is what the router answers from: its registry, store,
	// discovery loop, requests, placement store, metrics registry and
	// server configuration (required).
	Service *service.Service
	// Logger receives the HTTP layer's logs; discarded if nil.
	Logger *slog.Logger
	// Now is the clock; time.Now if nil.
	Now func() time.Time
	// Credentials are the accepted tokens (reloaded on SIGHUP by
	// LoadCredentials' Reload); nil allows every request.
	Credentials *Credentials
	// AgentRetention limits the agent reports kept; the zero value means
	// store.DefaultAgentRetention.
	AgentRetention store.AgentRetention
	// Extender answers the kube-scheduler extender routes; nil when
	// placement.extender is off (the routes then answer 404).
	Extender *extender.Extender
}

// parts are the pieces of the service the handlers use.
type parts struct {
	Registry       *plugins.Registry
	Store          *store.Store
	Loop           *service.Loop
	Requests       *service.Requests
	Metrics        *prometheus.Registry
	Placement      *placement.Books
	Placer         *service.Placer
	Extender       *extender.Extender
	Config         config.Server
	Now            func() time.Time
	AgentRetention store.AgentRetention
}

type handlers struct {
	parts
	// agentsPruned is when agent reports were last pruned (Unix nanos).
	agentsPruned atomic.Int64
	log          *slog.Logger
	creds        *Credentials
	latency      *prometheus.HistogramVec
	// assets are the web view's files.
	assets map[string]asset
	// derived holds what is computed from the current graph (derived.go).
	derived atomic.Pointer[derived]
	// snapReads bounds the older snapshots' graphs held by reads.
	snapReads *readSlots
	// extenderClients are the client-certificate names let through to
	// the extender routes without a token.
	extenderClients []string
	// extenderSlots bounds the extender calls served at once.
	extenderSlots *readSlots
	// bodyMemory bounds the memory of the bodies being read and decoded
	// (server.maxBodyMemory), in bytes.
	bodyMemory *readSlots
}

// New builds the router.
func New(d Deps) (*gin.Engine, error) {
	svc := d.Service
	if svc == nil {
		return nil, errors.New("server: a Service is required")
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.AgentRetention == (store.AgentRetention{}) {
		d.AgentRetention = store.DefaultAgentRetention()
	}
	if err := d.AgentRetention.Validate(); err != nil {
		return nil, fmt.Errorf("server: agent retention: %w", err)
	}
	h := &handlers{parts: parts{
		Registry: svc.Registry, Store: svc.Store, Loop: svc.Loop, Requests: svc.Requests, Metrics: svc.Metrics,
		Placement: svc.Placement, Placer: svc.Placer, Config: svc.Config.Server, Now: d.Now, AgentRetention: d.AgentRetention,
		Extender: d.Extender,
	}, log: d.Logger.With("component", "http"), creds: d.Credentials, extenderClients: svc.Config.Placement.Extender.Clients}
	h.bodyMemory = newReadSlots(int(h.Config.MaxBodyMemory))
	h.snapReads = newReadSlots(max(h.Config.MaxSnapshotReads, 1))
	h.extenderSlots = newReadSlots(max(svc.Config.Placement.Extender.MaxConcurrent, 1))
	h.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "toposcope_http_request_duration_seconds",
		Help:    "HTTP request latency by method, route template and status code.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"method", "route", "code"})
	if err := h.Metrics.Register(h.latency); err != nil {
		return nil, err
	}
	assets, err := loadAssets()
	if err != nil {
		return nil, fmt.Errorf("server: web view: %w", err)
	}
	h.assets = assets
	r := gin.New()
	r.ContextWithFallback = true
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.Use(h.secureHeaders, h.observe, gin.CustomRecoveryWithWriter(io.Discard, h.recovered), h.limitBody, h.guardWrites)
	r.NoRoute(func(c *gin.Context) { h.fail(c, errNoRoute) })
	r.NoMethod(func(c *gin.Context) { h.fail(c, errNoMethod) })
	h.routes(r)
	return r, nil
}

// routes lists every route; openapi.json documents exactly these (a test
// checks it).
func (h *handlers) routes(r *gin.Engine) {
	r.GET("/", h.page)
	r.GET("/ui/*file", h.webAsset)
	r.GET("/healthz", h.healthz)
	r.GET("/readyz", h.readyz)

	read, write := h.require(ScopeRead), h.require(ScopeWrite)
	r.GET("/openapi.json", read, h.openapi)
	r.GET("/metrics", read, gin.WrapH(promhttp.HandlerFor(h.Metrics, promhttp.HandlerOpts{})))

	v1 := r.Group("/v1")
	v1.POST("/generate", write, h.generate)
	v1.GET("/topology", read, h.topology)
	v1.POST("/lookup", read, h.lookup)
	v1.GET("/graph", read, h.graph)
	v1.GET("/nodes/*name", read, h.node)
	v1.GET("/switches/*id", read, h.switchByID)
	v1.GET("/domains", read, h.domains)
	v1.GET("/tree", read, h.tree)
	v1.GET("/heatmap", read, h.heatmap)
	v1.GET("/fabric", read, h.fabric)
	v1.GET("/fabric/occupancy", read, h.fabricOccupancy)
	v1.GET("/find", read, h.find)
	v1.GET("/render/:engine", read, h.render)
	v1.GET("/snapshots", read, h.snapshots)
	v1.GET("/snapshots/:id", read, h.snapshot)
	v1.POST("/snapshots/:id/accept", write, h.accept)
	v1.GET("/diff", read, h.diff)
	v1.GET("/runs", read, h.runs)
	v1.GET("/status", read, h.status)
	v1.POST("/discover", write, h.discover)
	v1.POST("/placements", read, h.placements)
	v1.GET("/fairshare", read, h.fairshare)
	v1.GET("/capacity", read, h.capacity)
	v1.GET("/ledger", read, h.ledger)
	v1.POST("/ledger", write, h.appendLedger)
	v1.GET("/ledger/ignored", read, h.ignoredRecords)
	v1.DELETE("/ledger/:workload", write, h.deleteLedger)
	v1.GET("/budgets", read, h.budgets)
	v1.PUT("/budgets", write, h.putBudgets)
	v1.PUT("/agents/:node", h.requireAgent, h.putAgent)
	v1.DELETE("/agents/:node", write, h.deleteAgent)
	v1.GET("/agents", read, h.agents)
	v1.GET("/agents/:node", read, h.agent)
	h.extenderRoutes(v1)
}

// observe records latency by route template (bounded labels) and logs
// failures; successful requests are logged at debug level only.
func (h *handlers) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	elapsed := time.Since(start)
	h.latency.WithLabelValues(c.Request.Method, route, statusText(status)).Observe(elapsed.Seconds())
	level := slog.LevelDebug
	if status >= http.StatusInternalServerError && status != http.StatusServiceUnavailable {
		level = slog.LevelWarn
	}
	if h.log.Enabled(c.Request.Context(), level) {
		h.log.Log(c.Request.Context(), level, "http request", "method", c.Request.Method, "route", route,
			"status", status, "duration", elapsed, "bytes", c.Writer.Size())
	}
}

// statusText returns the decimal status without allocating for the
// common ones.
func statusText(code int) string {
	switch code {
	case http.StatusOK:
		return "200"
	case http.StatusAccepted:
		return "202"
	case http.StatusNotModified:
		return "304"
	case http.StatusNotFound:
		return "404"
	}
	return strconv.Itoa(code)
}

func (h *handlers) recovered(c *gin.Context, v any) {
	h.log.Error("handler panic", "route", c.FullPath(), "panic", v)
	h.fail(c, errPanic)
}

// limitBody caps request bodies at Config.MaxBodyBytes.
func (h *handlers) limitBody(c *gin.Context) {
	if c.Request.Body == nil || c.Request.Body == http.NoBody {
		return
	}
	if c.Request.ContentLength > h.Config.MaxBodyBytes {
		h.fail(c, &http.MaxBytesError{Limit: h.Config.MaxBodyBytes})
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, h.Config.MaxBodyBytes)
}

func (h *handlers) healthz(c *gin.Context) {
	c.String(http.StatusOK, "OK\n")
}

// readyz is ready once a topology is current, until discoveries keep
// failing (discovery.unreadyAfter).
func (h *handlers) readyz(c *gin.Context) {
	if err := h.Loop.Ready(); err != nil {
		h.fail(c, err)
		return
	}
	c.String(http.StatusOK, "OK\n")
}
