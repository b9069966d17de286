package kubescheduler_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service/extender"
	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// roundRobin is a Service in front of replicas: each call of a verb
// (filter, prioritize...) goes to the next replica in turn, so that one
// gang's filter calls alternate between them.
type roundRobin struct {
	mu      sync.Mutex
	next    map[string]int
	proxies []*httputil.ReverseProxy
	calls   []atomic.Int64
}

func newRoundRobin(t *testing.T, urls ...string) (*roundRobin, string) {
	t.Helper()
	rr := &roundRobin{calls: make([]atomic.Int64, len(urls)), next: map[string]int{}}
	for _, u := range urls {
		target, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		rr.proxies = append(rr.proxies, httputil.NewSingleHostReverseProxy(target))
	}
	srv := httptest.NewServer(rr)
	t.Cleanup(srv.Close)
	return rr, srv.URL
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rr.mu.Lock()
	i := rr.next[r.URL.Path] % len(rr.proxies)
	rr.next[r.URL.Path]++
	rr.mu.Unlock()
	rr.calls[i].Add(1)
	rr.proxies[i].ServeHTTP(w, r)
}

// TestExtenderTwoReplicas: two toposcope replicas on one PostgreSQL
// database behind one address that sends kube-scheduler's extender
// calls to each in turn. First a gang "other" is held through replica a
// alone, on the only spine with 8 free nodes (the planner's first
// candidate); then the 8 pods of gang "train" are bound to 8 nodes, all
// outside that hold, though half their calls reached replica b, which
// never saw "other" itself: it read the hold in the database. Both
// replicas answered calls.
func TestExtenderTwoReplicas(t *testing.T) {
	t.Parallel()
	c, f, ns := setUp(t)
	ctx := t.Context()
	busy := bindFirstOfRacks(t, c, f, ns)
	racks := f.Members(0)
	db := dbtest.Start(ctx, t, dbtest.Postgres)
	dsn := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(dsn, []byte(db.DSN()), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := func(cfg *config.File) {
		cfg.Store.Database.Driver, cfg.Store.Database.DSNFile = db.Driver(), dsn
		cfg.Store.Database.RefreshInterval = 500 * time.Millisecond
	}
	a := startToposcope(t, c, f, ns, shared)
	b := startToposcope(t, c, f, ns, shared)
	a.waitLedger(t, len(busy))
	b.waitLedger(t, len(busy))
	want := a.place(t, placement.Request{Account: "team", Nodes: 8, GPUsPerNode: consumertest.GPUsPerNode})
	slices.Sort(want)
	var names []string
	for _, members := range racks {
		names = append(names, members...)
	}
	other := schedulerPod(ns, "other-0", "none", consumertest.GPUsPerNode, f, "team")
	other.Labels["toposcope.io/gang"] = "other"
	other.Annotations["toposcope.io/gang-size"] = "8"
	body, err := json.Marshal(extender.Args{Pod: &extender.Pod{Pod: *other}, NodeNames: &names})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(a.url+"/v1/extender/filter", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var held extender.FilterResult
	err = json.NewDecoder(resp.Body).Decode(&held)
	_ = resp.Body.Close()
	if err != nil || held.NodeNames == nil {
		t.Fatalf("filter of gang other on replica a: %d %v", resp.StatusCode, err)
	}
	if h := slices.Sorted(slices.Values(*held.NodeNames)); !slices.Equal(h, want) {
		t.Fatalf("gang other is held on %v, want the planner's first candidate %v", h, want)
	}
	rr, front := newRoundRobin(t, a.url, b.url)
	scheduler, s := startExtendedScheduler(t, c, &toposcope{url: front, log: a.log})
	logs := func() string { return s.Log() + "\n" + a.log.String() + "\n" + b.log.String() }
	got := runTrainGang(t, c, f, ns, scheduler, logs)
	t.Logf("gang train bound to %v; gang other holds %v; extender calls per replica: %d, %d", got, want, rr.calls[0].Load(), rr.calls[1].Load())
	if len(got) != 8 {
		t.Errorf("gang train bound to %d nodes %v, want 8", len(got), got)
	}
	for _, n := range got {
		if slices.Contains(want, n) {
			t.Errorf("gang train bound to %v, into gang other's hold %v", got, want)
			break
		}
	}
	if rr.calls[0].Load() == 0 || rr.calls[1].Load() == 0 {
		t.Errorf("extender calls per replica: %d, %d; want both to answer", rr.calls[0].Load(), rr.calls[1].Load())
	}
}
