// Package agents is the provider of what node agents reported: each
// `toposcope agent --server URL` PUTs its node's facts (instance identity,
// GPU count, NVLink clique and rack, HCAs) to the server, which keeps the
// latest report per node; this provider turns the fresh reports into
// nodes in their NVLink domains. It builds no switch tree: merge it with a
// fabric or cloud provider (see providers/merge) for that. Slurm clusters
// get NVLink domains this way without ssh or pdsh fan-out.
package agents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "agents"

// Sentinel errors.
var (
	// ErrNoSource means the provider has nowhere to read reports from:
	// no server is configured and it does not run inside the server.
	ErrNoSource = errors.New("no agent reports to read: set server, set reports, or run inside toposcope serve")
	// ErrMissing means requested nodes have no fresh report (with
	// missing: error).
	ErrMissing = errors.New("nodes without a fresh agent report")
	// ErrBadReport means a stored report cannot be used (a malformed
	// clique).
	ErrBadReport = errors.New("unusable agent report")
)

// HCAsAttribute is the node attribute listing the reported HCAs,
// "mlx5_0=<node GUID>,mlx5_1=...".
const HCAsAttribute = "hcas"

// Provider reads agent reports.
type Provider struct {
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	source providers.AgentReports
	obs    providers.Observer
	nodes  []string
}

// New validates cfg and returns the provider. Reports come from cfg.Server
// when set, else from deps.Agents.
func New(cfg Config, deps providers.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, log: deps.Logger, now: deps.Now, source: deps.Agents, obs: deps.Observer}
	if cfg.Nodes != "" {
		p.nodes, _ = hostlist.Expand(cfg.Nodes) // validated
	}
	if cfg.Server != nil {
		src, err := newRemote(*cfg.Server, cfg.token(), deps.Logger, deps.Observer)
		if err != nil {
			return nil, fmt.Errorf("agents: server: %w", err)
		}
		p.source = src
	}
	if len(cfg.Reports) > 0 {
		p.source = inline{facts: cfg.Reports, now: deps.Now}
	}
	if p.source == nil {
		return nil, config.Errorf("server", "%v", ErrNoSource)
	}
	return p, nil
}

// Discover returns the requested nodes (or every node with a fresh
// report) with what their agents reported.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	dropped := newDrops()
	fresh, stale, err := p.fresh(ctx, &dropped)
	if err != nil {
		return nil, err
	}
	names := p.Nodes(req, fresh)
	ids := make(map[string]string, len(req.Nodes)) // the request's instance IDs, for nodes without a report
	for _, n := range req.Nodes {
		ids[n.Name] = n.InstanceID
	}
	// Every node is declared before any placement, so that a switch
	// named like a node is caught whichever comes first; the
	// placements are then tried, and one that would make the graph
	// unbuildable is dropped, never the discovery.
	b := topology.NewBuilder()
	b.Grow(len(names))
	var missing []string
	paths := map[string][]string{}
	var domains []placed
	for _, name := range names {
		r, ok := fresh[name]
		if !ok {
			missing = append(missing, name)
			b.AddNode(topology.Node{Name: name, InstanceID: ids[name]})
			continue
		}
		n, domain, sub, err := node(r.Facts)
		if err != nil { // vet dropped every report node refuses
			return nil, fmt.Errorf("agents: %w", err)
		}
		b.AddNode(n)
		if len(r.Facts.Fabric) > 0 {
			paths[name] = r.Facts.Fabric
		}
		if domain != "" {
			domains = append(domains, placed{node: name, domain: domain, sub: sub})
		}
	}
	if leaves := neighbor.Leaves(lldpOf(fresh)); len(leaves) > 0 {
		for _, name := range names {
			if _, ok := paths[name]; !ok && leaves[name] != nil {
				paths[name] = []string{leaves[name].Name}
			}
		}
	}
	placePaths(b, paths, &dropped)
	placeDomains(b, domains, &dropped)
	dropped.report(p.log, p.obs)
	if len(missing) > 0 {
		if p.cfg.Missing == MissingError {
			return nil, fmt.Errorf("agents: %w: %d (%s)", ErrMissing, len(missing), hostlist.Compress(missing))
		}
		p.log.Warn("agents: nodes without a fresh report left in no domain", "count", len(missing),
			"nodes", hostlist.Compress(missing), "staleReports", stale, "maxAge", p.cfg.MaxAge)
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("agents: build graph: %w", err)
	}
	return g, nil
}

// Fresh returns the reports no older than maxAge, by node, with the
// ones that fail the checks every report passes dropped (logged and
// counted), and how many were stale.
func (p *Provider) Fresh(ctx context.Context) (map[string]providers.AgentReport, int, error) {
	dropped := newDrops()
	fresh, stale, err := p.fresh(ctx, &dropped)
	dropped.report(p.log, p.obs)
	return fresh, stale, err
}

func (p *Provider) fresh(ctx context.Context, dropped *drops) (map[string]providers.AgentReport, int, error) {
	reports, err := p.source.AgentReports(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("agents: %w", err)
	}
	now := p.now()
	fresh := make(map[string]providers.AgentReport, len(reports))
	stale := 0
	for _, r := range reports {
		if p.cfg.MaxAge > 0 && now.Sub(r.ReceivedAt) > p.cfg.MaxAge {
			stale++
			continue
		}
		fresh[r.Facts.Node] = r
	}
	vet(fresh, dropped)
	return fresh, stale, nil
}

// Nodes returns the nodes to cover, in order: the request's, else the
// configured nodes, else every node with a fresh report.
func (p *Provider) Nodes(req providers.Request, fresh map[string]providers.AgentReport) []string {
	switch {
	case len(req.Nodes) > 0:
		out := make([]string, len(req.Nodes))
		for i, n := range req.Nodes {
			out[i] = n.Name
		}
		return out
	case len(p.nodes) > 0:
		return p.nodes
	}
	out := make([]string, 0, len(fresh))
	for name := range fresh {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// node turns one report into a graph node and its NVLink domain.
func node(f providers.NodeFacts) (topology.Node, string, string, error) {
	n := topology.Node{Name: f.Node, InstanceID: f.InstanceID, Region: f.Region, Zone: f.Zone, GPUs: f.GPUs}
	if len(f.HCAs) > 0 {
		hcas := make([]string, len(f.HCAs))
		for i, h := range f.HCAs {
			hcas[i] = h.Name
			if h.NodeGUID != "" {
				hcas[i] += "=" + h.NodeGUID
			}
		}
		n.Attributes = map[string]string{HCAsAttribute: strings.Join(hcas, ",")}
	}
	if f.Clique == "" {
		return n, f.FabricDomain, "", nil
	}
	c, err := nvlink.ParseCliqueLabel(f.Clique)
	if err != nil {
		return n, "", "", fmt.Errorf("%w: node %s: %w", ErrBadReport, f.Node, err)
	}
	return n, c.String(), f.Rack, nil
}

// remote reads the reports of a toposcope server over REST.
type remote struct {
	client *httpretry.Client
	url    string
	header http.Header
}

func newRemote(c httpretry.Connection, tok httpretry.Secret, log *slog.Logger, obs providers.Observer) (*remote, error) {
	token, err := tok.Resolve()
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	client, err := c.Client(log, httpretry.WithSecrets(token),
		httpretry.WithTransport(func(rt http.RoundTripper) http.RoundTripper { return providers.ObservedTransport(rt, Name, obs) }))
	if err != nil {
		return nil, err
	}
	r := &remote{client: client, url: c.Endpoint("/v1/agents"), header: http.Header{}}
	if token != "" {
		r.header.Set("Authorization", "Bearer "+token)
	}
	return r, nil
}

// maxPages caps the pages of GET /v1/agents one discovery reads: the
// server keeps at most 100000 reports, 1000 a page.
const maxPages = 1000

// AgentReports implements providers.AgentReports with GET /v1/agents,
// page by page.
func (r *remote) AgentReports(ctx context.Context) ([]providers.AgentReport, error) {
	var out []providers.AgentReport
	after := ""
	for range maxPages {
		var body struct {
			Agents []providers.AgentReport `json:"agents"`
			Next   string                  `json:"next"`
		}
		u := r.url + "?limit=1000"
		if after != "" {
			u += "&after=" + url.QueryEscape(after)
		}
		if err := r.client.JSON(ctx, http.MethodGet, u, r.header, nil, &body); err != nil {
			return nil, providers.ClassifyHTTP(err)
		}
		out = append(out, body.Agents...)
		if body.Next == "" {
			return out, nil
		}
		if body.Next <= after {
			return nil, fmt.Errorf("%w: GET /v1/agents: page after %q names %q next", providers.ErrUnavailable, after, body.Next)
		}
		after = body.Next
	}
	return nil, fmt.Errorf("%w: GET /v1/agents: more than %d pages", providers.ErrUnavailable, maxPages)
}

// inline serves Config.Reports as just received.
type inline struct {
	facts []providers.NodeFacts
	now   func() time.Time
}

// AgentReports implements providers.AgentReports.
func (in inline) AgentReports(context.Context) ([]providers.AgentReport, error) {
	out := make([]providers.AgentReport, len(in.facts))
	at := in.now()
	for i, f := range in.facts {
		out[i] = providers.AgentReport{Facts: f, ReceivedAt: at}
	}
	return out, nil
}

// NewFactory describes the agents provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "what node agents (toposcope agent --server) reported: identity, GPUs, NVLink domains", exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) { return New(c, d) })
}

// lldpOf returns the LLDP neighbors of the fresh reports that carry no
// fabric path from a metadata service: the nodes placed under their
// Ethernet leaf group (neighbor.Leaves). Above the leaves nothing is
// known from the hosts: the groups are the tree's roots (the lldp
// provider adds the switches above them).
func lldpOf(fresh map[string]providers.AgentReport) map[string][]providers.LLDPNeighbor {
	out := map[string][]providers.LLDPNeighbor{}
	for node, r := range fresh {
		if len(r.Facts.Fabric) == 0 && len(r.Facts.LLDP) > 0 {
			out[node] = r.Facts.LLDP
		}
	}
	return out
}
