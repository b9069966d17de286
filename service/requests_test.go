package service_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

type fixture struct {
	store   *store.Store
	limiter *service.Limiter
	metrics *service.Metrics
	path    string
}

func newFixture(t *testing.T, path string) *fixture {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "db")
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := service.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: st, limiter: service.NewLimiter(1), metrics: m, path: path}
}

func (f *fixture) requests(maxQueued int) *service.Requests {
	srv := config.DefaultServer()
	srv.MaxQueuedRequests = maxQueued
	return service.NewRequests(service.RequestsDeps{
		Registry: app.Registry(), Store: f.store, Metrics: f.metrics, Limiter: f.limiter,
		Server: srv, Retention: config.DefaultStore().Retention, Provider: config.Plugin{Name: "sim"},
	})
}

func parse(t *testing.T, body string) *service.GenerateRequest {
	t.Helper()
	req, err := server.ParseGenerateRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func waitDone(t *testing.T, r *service.Requests, id string) *store.Result {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, _, err := r.Result(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if res.State != store.StatePending {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s still pending", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const treeReq = `{"provider":{"name":"sim"},"engine":{"name":"slurm"}}`

func TestRequestsMergeAndBusy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	defer f.store.Close()
	r := f.requests(2)
	defer r.Close()
	// Hold the only discovery slot so that requests stay in flight.
	if err := f.limiter.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	id, merged, err := r.Submit(context.Background(), parse(t, treeReq))
	if err != nil || merged {
		t.Fatalf("first submit = %s %v %v", id, merged, err)
	}
	id2, merged, err := r.Submit(context.Background(), parse(t, treeReq))
	if err != nil || !merged || id2 != id {
		t.Fatalf("identical submit = %s %v %v, want merged into %s", id2, merged, err, id)
	}
	if _, _, err := r.Submit(context.Background(), parse(t, `{"provider":{"name":"sim","params":{"model":"nvl72"}},"engine":{"name":"slurm"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Submit(context.Background(), parse(t, `{"provider":{"name":"sim","params":{"model":"mixed"}},"engine":{"name":"slurm"}}`)); !errors.Is(err, service.ErrBusy) {
		t.Fatalf("third distinct request: %v, want ErrBusy", err)
	}
	f.limiter.Release()
	if res := waitDone(t, r, id); res.State != store.StateDone || res.Size == 0 {
		t.Errorf("result = %+v", res)
	}
}

func TestRequestsResumeAfterRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	r := f.requests(10)
	if err := f.limiter.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	plain, _, err := r.Submit(context.Background(), parse(t, treeReq))
	if err != nil {
		t.Fatal(err)
	}
	withCreds, _, err := r.Submit(context.Background(), parse(t, `{"provider":{"name":"sim","params":{"model":"nvl72"},"creds":{"k":"v"}},"engine":{"name":"slurm"}}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // shutdown while both wait: they stay pending
	f.limiter.Release()
	if err := f.store.Close(); err != nil {
		t.Fatal(err)
	}

	f = newFixture(t, f.path)
	defer f.store.Close()
	r = f.requests(10)
	defer r.Close()
	if err := r.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res := waitDone(t, r, plain); res.State != store.StateDone {
		t.Errorf("resumed request = %+v", res)
	}
	res := waitDone(t, r, withCreds)
	if res.State != store.StateFailed || !errors.Is(service.ResultError(res), service.ErrInterrupted) {
		t.Errorf("request with credentials = %+v", res)
	}
}

// TestResultErrorKeepsKindAndField: every kind is rebuilt into an error
// of the same kind, message and field; a simulated status (which has no
// field) into the same status and message.
func TestResultErrorKeepsKindAndField(t *testing.T) {
	t.Parallel()
	sim := service.ResultError(&store.Result{ErrKind: "simulated-503", ErrMessage: "m"})
	if se := (*service.SimulatedError)(nil); !errors.As(sim, &se) || se.Code != 503 || se.Message != "m" || service.KindOf(sim) != "simulated-503" {
		t.Errorf("simulated-503 rebuilt as %#v", sim)
	}
	for _, kind := range service.Kinds() {
		err := service.ResultError(&store.Result{ErrKind: kind, ErrMessage: "m", ErrField: "f"})
		if got := service.KindOf(err); got != kind {
			t.Errorf("kind %s round-trips to %s", kind, got)
		}
		if service.FieldOf(err) != "f" || err.Error() != "m" {
			t.Errorf("kind %s: field %q message %q", kind, service.FieldOf(err), err)
		}
	}
}

// TestRequestsSharedResume: two replicas on one PostgreSQL database. The
// requests replica a took stay its own while it lives: replica b's
// Resume leaves them pending. Once a is gone (its lock freed), b takes
// them over: the plain one is run, the one
// that carried credentials fails as interrupted.
func TestRequestsSharedResume(t *testing.T) {
	t.Parallel()
	db := dbtest.Start(t.Context(), t, dbtest.Postgres)
	open := func() *fixture {
		t.Helper()
		st, err := store.OpenDatabase(t.Context(), store.Database{Driver: db.Driver(), DSN: db.DSN()})
		if err != nil {
			t.Fatal(err)
		}
		m, err := service.NewMetrics(prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		return &fixture{store: st, limiter: service.NewLimiter(1), metrics: m}
	}
	replica := func(f *fixture) (*service.Requests, *service.Replica) {
		t.Helper()
		rep, err := service.JoinReplicas(t.Context(), f.store, time.Second, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		srv := config.DefaultServer()
		return service.NewRequests(service.RequestsDeps{
			Registry: app.Registry(), Store: f.store, Metrics: f.metrics, Limiter: f.limiter,
			Server: srv, Retention: config.DefaultStore().Retention, Provider: config.Plugin{Name: "sim"}, Replica: rep,
		}), rep
	}
	fa := open()
	ra, repA := replica(fa)
	if err := fa.limiter.Acquire(t.Context()); err != nil { // a's requests wait
		t.Fatal(err)
	}
	plain, _, err := ra.Submit(t.Context(), parse(t, treeReq))
	if err != nil {
		t.Fatal(err)
	}
	withCreds, _, err := ra.Submit(t.Context(), parse(t, `{"provider":{"name":"sim","params":{"model":"nvl72"},"creds":{"k":"v"}},"engine":{"name":"slurm"}}`))
	if err != nil {
		t.Fatal(err)
	}
	fb := open()
	defer fb.store.Close()
	rb, repB := replica(fb)
	defer rb.Close()
	defer func() { _ = repB.Leave(context.Background()) }()
	if err := rb.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	for _, id := range []string{plain, withCreds} {
		res, _, err := rb.Result(t.Context(), id)
		if err != nil || res.State != store.StatePending || res.Owner == repB.ID {
			t.Fatalf("request %s while its replica lives: %+v, %v; want pending and a's", id, res, err)
		}
	}
	ra.Close() // a goes: its requests stay pending, its lock with it
	fa.limiter.Release()
	if err := errors.Join(repA.Leave(t.Context()), fa.store.Close()); err != nil {
		t.Fatal(err)
	}
	if err := rb.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := waitDone(t, rb, plain); res.State != store.StateDone || res.Owner != repB.ID {
		t.Errorf("orphaned request taken over: %+v", res)
	}
	if res := waitDone(t, rb, withCreds); res.State != store.StateFailed || !errors.Is(service.ResultError(res), service.ErrInterrupted) {
		t.Errorf("orphaned request with credentials: %+v", res)
	}
}
