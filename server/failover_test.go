package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/budget"
	"github.com/toposcope/toposcope/testenv/dbtest"
	"github.com/toposcope/toposcope/testenv/releasebin"
)

// TestReplicasFailOver runs two release binaries on one database, as a
// pair of Slurm head nodes would (no Kubernetes: the leader holds the
// database's lock), discovering every second. Writes go to both in turn
// and each is read back from both; then the leader is killed with
// SIGKILL: the other takes the lock and discovers within seconds, and
// every write acknowledged before the kill is still there.
func TestReplicasFailOver(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			db := dbtest.Start(t.Context(), t, k)
			shared := t.TempDir()
			dsn := writeFile(t, shared, "dsn", []byte(db.DSN()))
			var replicas [2]*serveProc
			for i := range replicas {
				dir := t.TempDir()
				tokens := writeFile(t, dir, "tokens", []byte("read:"+readToken+"\nwrite:"+writeToken+"\n"))
				cfg := writeFile(t, dir, "config.yaml", fmt.Appendf(nil, `provider: {name: sim, params: {model: small-tree}}
server: {listen: "127.0.0.1:0", auth: {tokensFile: %s}}
store: {database: {driver: %s, dsnFile: %s, refreshInterval: 500ms}}
discovery: {interval: 1s}
`, tokens, db.Driver(), dsn))
				replicas[i] = startService(t, releasebin.Get(budget.Context(t, 15*time.Minute), t).Server, cfg)
				replicas[i].waitFor("/readyz", func(code int, _ string) bool { return code == http.StatusOK })
			}
			leader, follower := whoLeads(t, replicas)
			var acked []string
			for i := range 20 {
				s := replicas[i%2]
				w := fmt.Sprintf("job-%02d", i)
				body := fmt.Sprintf(`{"records":[{"account":"a","workload":%q,"gpus":1,"start":"2026-01-01T00:00:00Z"}]}`, w)
				if code, out := s.call(http.MethodPost, "/v1/ledger", body); code != http.StatusOK {
					t.Fatalf("ledger on replica %d: %d %s", i%2, code, out)
				}
				acked = append(acked, w)
			}
			if code, out := follower.call(http.MethodPut, "/v1/budgets", `{"accounts":[{"name":"a","shares":2},{"name":"b","shares":1}]}`); code != http.StatusOK {
				t.Fatalf("budgets on the follower: %d %s", code, out)
			}
			for i, s := range replicas {
				_, ledger := s.call(http.MethodGet, "/v1/ledger", "")
				for _, w := range acked {
					if !strings.Contains(ledger, w) {
						t.Errorf("replica %d's ledger lacks %s", i, w)
					}
				}
				if _, b := s.call(http.MethodGet, "/v1/budgets", ""); !strings.Contains(b, `"b"`) {
					t.Errorf("replica %d's budgets: %s", i, b)
				}
			}
			if strings.Contains(follower.stderr.String(), "leading: this replica discovers") {
				t.Fatal("both replicas lead")
			}
			for i, s := range replicas {
				if strings.Contains(s.stderr.String(), dbtest.Password) {
					t.Errorf("replica %d logged the database's password", i)
				}
			}
			before := runCount(t, follower)
			leader.kill()
			start := time.Now()
			follower.waitFor("/v1/runs?limit=200", func(code int, body string) bool {
				return code == http.StatusOK && strings.Count(body, `"trigger"`) > before
			})
			took := time.Since(start)
			if !strings.Contains(follower.stderr.String(), "leading: this replica discovers") {
				t.Errorf("the survivor never logged that it leads:\n%s", follower.stderr)
			}
			t.Logf("the survivor discovered %s after the leader's SIGKILL", took.Round(10*time.Millisecond))
			if took > 15*time.Second {
				t.Errorf("the survivor took %s to discover after the leader died", took)
			}
			_, ledger := follower.call(http.MethodGet, "/v1/ledger", "")
			for _, w := range acked {
				if !strings.Contains(ledger, w) {
					t.Errorf("after the failover the ledger lacks %s", w)
				}
			}
		})
	}
}

// whoLeads waits until one replica logs that it leads, and returns it
// first.
func whoLeads(t *testing.T, r [2]*serveProc) (leader, follower *serveProc) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for i, s := range r {
			if strings.Contains(s.stderr.String(), "leading: this replica discovers") {
				return s, r[1-i]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no replica leads:\n%s\n%s", r[0].stderr, r[1].stderr)
	return nil, nil
}

// runCount is the number of discovery runs s lists.
func runCount(t *testing.T, s *serveProc) int {
	t.Helper()
	code, body := s.call(http.MethodGet, "/v1/runs?limit=200", "")
	if code != http.StatusOK {
		t.Fatalf("runs: %d %s", code, body)
	}
	return strings.Count(body, `"trigger"`)
}
