package service

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/toposcope/toposcope/topology"
)

// FollowerConfig configures a Follower.
type FollowerConfig struct {
	// Interval is the time between polls of the leader.
	Interval time.Duration
	// Token is the bearer token sent to the leader; empty sends none.
	Token string
	// Client is the HTTP client; nil builds one with a 2-minute timeout.
	Client *http.Client
}

// Follower keeps a follower replica's topology equal to the leader's: it
// polls the leader's GET /v1/graph (with If-None-Match, so an unchanged
// graph costs a 304) and hands every new graph to adopt.
type Follower struct {
	cfg   FollowerConfig
	adopt func(context.Context, *topology.Graph) (bool, error)
	log   *slog.Logger
}

// newFollower returns a Follower; log may be nil.
func newFollower(cfg FollowerConfig, adopt func(context.Context, *topology.Graph) (bool, error), log *slog.Logger) *Follower {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 2 * time.Minute}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Follower{cfg: cfg, adopt: adopt, log: log.With("component", "follower")}
}

// PeerClient returns an HTTP client for reaching the leader that trusts
// the PEM bundle caFile (the system roots when empty).
func PeerClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("peer CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("peer CA %s: no certificate found", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}, nil
}

// Run polls leader (its base URL, e.g. http://10.0.3.7:49021) until ctx
// is done.
func (f *Follower) Run(ctx context.Context, leader string) {
	leader = strings.TrimRight(leader, "/")
	var etag string
	failing := false
	for {
		next, err := f.poll(ctx, leader, etag)
		switch {
		case err == nil:
			etag = next
			if failing {
				f.log.Info("reading the leader's topology again", "leader", leader)
			}
			failing = false
		case ctx.Err() != nil:
			return
		case !failing:
			f.log.Warn("cannot read the leader's topology; serving the last one", "leader", leader, "err", err)
			failing = true
		default:
			f.log.Debug("cannot read the leader's topology", "leader", leader, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(f.cfg.Interval):
		}
	}
}

// errNoLeaderTopology is returned while the leader has no topology yet.
var errNoLeaderTopology = errors.New("the leader has no topology yet")

// poll fetches the leader's graph unless it is still etag, adopts it,
// and returns its ETag.
func (f *Follower) poll(ctx context.Context, leader, etag string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, leader+"/v1/graph", nil)
	if err != nil {
		return etag, fmt.Errorf("leader URL: %w", err)
	}
	if f.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.cfg.Token)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		return etag, fmt.Errorf("GET %s/v1/graph: %w", leader, err)
	}
	defer func() { _ = resp.Body.Close() }()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotModified:
		return etag, nil
	case http.StatusServiceUnavailable:
		return etag, errNoLeaderTopology
	default:
		return etag, fmt.Errorf("GET %s/v1/graph: %s", leader, resp.Status)
	}
	var g topology.Graph
	if err := json.NewDecoder(resp.Body).Decode(&g); err != nil {
		return etag, fmt.Errorf("decode the leader's graph: %w", err)
	}
	changed, err := f.adopt(ctx, &g)
	if err != nil {
		return etag, fmt.Errorf("adopt the leader's graph: %w", err)
	}
	if changed {
		f.log.Info("topology updated from the leader", "leader", leader, "snapshot", resp.Header.Get("X-Toposcope-Snapshot"))
	}
	return resp.Header.Get("ETag"), nil
}
