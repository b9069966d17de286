package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toposcope/toposcope/server"
)

// TestFabricTrust puts GET /v1/fabric and /v1/fabric/occupancy through
// the real service: who may call them, what a Host that is not the
// service's gets, and that hostile snapshot values touch neither
// discovery nor the store.
func TestFabricTrust(t *testing.T) {
	t.Parallel()
	const read, write, secret = "fabric-read-0123456789", "fabric-write-0123456789", "fabric-agent-secret-0123456789"
	routes := []string{"/v1/fabric", "/v1/fabric/occupancy"}

	t.Run("scopes", func(t *testing.T) {
		t.Parallel()
		s := newStack(t, stackOpts{model: []byte(interleaved), tokens: "read:" + read + "\nwrite:" + write, agentSecret: secret})
		s.discover()
		for _, route := range routes {
			for _, tc := range []struct {
				who, token string
				want       int
			}{
				{"no token", "", http.StatusUnauthorized},
				// A node agent's token is for PUT /v1/agents/<its node> only.
				{"agent of n1", server.AgentToken([]byte(secret), "n1"), http.StatusUnauthorized},
				{"read", read, http.StatusOK},
				{"write", write, http.StatusOK},
				// With tokens a page on a rebound name has none to send.
				{"read, foreign Host", read, http.StatusOK},
			} {
				hdr := []string{}
				if tc.token != "" {
					hdr = append(hdr, "Authorization", "Bearer "+tc.token)
				}
				if strings.Contains(tc.who, "foreign") {
					hdr = append(hdr, "Host", "rebind.attacker.example:49021")
				}
				if w := s.do(http.MethodGet, route, "", hdr...); w.Code != tc.want {
					t.Errorf("%s by %s = %d %s, want %d", route, tc.who, w.Code, w.Body, tc.want)
				}
			}
			// They are reads: no other method.
			if w := s.do(http.MethodPost, route, `{}`, "Authorization", "Bearer "+write); w.Code != http.StatusNotFound && w.Code != http.StatusMethodNotAllowed {
				t.Errorf("POST %s = %d, want 404 or 405", route, w.Code)
			}
		}
	})

	t.Run("anonymous service and a foreign Host", func(t *testing.T) {
		t.Parallel()
		// Without tokens (loopback only), reads are served whatever the
		// Host, as every read route is; what can change state is refused.
		s := newStack(t, stackOpts{model: []byte(interleaved), allowedHosts: []string{"toposcope.lab.example"}})
		s.discover()
		for _, route := range routes {
			if w := s.do(http.MethodGet, route, "", "Host", "rebind.attacker.example:49021"); w.Code != http.StatusOK {
				t.Errorf("GET %s from a foreign Host = %d, want 200 (reads are open without tokens)", route, w.Code)
			}
		}
		if w := s.do(http.MethodPost, "/v1/ledger", `{"records":[]}`, "Host", "rebind.attacker.example:49021"); w.Code != http.StatusForbidden {
			t.Errorf("a write from a foreign Host = %d, want 403", w.Code)
		}
	})

	t.Run("hostile values", func(t *testing.T) {
		t.Parallel()
		s := newStack(t, stackOpts{model: []byte(interleaved), snapshotReads: 1})
		s.discover()
		before := s.do(http.MethodGet, "/v1/fabric", "").Body.String()
		snapshots := s.do(http.MethodGet, "/v1/snapshots", "").Body.String()
		for _, tc := range []struct {
			target string
			want   int
		}{
			{"/v1/fabric?snapshot=-1", http.StatusBadRequest},
			{"/v1/fabric?snapshot=18446744073709551616", http.StatusBadRequest},
			{"/v1/fabric?snapshot=1%3BDROP%20TABLE%20snapshots", http.StatusBadRequest},
			{"/v1/fabric?snapshot=" + strings.Repeat("9", 4000), http.StatusBadRequest},
			{"/v1/fabric?snapshot=0", http.StatusNotFound},
			{"/v1/fabric?snapshot=18446744073709551615", http.StatusNotFound},
			{"/v1/fabric?snapshot=1&snapshot=99", http.StatusOK},                               // the first value counts
			{"/v1/fabric/occupancy?snapshot=99&x=" + strings.Repeat("y", 4000), http.StatusOK}, // it takes no parameter
		} {
			if w := s.do(http.MethodGet, tc.target, ""); w.Code != tc.want {
				t.Errorf("%.80s = %d %.200s, want %d", tc.target, w.Code, w.Body, tc.want)
			}
		}
		// A body larger than server.maxBodyBytes is refused before any
		// handler, on a GET too.
		req := httptest.NewRequest(http.MethodGet, "/v1/fabric", strings.NewReader(strings.Repeat("x", 9<<20)))
		req.Host = "127.0.0.1:49021"
		w := httptest.NewRecorder()
		s.handler.ServeHTTP(w, req)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("GET with a 9 MiB body = %d, want 413", w.Code)
		}
		// Many readers of an older snapshot at once: each is answered, or
		// told to come back (429), within server.maxSnapshotReads; none
		// fails, and the current fabric is served meanwhile.
		var wg sync.WaitGroup
		codes := make(chan int, 32)
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes <- s.do(http.MethodGet, "/v1/fabric?snapshot=1", "").Code
			}()
		}
		wg.Wait()
		close(codes)
		ok := 0
		for c := range codes {
			switch c {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
			default:
				t.Errorf("concurrent read of snapshot 1 = %d, want 200 or 429", c)
			}
		}
		if ok == 0 {
			t.Error("no concurrent read of snapshot 1 was answered")
		}
		// Discovery and the store are as they were.
		if got := s.do(http.MethodGet, "/v1/snapshots", "").Body.String(); got != snapshots {
			t.Errorf("the snapshots changed:\n%s\nwant\n%s", got, snapshots)
		}
		s.discover()
		if got := s.do(http.MethodGet, "/v1/fabric", "").Body.String(); got != before {
			t.Error("the fabric changed after the hostile requests and a new discovery of the same model")
		}
	})
}
