package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/server"
)

const (
	readToken  = "read-token-0123456789"
	writeToken = "write-token-0123456789"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{tokens: "# tokens\nread:" + readToken + "\nwrite:" + writeToken + "\n"})
	s.discover()
	gen := `{"provider":{"name":"sim"},"engine":{"name":"slurm"}}`
	tests := []struct {
		name, method, target, body, token string
		status                            int
	}{
		{"healthz open", "GET", "/healthz", "", "", 200},
		{"readyz open", "GET", "/readyz", "", "", 200},
		{"no token", "GET", "/v1/graph", "", "", 401},
		{"bad token", "GET", "/v1/graph", "", "nope-nope-nope-nope", 401},
		{"token prefix", "GET", "/v1/graph", "", readToken[:len(readToken)-1], 401},
		{"read", "GET", "/v1/nodes/gpu001", "", readToken, 200},
		{"metrics need a token", "GET", "/metrics", "", "", 401},
		{"openapi needs a token", "GET", "/openapi.json", "", "", 401},
		{"read cannot write", "POST", "/v1/generate", gen, readToken, 403},
		{"read cannot accept", "POST", "/v1/snapshots/1/accept", "", readToken, 403},
		{"read cannot discover", "POST", "/v1/discover", "", readToken, 403},
		{"write can write", "POST", "/v1/generate", gen, writeToken, 202},
		{"write can read", "GET", "/v1/status", "", writeToken, 200},
		{"write can discover", "POST", "/v1/discover", "", writeToken, 202},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hdr []string
			if tt.token != "" {
				hdr = []string{"Authorization", "Bearer " + tt.token}
			}
			w := s.do(tt.method, tt.target, tt.body, hdr...)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status == 401 {
				if w.Header().Get("WWW-Authenticate") == "" {
					t.Error("no WWW-Authenticate")
				}
				if errorOf(t, w).Code != "unauthorized" {
					t.Error("wrong code")
				}
			}
			if strings.Contains(w.Body.String(), tt.token) && tt.token != "" {
				t.Error("the token is echoed")
			}
		})
	}
}

func TestTokenParsing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		ok         bool
		wantErr    string
	}{
		{"lines and commas", "read:" + readToken + ", write:" + writeToken, true, ""},
		{"comments", "# x\n\nwrite:" + writeToken + "\n", true, ""},
		{"no scope", readToken, false, "entry 1: want read:TOKEN"},
		{"bad scope", "admin:" + readToken, false, "entry 1: want read:TOKEN"},
		{"short", "read:short", false, "entry 1: token shorter than 16"},
		{"empty", "# nothing\n", false, "no tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tok, err := server.ParseTokens(tt.text, "src")
			if tt.ok {
				if err != nil || tok.Check(writeToken) == server.ScopeNone && tok.Check(readToken) == server.ScopeNone {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "short") && strings.Contains(err.Error(), "read:short") {
				t.Error("the token is quoted in the error")
			}
		})
	}
}

func TestLoadTokensFromFileAndEnv(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("read:"+readToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOKS": "write:" + writeToken}
	tok, err := server.LoadTokens(config.Auth{TokensFile: path, TokensEnv: "TOKS"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if tok.Check(readToken) != server.ScopeRead || tok.Check(writeToken) != server.ScopeWrite || tok.Check("x") != server.ScopeNone {
		t.Error("wrong scopes")
	}
	if _, err := server.LoadTokens(config.Auth{TokensEnv: "MISSING"}, func(string) string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "server.auth.tokensEnv") {
		t.Errorf("empty env: %v", err)
	}
	if tok, err := server.LoadTokens(config.Auth{}, nil); tok != nil || err != nil {
		t.Errorf("no tokens configured = %v, %v", tok, err)
	}
}

// TestRoutesMatchOpenAPI checks server/openapi.json against the router
// both ways.
func TestRoutesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	param := regexp.MustCompile(`[:*]([A-Za-z]+)`)
	var routed []string
	engine, ok := s.handler.(*gin.Engine)
	if !ok {
		t.Fatalf("handler is %T", s.handler)
	}
	for _, r := range engine.Routes() {
		routed = append(routed, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(documented)
	slices.Sort(routed)
	if !slices.Equal(documented, routed) {
		t.Errorf("openapi.json and the router differ:\ndocumented %v\nrouted     %v", documented, routed)
	}
}
