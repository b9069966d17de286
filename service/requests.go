package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// RequestsDeps are what Requests needs.
type RequestsDeps struct {
	Registry *plugins.Registry
	Store    *store.Store
	Logger   *slog.Logger
	Now      func() time.Time
	Metrics  *Metrics
	Limiter  *Limiter
	// Server holds MaxQueuedRequests, RequestTimeout and Publish.
	Server    config.Server
	Retention config.Retention
	// Provider and Engines are the configured plugins; they fill in a
	// request that names no provider or no engine.
	Provider config.Plugin
	Engines  []config.Plugin
	// Guard, when set, vets a graph before a request publishes it and
	// learns that it was published (the discovery loop); without one, a
	// request never publishes.
	Guard PublishGuard
	// Replica, on a shared store, owns the requests this process takes:
	// Resume takes over only those whose replica is gone.
	Replica *Replica
}

// PublishGuard is what a request that publishes answers to: the shrink
// guard and the state of the discovery loop.
type PublishGuard interface {
	// CheckPublish refuses g (ErrShrinkRefused) when publishing it would
	// lose more than the shrink guard allows.
	CheckPublish(ctx context.Context, g *topology.Graph) error
	// RequestPublished records that a request published a graph through
	// a configured engine, so that the next discovery publishes its own.
	RequestPublished()
}

// Requests runs the asynchronous requests of POST /v1/generate: each is
// validated when submitted, stored (without credentials) before it is
// acknowledged, run in the background, and its result stored. Identical
// requests in flight are merged.
type Requests struct {
	deps   RequestsDeps
	log    *slog.Logger
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]bool
	closed   bool
}

// newRequests returns a request runner.
func newRequests(deps RequestsDeps) *Requests {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Requests{deps: deps, log: deps.Logger.With("component", "requests"), ctx: ctx, cancel: cancel, inflight: map[string]bool{}}
}

// job is one request, validated and ready to run.
type job struct {
	res   *store.Result
	prov  providers.Provider
	eng   engines.Engine
	nodes providers.Request
	// trim is the request's TrimTiers.
	trim int
	// simulate is the request's Simulate.
	simulate *Simulation
	stdout   *bytes.Buffer
	// publish is whether the engine publishes: server.publish is on and
	// the engine is one the operator configured.
	publish bool
}

// Submit validates req, stores it and starts it. ctx is the caller's (the
// HTTP request's): its values reach the provider, but not its end, since
// the discovery outlives the answer. It returns the request ID and
// whether an identical request was already in flight.
func (r *Requests) Submit(ctx context.Context, req *GenerateRequest) (string, bool, error) {
	id, err := r.Lookup(req)
	if err != nil {
		return "", false, err
	}
	if s := req.Simulate; s != nil && s.Generate != 202 {
		return "", false, &SimulatedError{Code: s.Generate, Message: s.Message}
	}
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return "", false, ErrClosed
	case r.inflight[id]:
		r.mu.Unlock()
		r.deps.Metrics.requests.WithLabelValues("merged").Inc()
		return id, true, nil
	case len(r.inflight) >= r.deps.Server.MaxQueuedRequests:
		r.mu.Unlock()
		r.deps.Metrics.requests.WithLabelValues("busy").Inc()
		return "", false, fmt.Errorf("%d requests in progress: %w", len(r.inflight), ErrBusy)
	}
	r.inflight[id] = true
	r.deps.Metrics.queued.Set(float64(len(r.inflight)))
	r.mu.Unlock()

	res := &store.Result{
		ID: id, State: store.StatePending, Request: req.Canonical(),
		HadCredentials: req.Creds.Len() > 0, SubmittedAt: r.deps.Now(),
	}
	if r.deps.Replica != nil {
		res.Owner = r.deps.Replica.ID
	}
	// Built (and so validated) before anything is stored: a refused
	// request leaves nothing behind.
	j, err := r.build(req, res)
	if err != nil {
		r.done(id)
		r.deps.Metrics.requests.WithLabelValues("refused").Inc()
		r.log.Info("request refused", "provider", req.Provider.Name, "engine", req.Engine.Name, "err", err)
		return "", false, err
	}
	if err := r.deps.Store.PutResult(ctx, res, nil); err != nil {
		r.done(id)
		return "", false, err
	}
	r.deps.Metrics.requests.WithLabelValues("accepted").Inc()
	r.start(ctx, j)
	return id, false, nil
}

// Lookup normalizes req as Submit does (Topograph's names and
// parameters mapped, the configured provider and engine filled in) and
// returns its request ID, without submitting it.
func (r *Requests) Lookup(req *GenerateRequest) (string, error) {
	if err := r.fromTopograph(req); err != nil {
		return "", err
	}
	if err := r.fill(req); err != nil {
		return "", err
	}
	return req.ID(), nil
}

// fill applies the configured provider and engine to a request that
// names none. A request may choose among what the operator configured:
// the provider must be the configured one; an engine that is not
// configured only renders.
func (r *Requests) fill(req *GenerateRequest) error {
	configured := r.deps.Provider.Name
	switch {
	case req.Provider.Name == "" && configured != "":
		req.Provider.Name = configured
	case req.Provider.Name == "":
		return badRequest("provider.name", "is required")
	case req.Provider.Name != configured:
		return &RequestError{Field: "provider.name", Err: fmt.Errorf("%w: provider %q (this service discovers with %q; the provider and its settings are the operator's)",
			ErrNotConfigured, req.Provider.Name, configured)}
	}
	if req.Engine.Name == "" && len(r.deps.Engines) > 0 {
		req.Engine.Name = r.deps.Engines[0].Name
	}
	if req.Engine.Name == "" {
		return badRequest("engine.name", "is required")
	}
	return nil
}

// configuredEngine returns the operator's entry for the engine name, or
// nil.
func (r *Requests) configuredEngine(name string) *config.Plugin {
	for i := range r.deps.Engines {
		if r.deps.Engines[i].Name == name {
			return &r.deps.Engines[i]
		}
	}
	return nil
}

// build creates the request's provider and engine through the registry:
// the request's parameters may set only the keys each plugin lets a
// request set, laid over the operator's settings of the same plugin.
func (r *Requests) build(req *GenerateRequest, res *store.Result) (*job, error) {
	j := &job{res: res, nodes: req.DiscoveryRequest(), trim: req.TrimTiers, simulate: req.Simulate, stdout: &bytes.Buffer{}}
	pn, err := req.Provider.ParamsNode()
	if err != nil {
		return j, &RequestError{Field: "provider.params", Err: err}
	}
	if j.prov, err = r.deps.Registry.ProviderForRequest(req.Provider.Name, "provider", &r.deps.Provider.Params, pn,
		providerDeps(r.deps.Logger, r.deps.Now, r.deps.Store, r.deps.Metrics, req.Provider.Name)); err != nil {
		return j, err
	}
	en, err := req.Engine.ParamsNode()
	if err != nil {
		return j, &RequestError{Field: "engine.params", Err: err}
	}
	var base *yaml.Node
	if ce := r.configuredEngine(req.Engine.Name); ce != nil {
		base, j.publish = &ce.Params, r.deps.Server.Publish && r.deps.Guard != nil
	}
	if j.eng, err = r.deps.Registry.EngineForRequest(req.Engine.Name, "engine", base, en, engines.Deps{
		Logger: r.deps.Logger.With("engine", req.Engine.Name), Stdout: j.stdout, Now: r.deps.Now, RenderOnly: !j.publish,
	}); err != nil {
		return j, err
	}
	if _, ok := j.eng.(engines.Renderer); !ok && !j.publish {
		return j, badRequest("engine.name", "engine %s has no document to render, and it is not an engine this service publishes through (server.publish and engines)", req.Engine.Name)
	}
	return j, nil
}

func (r *Requests) start(ctx context.Context, j *job) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.done(j.res.ID)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.deps.Server.RequestTimeout)
		defer cancel()
		stop := context.AfterFunc(r.ctx, cancel)
		defer stop()
		body, ctype, err := r.run(ctx, j)
		if err != nil && r.ctx.Err() != nil {
			// Shutting down: leave it pending so a restart resumes it.
			r.log.Info("request left pending at shutdown", "request", j.res.ID)
			return
		}
		r.finish(ctx, j, body, ctype, err)
	}()
}

func (r *Requests) run(ctx context.Context, j *job) ([]byte, string, error) {
	if err := j.simulated(); err != nil {
		return nil, "", err
	}
	if err := r.deps.Limiter.Acquire(ctx); err != nil {
		return nil, "", err
	}
	defer r.deps.Limiter.Release()
	g, err := j.prov.Discover(ctx, j.nodes)
	if err != nil {
		return nil, "", fmt.Errorf("discover: %w", err)
	}
	if g, err = g.TrimTop(j.trim); err != nil {
		return nil, "", fmt.Errorf("discover: %w", err)
	}
	rd, canRender := j.eng.(engines.Renderer)
	if j.publish {
		if err := r.deps.Guard.CheckPublish(ctx, g); err != nil {
			return nil, "", fmt.Errorf("publish: %w", err)
		}
		err := j.eng.Publish(ctx, g)
		r.deps.Guard.RequestPublished()
		if err != nil {
			return nil, "", fmt.Errorf("publish: %w", err)
		}
		if j.stdout.Len() > 0 || !canRender {
			ctype := "text/plain; charset=utf-8"
			if canRender {
				ctype = rd.ContentType()
			}
			return j.stdout.Bytes(), ctype, nil
		}
	}
	body, err := rd.Render(ctx, g)
	if err != nil {
		return nil, "", fmt.Errorf("render: %w", err)
	}
	return body, rd.ContentType(), nil
}

// finish stores the outcome of j.
func (r *Requests) finish(ctx context.Context, j *job, body []byte, ctype string, err error) {
	res := *j.res
	res.FinishedAt = r.deps.Now()
	if err != nil {
		res.State, res.ErrKind, res.ErrMessage, res.ErrField = store.StateFailed, KindOf(err), err.Error(), FieldOf(err)
		body = nil
		r.deps.Metrics.requests.WithLabelValues("failed").Inc()
		r.log.Info("request failed", "request", res.ID, "kind", res.ErrKind, "err", err)
	} else {
		res.State, res.ContentType, res.Size = store.StateDone, ctype, len(body)
		if body == nil {
			body = []byte{}
		}
		r.deps.Metrics.requests.WithLabelValues("done").Inc()
	}
	if perr := r.deps.Store.PutResult(ctx, &res, body); perr != nil {
		r.log.Error("store request result", "request", res.ID, "err", perr)
	}
	if _, perr := r.deps.Store.Prune(ctx, r.deps.Now(), r.deps.Retention); perr != nil {
		r.log.Warn("prune store", "err", perr)
	}
}

func (r *Requests) done(id string) {
	r.mu.Lock()
	delete(r.inflight, id)
	r.deps.Metrics.queued.Set(float64(len(r.inflight)))
	r.mu.Unlock()
}

// Result returns the stored request id and its body.
func (r *Requests) Result(ctx context.Context, id string) (*store.Result, []byte, error) {
	return r.deps.Store.Result(ctx, id)
}

// Resume restarts the requests a previous process left pending. Those
// that carried credentials cannot be: they fail with ErrInterrupted. On a
// shared store it takes over only the requests whose replica is gone (its
// lock is free), each claimed in the database so that one replica does.
func (r *Requests) Resume(ctx context.Context) error {
	pending, err := r.deps.Store.PendingResults(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i := range pending {
		res := &pending[i]
		r.mu.Lock()
		running := r.inflight[res.ID]
		r.mu.Unlock()
		if running {
			continue
		}
		if ok, err := r.claim(ctx, res); !ok {
			errs = append(errs, err) // nil when another live replica runs it
			continue
		}
		if res.HadCredentials {
			r.finish(ctx, &job{res: res}, nil, "", fmt.Errorf("credentials are never stored, so submit the request again: %w", ErrInterrupted))
			continue
		}
		req, err := RestoreGenerateRequest(res.Request)
		if err == nil && req.ID() != res.ID {
			err = fmt.Errorf("stored request %s hashes to %s: %w", res.ID, req.ID(), ErrInternal)
		}
		if err != nil {
			r.finish(ctx, &job{res: res}, nil, "", err)
			errs = append(errs, err)
			continue
		}
		r.mu.Lock()
		r.inflight[res.ID] = true
		r.mu.Unlock()
		j, err := r.build(req, res)
		if err != nil {
			r.finish(ctx, j, nil, "", err)
			r.done(res.ID)
			continue
		}
		r.log.Info("resuming request", "request", res.ID)
		r.start(ctx, j)
	}
	return errors.Join(errs...)
}

// claim makes res this replica's when its owner is gone; true when this
// replica may run it.
func (r *Requests) claim(ctx context.Context, res *store.Result) (bool, error) {
	rep := r.deps.Replica
	if rep == nil || res.Owner == rep.ID {
		return true, nil
	}
	alive, err := rep.Alive(ctx, res.Owner)
	if err != nil || alive {
		return false, err
	}
	ok, err := r.deps.Store.ClaimResult(ctx, res.ID, res.Owner, rep.ID)
	if ok {
		r.log.Info("taking over a request its replica left pending", "request", res.ID, "replica", res.Owner)
		res.Owner = rep.ID
	}
	return ok, err
}

// Close cancels the requests in flight (they stay pending in the store)
// and waits for them.
func (r *Requests) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}
