package netq

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
)

// API paths, relative to Config.URL.
const (
	loginPath  = "api/netq/auth/v1/login"
	selectPath = "api/netq/auth/v1/select/opid/"
	fetchPath  = "api/netq/telemetry/v1/object/topologygraph/fetch-topology?timestamp=0"
)

// loginRequest is the body of POST api/netq/auth/v1/login.
type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// LoginResponse is the answer to a login.
type LoginResponse struct {
	AccessToken string     `json:"access_token"`
	Premises    []Premises `json:"premises"`
}

// Premises is one NetQ premises (site) the user may select.
type Premises struct {
	OPID            int64  `json:"opid"`
	Name            string `json:"name"`
	Namespace       string `json:"namespace,omitempty"`
	ConfigKeyViewed bool   `json:"config_key_viewed"`
}

// selectResponse is the answer to GET api/netq/auth/v1/select/opid/{opid}.
type selectResponse struct {
	AccessToken string `json:"access_token"`
}

// fetchRequest is the body of the topology-graph fetch.
type fetchRequest struct {
	Filters              []any `json:"filters"`
	SubgroupNestingDepth int   `json:"subgroupNestingDepth"`
}

// Graph is the topology graph NetQ returns (the one element of the
// fetch-topology array).
type Graph struct {
	Nodes []GraphNode `json:"nodes" yaml:"nodes"`
	Links []GraphLink `json:"links" yaml:"links"`
}

// GraphNode is a tier group (node_type "tier", holding devices in
// compounded_nodes) or a device (node_type "device").
type GraphNode struct {
	ID       string `json:"id" yaml:"id"`
	Name     string `json:"name,omitempty" yaml:"name,omitempty"`
	NodeType string `json:"node_type" yaml:"node_type"`
	// Tier is the fabric tier: 1 for leaves, 2 for spines…, -1 for
	// hosts (discovered through LLDP).
	Tier            int         `json:"tier" yaml:"tier"`
	DeviceType      string      `json:"device_type,omitempty" yaml:"device_type,omitempty"`
	CompoundedNodes []GraphNode `json:"compounded_nodes,omitempty" yaml:"compounded_nodes,omitempty"`
}

// GraphLink is a link between two devices; its ID is "<a>-*-<b>".
type GraphLink struct {
	ID     string `json:"id" yaml:"id"`
	Src    string `json:"src,omitempty" yaml:"src,omitempty"`
	Target string `json:"target,omitempty" yaml:"target,omitempty"`
	// Size is the number of cables the link bundles.
	Size int `json:"size,omitempty" yaml:"size,omitempty"`
}

// site is one selected premises and its graph.
type site struct {
	name  string
	graph Graph
}

// fetch logs in, selects the premises and fetches their graphs.
func (p *Provider) fetch(ctx context.Context) ([]site, error) {
	if p.cfg.Snapshot != nil {
		return []site{{name: "snapshot", graph: *p.cfg.Snapshot}}, nil
	}
	var login LoginResponse
	err := p.client.JSON(ctx, http.MethodPost, p.cfg.Endpoint(loginPath), nil,
		loginRequest{Username: p.cfg.Username, Password: p.password}, &login)
	if err != nil {
		return nil, classify("login", err)
	}
	if login.AccessToken == "" {
		return nil, errors.New("login: the answer holds no access_token")
	}
	chosen, err := p.choose(login.Premises)
	if err != nil {
		return nil, err
	}
	var sites []site
	for _, pr := range chosen {
		g, err := p.fetchPremises(ctx, login.AccessToken, pr)
		if err != nil {
			return nil, httpretry.ScrubError(err, login.AccessToken)
		}
		sites = append(sites, site{name: pr.Name, graph: g})
	}
	return sites, nil
}

// choose picks the premises: those named (by name or opid) in
// Config.Premises, else every premises whose configuration key was viewed.
func (p *Provider) choose(all []Premises) ([]Premises, error) {
	var out []Premises
	if len(p.cfg.Premises) == 0 {
		for _, pr := range all {
			if pr.ConfigKeyViewed {
				out = append(out, pr)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("login: none of the %d premises is ready (config_key_viewed); name one in premises", len(all))
		}
		return out, nil
	}
	var known []string
	for _, want := range p.cfg.Premises {
		found := false
		for _, pr := range all {
			if pr.Name == want || strconv.FormatInt(pr.OPID, 10) == want {
				if !slices.ContainsFunc(out, func(o Premises) bool { return o.OPID == pr.OPID }) {
					out = append(out, pr)
				}
				found = true
			}
		}
		if !found {
			known = known[:0]
			for _, pr := range all {
				known = append(known, fmt.Sprintf("%s (%d)", pr.Name, pr.OPID))
			}
			return nil, fmt.Errorf("premises %q is not offered by NetQ (offered: %v)", want, known)
		}
	}
	return out, nil
}

func (p *Provider) fetchPremises(ctx context.Context, loginToken string, pr Premises) (Graph, error) {
	what := fmt.Sprintf("premises %q (opid %d)", pr.Name, pr.OPID)
	var sel selectResponse
	err := p.client.JSON(ctx, http.MethodGet, p.cfg.Endpoint(selectPath+strconv.FormatInt(pr.OPID, 10)),
		bearer(loginToken), nil, &sel)
	if err != nil {
		return Graph{}, classify("select "+what, err)
	}
	if sel.AccessToken == "" {
		return Graph{}, fmt.Errorf("select %s: the answer holds no access_token", what)
	}
	var graphs []Graph
	err = p.client.JSON(ctx, http.MethodPost, p.cfg.Endpoint(fetchPath), bearer(sel.AccessToken),
		fetchRequest{Filters: []any{}, SubgroupNestingDepth: 2}, &graphs)
	if err != nil {
		return Graph{}, httpretry.ScrubError(classify("fetch topology of "+what, err), sel.AccessToken)
	}
	if len(graphs) != 1 {
		return Graph{}, fmt.Errorf("fetch topology of %s: %w: want a one-element array, got %d elements", what, ErrInconsistent, len(graphs))
	}
	return graphs[0], nil
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// classify names the call and wraps its error with the shared sentinels
// (providers.ClassifyHTTP).
func classify(what string, err error) error {
	return fmt.Errorf("%s: %w", what, providers.ClassifyHTTP(err))
}
