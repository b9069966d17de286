package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service"
)

// TestBadStoredReportsDropOnlyTheirNode: reports that got into the store
// before the server checked them (an empty switch, a GPU count that
// overflows the cluster total, a reversed path, a node hung from a spine)
// drop their own node's facts, with a warning listing them and a metric;
// the discovery succeeds with every other node's facts.
func TestBadStoredReportsDropOnlyTheirNode(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{provider: "agents"})
	now := time.Now().UTC()
	for _, f := range []providers.NodeFacts{
		{Node: "gpu01", GPUs: 8, Fabric: []string{"leaf1", "spine1"}},
		{Node: "gpu02", GPUs: 8, Fabric: []string{"leaf1", "spine1"}},
		{Node: "gpu03", GPUs: 8, Fabric: []string{"leaf2", "spine1"}},
		{Node: "gpu04", GPUs: 8, Fabric: []string{"leaf2", "spine1"}},
		{Node: "ghost01", Fabric: []string{""}},
		{Node: "gpu05", GPUs: 8, Fabric: []string{"spine1", "leaf2"}},
		{Node: "gpu06", GPUs: 8, Fabric: []string{"spine1"}},
		{Node: "gpu07", GPUs: 9223372036854775807},
	} {
		if err := s.store.PutAgentReport(t.Context(), providers.AgentReport{Facts: f, ReceivedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	s.discover()
	g := s.loop.State().Graph
	for _, name := range []string{"ghost01", "gpu07"} {
		if _, ok := g.Node(name); ok {
			t.Errorf("node %s with an invalid report is in the graph", name)
		}
	}
	for name, leaf := range map[string]string{"gpu01": "leaf1", "gpu03": "leaf2", "gpu05": "", "gpu06": ""} {
		n, ok := g.Node(name)
		if !ok || n.Leaf != leaf || n.GPUs != 8 {
			t.Errorf("node %s = %+v (found %v), want leaf %q and 8 GPUs", name, n, ok, leaf)
		}
	}
	for reason, want := range map[string]float64{"invalid": 2, "fabric_conflict": 2} {
		if got, _ := s.metric("toposcope_provider_dropped_facts_total", map[string]string{"provider": "agents", "reason": reason}); got != want {
			t.Errorf("dropped %s = %v, want %v", reason, got, want)
		}
	}
	logs := s.logs.String()
	for _, want := range []string{"reason=invalid count=2", "ghost01", "gpu07", "reason=fabric_conflict count=2", "gpu[05-06]"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if w := s.do(http.MethodGet, "/readyz", ""); w.Code != http.StatusOK {
		t.Errorf("readyz = %d %s", w.Code, w.Body)
	}
}

func TestDeleteAgentReport(t *testing.T) {
	t.Parallel()
	const read, write = "read-token-5b1e-a9f03c", "write-token-77c2-b81d0e"
	s := newStack(t, stackOpts{tokens: "read:" + read + "\nwrite:" + write})
	auth := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	if w := s.do(http.MethodPut, "/v1/agents/gpu01", `{"node":"gpu01","gpus":8}`, auth(write)...); w.Code != http.StatusOK {
		t.Fatalf("PUT = %d %s", w.Code, w.Body)
	}
	for _, tc := range []struct {
		name, tok string
		status    int
	}{
		{"read token", read, http.StatusForbidden},
		{"write token", write, http.StatusNoContent},
		{"again", write, http.StatusNotFound},
	} {
		if w := s.do(http.MethodDelete, "/v1/agents/gpu01", "", auth(tc.tok)...); w.Code != tc.status {
			t.Errorf("%s: DELETE = %d %s, want %d", tc.name, w.Code, w.Body, tc.status)
		}
	}
	if w := s.do(http.MethodGet, "/v1/agents/gpu01", "", auth(read)...); w.Code != http.StatusNotFound {
		t.Errorf("GET after DELETE = %d %s, want 404", w.Code, w.Body)
	}
}

// TestAgentTokens: an agent token is bound to its node and to PUT
// /v1/agents/{node}: it cannot report another node, read, or write
// anything else.
func TestAgentTokens(t *testing.T) {
	t.Parallel()
	const read, write = "read-token-5b1e-a9f03c", "write-token-77c2-b81d0e"
	secret := "agent-secret-0123456789abcdef-0123456789"
	s := newStack(t, stackOpts{tokens: "read:" + read + "\nwrite:" + write, agentSecret: secret})
	gpu01 := server.AgentToken([]byte(secret), "gpu01")
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	for _, tc := range []struct {
		name, method, target, body, tok string
		status                          int
	}{
		{"own node", http.MethodPut, "/v1/agents/gpu01", `{"node":"gpu01","gpus":8}`, gpu01, http.StatusOK},
		{"another node", http.MethodPut, "/v1/agents/gpu09", `{"node":"gpu09","gpus":8}`, gpu01, http.StatusUnauthorized},
		{"a phantom", http.MethodPut, "/v1/agents/ghost01", `{"node":"ghost01"}`, gpu01, http.StatusUnauthorized},
		{"another secret", http.MethodPut, "/v1/agents/gpu01", `{"node":"gpu01"}`, server.AgentToken([]byte(secret+"x"), "gpu01"), http.StatusUnauthorized},
		{"read its report", http.MethodGet, "/v1/agents/gpu01", "", gpu01, http.StatusUnauthorized},
		{"list reports", http.MethodGet, "/v1/agents", "", gpu01, http.StatusUnauthorized},
		{"delete its report", http.MethodDelete, "/v1/agents/gpu01", "", gpu01, http.StatusUnauthorized},
		{"write the ledger", http.MethodPost, "/v1/ledger", `{"records":[]}`, gpu01, http.StatusUnauthorized},
		{"replace budgets", http.MethodPut, "/v1/budgets", `{}`, gpu01, http.StatusUnauthorized},
		{"accept a snapshot", http.MethodPost, "/v1/snapshots/1/accept", "", gpu01, http.StatusUnauthorized},
		{"read token reports", http.MethodPut, "/v1/agents/gpu02", `{"node":"gpu02"}`, read, http.StatusForbidden},
		{"write token reports any node", http.MethodPut, "/v1/agents/gpu02", `{"node":"gpu02"}`, write, http.StatusOK},
	} {
		if w := s.do(tc.method, tc.target, tc.body, bearer(tc.tok)...); w.Code != tc.status {
			t.Errorf("%s: %s %s = %d %s, want %d", tc.name, tc.method, tc.target, w.Code, w.Body, tc.status)
		}
	}

	// The agent's own reporter, over a real listener, with its node's token.
	srv := httptest.NewServer(s.handler)
	defer srv.Close()
	rep := &agent.Reporter{Server: srv.URL, Token: server.AgentToken([]byte(secret), "gb01")}
	if err := rep.Report(context.Background(), providers.NodeFacts{Node: "gb01", GPUs: 4, Clique: clique}); err != nil {
		t.Fatal(err)
	}
	if err := rep.Report(context.Background(), providers.NodeFacts{Node: "gb02", GPUs: 4}); err == nil || strings.Contains(err.Error(), rep.Token) {
		t.Fatalf("gb01's token reporting gb02 = %v, want a refusal that does not quote the token", err)
	}
}

func TestLoadAgentSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := func(string) string { return "write:write-token-77c2-b81d0e" }
	for _, tc := range []struct {
		name, secret string
		ok           bool
	}{
		{"long enough", "0123456789abcdef0123456789abcdef\n", true},
		{"short", "0123456789abcdef\n", false},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.secret), 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := server.LoadTokens(config.Auth{TokensEnv: "T", AgentSecretFile: path}, env)
		if tc.ok != (err == nil) || (err == nil) != (tok != nil) {
			t.Errorf("%s: LoadTokens = %v, %v", tc.name, tok, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "server.auth.agentSecretFile") || strings.Contains(err.Error(), strings.TrimSpace(tc.secret))) {
			t.Errorf("%s: error %q should name the key and not quote the secret", tc.name, err)
		}
	}
	if _, err := server.LoadTokens(config.Auth{TokensEnv: "T", AgentSecretFile: filepath.Join(dir, "absent")}, env); err == nil {
		t.Error("LoadTokens with a missing secret file succeeded")
	}
}

func TestListAgentsPages(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	for _, n := range []string{"gpu03", "gpu01", "gpu05", "gpu02", "gpu04"} {
		if w := s.do(http.MethodPut, "/v1/agents/"+n, `{"node":"`+n+`"}`); w.Code != http.StatusOK {
			t.Fatalf("PUT %s = %d %s", n, w.Code, w.Body)
		}
	}
	var got []string
	var pages int
	for target := "/v1/agents?limit=2"; ; pages++ {
		w := s.do(http.MethodGet, target, "")
		var page server.AgentList
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || w.Code != http.StatusOK || len(page.Agents) > 2 {
			t.Fatalf("GET %s = %d %s (%v)", target, w.Code, w.Body, err)
		}
		for _, r := range page.Agents {
			got = append(got, r.Facts.Node)
		}
		if page.Next == "" {
			break
		}
		target = "/v1/agents?limit=2&after=" + page.Next
	}
	if strings.Join(got, ",") != "gpu01,gpu02,gpu03,gpu04,gpu05" || pages != 2 {
		t.Errorf("pages listed %v in %d pages, want gpu01-gpu05 in 3", got, pages+1)
	}
	for _, limit := range []string{"0", "1001", "x"} {
		w := s.do(http.MethodGet, "/v1/agents?limit="+limit, "")
		if w.Code != http.StatusBadRequest || errorOf(t, w).Field != "limit" {
			t.Errorf("limit=%s: %d %s, want 400 naming limit", limit, w.Code, w.Body)
		}
	}
}

// TestReadyzWhenDiscoveryKeepsFailing: an older topology is still served
// when discoveries fail, but after discovery.unreadyAfter (3) failures
// in a row /readyz says so; one success makes it ready again.
func TestReadyzWhenDiscoveryKeepsFailing(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	s.discover()
	good, err := os.ReadFile(s.modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.modelPath, []byte("shape: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := s.loop.RunOnce(context.Background(), service.TriggerAPI); err == nil {
			t.Fatal("discovery of a broken model succeeded")
		}
		w := s.do(http.MethodGet, "/readyz", "")
		if want := map[bool]int{true: http.StatusServiceUnavailable, false: http.StatusOK}[i == 3]; w.Code != want {
			t.Fatalf("after %d failures readyz = %d %s, want %d", i, w.Code, w.Body, want)
		}
		if i == 3 && errorOf(t, w).Code != "discovery_failing" {
			t.Errorf("readyz = %s, want discovery_failing", w.Body)
		}
	}
	if w := s.do(http.MethodGet, "/v1/graph", ""); w.Code != http.StatusOK {
		t.Errorf("graph while unready = %d, want the older topology", w.Code)
	}
	if err := os.WriteFile(s.modelPath, good, 0o644); err != nil {
		t.Fatal(err)
	}
	s.discover()
	if w := s.do(http.MethodGet, "/readyz", ""); w.Code != http.StatusOK {
		t.Errorf("readyz after a success = %d %s", w.Code, w.Body)
	}
}
