package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/server"
)

const clique = "7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.32766"

func TestPutAgentRejectsBadReports(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	for _, tc := range []struct {
		name, path, body, field string
	}{
		{"path and body disagree", "/v1/agents/gpu01", `{"node":"gpu02"}`, "node"},
		{"unknown field", "/v1/agents/gpu01", `{"node":"gpu01","gpu":4}`, "gpu"},
		{"not JSON", "/v1/agents/gpu01", `node: gpu01`, "body"},
		{"trailing data", "/v1/agents/gpu01", `{"node":"gpu01"} {}`, "body"},
		{"negative GPUs", "/v1/agents/gpu01", `{"node":"gpu01","gpus":-1}`, "gpus"},
		{"bad clique", "/v1/agents/gpu01", `{"node":"gpu01","clique":"nodot"}`, "clique"},
		{"bad HCA name", "/v1/agents/gpu01", `{"node":"gpu01","hcas":[{"name":"mlx5 0"}]}`, "hcas[0].name"},
		{"bad GUID", "/v1/agents/gpu01", `{"node":"gpu01","hcas":[{"name":"mlx5_0","nodeGUID":"0x0C42"}]}`, "hcas[0].nodeGUID"},
		{"bad node name", "/v1/agents/gpu%2C01", `{"node":"gpu,01"}`, "node"},
	} {
		w := s.do(http.MethodPut, tc.path, tc.body)
		if w.Code != http.StatusBadRequest {
			t.Errorf("%s: PUT = %d %s, want 400", tc.name, w.Code, w.Body)
			continue
		}
		if e := errorOf(t, w); e.Field != tc.field {
			t.Errorf("%s: error field = %q (%s), want %q", tc.name, e.Field, e.Message, tc.field)
		}
	}
	if w := s.do(http.MethodGet, "/v1/agents/gpu01", ""); w.Code != http.StatusNotFound {
		t.Errorf("GET after rejected PUTs = %d %s, want 404", w.Code, w.Body)
	}
	if w := s.do(http.MethodGet, "/v1/agents", ""); w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"agents":[]}` {
		t.Errorf("GET /v1/agents = %d %s, want an empty list", w.Code, w.Body)
	}
}

// TestAgentsEndToEnd sends reports with the agent's Reporter to a real
// listener, reads them back, generates a Slurm block topology from them
// in the server (the agents provider on the server's own store) and
// discovers them from a second process's point of view (the agents
// provider against the server's REST API, with a token).
func TestAgentsEndToEnd(t *testing.T) {
	t.Parallel()
	const read, write = "read-token-5b1e-a9f03c", "write-token-77c2-b81d0e"
	s := newStack(t, stackOpts{provider: "agents", tokens: "read:" + read + "\nwrite:" + write})
	srv := httptest.NewServer(s.handler)
	defer srv.Close()
	ctx := context.Background()

	facts := []agent.Facts{
		{Node: "gb01", GPUs: 4, Clique: clique, Rack: "rack-a", HCAs: []agent.HCA{{Name: "mlx5_0", NodeGUID: "0c42a10300a1b2c3"}}},
		{Node: "gb02", GPUs: 4, Clique: clique, Rack: "rack-a"},
		{Node: "pcie01", GPUs: 8},
	}
	if err := (&agent.Reporter{Server: srv.URL, Token: read}).Report(ctx, facts[0]); err == nil ||
		strings.Contains(err.Error(), read) {
		t.Fatalf("report with a read token = %v, want a refusal that does not quote the token", err)
	}
	rep := &agent.Reporter{Server: srv.URL, Token: write}
	for _, f := range facts {
		if err := rep.Report(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	w := s.do(http.MethodGet, "/v1/agents/gb01", "", "Authorization", "Bearer "+read)
	var one providers.AgentReport
	if err := json.Unmarshal(w.Body.Bytes(), &one); err != nil || w.Code != http.StatusOK ||
		one.Facts.HCAs[0].NodeGUID != "0c42a10300a1b2c3" || one.ReceivedAt.IsZero() {
		t.Fatalf("GET /v1/agents/gb01 = %d %s (%v)", w.Code, w.Body, err)
	}
	w = s.do(http.MethodGet, "/v1/agents", "", "Authorization", "Bearer "+read)
	var list server.AgentList
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list.Agents) != 3 {
		t.Fatalf("GET /v1/agents = %d %s (%v)", w.Code, w.Body, err)
	}

	// In the server: the agents provider reads the store.
	body := `{"provider":{"name":"agents"},"engine":{"name":"slurm","params":{"plugin":"topology/block","slurmVersion":"24.11"}}}`
	w = s.do(http.MethodPost, "/v1/generate", body, "Authorization", "Bearer "+write)
	if w.Code != http.StatusAccepted {
		t.Fatalf("generate = %d %s", w.Code, w.Body)
	}
	res := s.poll("/v1/topology?uid="+w.Body.String(), "Authorization", "Bearer "+read)
	if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), "Nodes=gb[01-02]") ||
		strings.Contains(res.Body.String(), "Nodes=pcie01") {
		t.Fatalf("block topology from agent reports = %d %s", res.Code, res.Body)
	}

	// From elsewhere: the agents provider against the REST API.
	p, err := agents.New(agents.Config{
		Server:  &httpretry.Connection{URL: srv.URL, AllowHTTP: true},
		Token:   read,
		MaxAge:  agents.DefaultMaxAge,
		Missing: agents.MissingUnplaced,
	}, providers.Deps{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(ctx, providers.Request{Nodes: []providers.NodeRef{{Name: "gb01"}, {Name: "gb02"}, {Name: "gone"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(g.Domains()); got != 1 {
		t.Fatalf("remote discovery: %d domains, want 1", got)
	}
	if n, ok := g.Node("gb01"); !ok || n.GPUs != 4 || n.Domain == "" || n.SubDomain == "" ||
		n.Attributes[agents.HCAsAttribute] != "mlx5_0=0c42a10300a1b2c3" {
		t.Fatalf("remote discovery: gb01 = %+v", n)
	}
	if n, ok := g.Node("gone"); !ok || n.Domain != "" {
		t.Fatalf("remote discovery: the node with no report should be kept, in no domain")
	}
}
