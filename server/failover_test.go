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
			replicas := startOnDatabase(t, db, db.DSN(), db.DSN())
			leader, others := whoLeads(t, replicas)
			follower := others[0]
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

// startOnDatabase starts a release binary on the database for each DSN,
// discovering every second, and waits until each is ready.
func startOnDatabase(t *testing.T, db *dbtest.Server, dsns ...string) []*serveProc {
	t.Helper()
	replicas := make([]*serveProc, len(dsns))
	for i := range replicas {
		dir := t.TempDir()
		dsn := writeFile(t, dir, "dsn", []byte(dsns[i]))
		tokens := writeFile(t, dir, "tokens", []byte("read:"+readToken+"\nwrite:"+writeToken+"\n"))
		cfg := writeFile(t, dir, "config.yaml", fmt.Appendf(nil, `provider: {name: sim, params: {model: small-tree}}
server: {listen: "127.0.0.1:0", auth: {tokensFile: %s}}
store: {database: {driver: %s, dsnFile: %s, refreshInterval: 500ms, opTimeout: 2s}}
discovery: {interval: 1s}
`, tokens, db.Driver(), dsn))
		replicas[i] = startService(t, releasebin.Get(budget.Context(t, 15*time.Minute), t).Server, cfg)
		replicas[i].waitFor("/readyz", func(code int, _ string) bool { return code == http.StatusOK })
	}
	return replicas
}

// TestReplicasNetworkCut: the network between the leader and the
// database is cut (its server side closed, its own side left silent).
// The leader stops leading and the other replica leads and discovers;
// the cut replica answers writes with 503 within its opTimeout; once
// the network is back it serves again, does not lead again while the
// other holds the lock, and nothing acknowledged is lost.
func TestReplicasNetworkCut(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			db := dbtest.Start(t.Context(), t, k)
			proxies := [2]*dbtest.Proxy{dbtest.NewProxy(t, db), dbtest.NewProxy(t, db)}
			replicas := startOnDatabase(t, db, proxies[0].DSN(db), proxies[1].DSN(db))
			leader, others := whoLeads(t, replicas)
			follower := others[0]
			cut := proxies[0]
			if leader == replicas[1] {
				cut = proxies[1]
			}
			body := `{"records":[{"account":"a","workload":"%s","gpus":1,"start":"2026-01-01T00:00:00Z"}]}`
			if code, out := leader.call(http.MethodPost, "/v1/ledger", fmt.Sprintf(body, "before-cut")); code != http.StatusOK {
				t.Fatalf("ledger: %d %s", code, out)
			}
			before := runCount(t, follower)
			cut.Cut()
			start := time.Now()
			follower.waitFor("/v1/runs?limit=200", func(code int, body string) bool {
				return code == http.StatusOK && strings.Count(body, `"trigger"`) > before
			})
			t.Logf("the other replica discovered %s after the cut", time.Since(start).Round(10*time.Millisecond))
			leader.waitFor("/healthz", func(int, string) bool { return strings.Contains(leader.stderr.String(), "not leading") })
			wstart := time.Now()
			if code, out := leader.callQuiet(http.MethodPost, "/v1/ledger", fmt.Sprintf(body, "during-cut")); code != http.StatusServiceUnavailable || !strings.Contains(out, "store_unavailable") {
				t.Errorf("write on the cut replica: %d %s, want 503 store_unavailable", code, out)
			}
			if d := time.Since(wstart); d > 10*time.Second {
				t.Errorf("the write on the cut replica took %s (opTimeout 2s)", d)
			}
			cut.Heal()
			healed := time.Now().Add(time.Minute)
			for {
				code, out := leader.callQuiet(http.MethodPost, "/v1/ledger", fmt.Sprintf(body, "after-heal"))
				if code == http.StatusOK {
					break
				}
				if time.Now().After(healed) {
					t.Fatalf("the healed replica still answers writes with %d %s", code, out)
				}
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(2 * time.Second) // four of its lock tries
			if n := strings.Count(leader.stderr.String(), "leading: this replica discovers"); n != 1 {
				t.Errorf("the healed replica logged %d times that it leads, want once (before the cut)", n)
			}
			for i, s := range replicas {
				_, ledger := s.call(http.MethodGet, "/v1/ledger", "")
				for _, w := range []string{"before-cut", "after-heal"} {
					if !strings.Contains(ledger, w) {
						t.Errorf("replica %d's ledger lacks %s", i, w)
					}
				}
			}
		})
	}
}

// whoLeads waits until one replica logs that it leads, and returns it
// and the others.
func whoLeads(t *testing.T, r []*serveProc) (leader *serveProc, others []*serveProc) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for i, s := range r {
			if strings.Contains(s.stderr.String(), "leading: this replica discovers") {
				return s, append(append([]*serveProc(nil), r[:i]...), r[i+1:]...)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no replica leads:\n%s\n%s", r[0].stderr, r[1].stderr)
	return nil, nil
}

// TestReplicasLoseNothing: three release binaries on one database
// (PostgreSQL, MariaDB) take ledger writes in turn through three faults:
// a follower killed with SIGKILL, the database killed and started again,
// and the leader killed. After each, the survivors serve, one of them
// leads and discovers, and every write any replica acknowledged is in
// every survivor's ledger.
func TestReplicasLoseNothing(t *testing.T) {
	t.Parallel()
	for _, k := range dbtest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			db := dbtest.Start(t.Context(), t, k)
			live := startOnDatabase(t, db, db.DSN(), db.DSN(), db.DSN())
			var acked []string
			write := func(n int) {
				t.Helper()
				for i := range n {
					s := live[i%len(live)]
					w := fmt.Sprintf("job-%03d", len(acked))
					body := fmt.Sprintf(`{"records":[{"account":"a","workload":%q,"gpus":1,"start":"2026-01-01T00:00:00Z"}]}`, w)
					code, _ := s.callQuiet(http.MethodPost, "/v1/ledger", body)
					if code == http.StatusOK {
						acked = append(acked, w)
					} else if code != http.StatusServiceUnavailable {
						t.Fatalf("ledger write: %d", code)
					}
				}
			}
			check := func(after string) {
				t.Helper()
				for i, s := range live {
					_, ledger := s.call(http.MethodGet, "/v1/ledger", "")
					for _, w := range acked {
						if !strings.Contains(ledger, w) {
							t.Fatalf("after %s, replica %d's ledger lacks %s", after, i, w)
						}
					}
				}
			}
			leader, others := whoLeads(t, live)
			write(12)
			others[0].kill()
			live = []*serveProc{leader, others[1]}
			write(12)
			check("a follower's SIGKILL")

			db.Kill()
			write(4) // each 503 within opTimeout, none acknowledged
			if err := db.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(time.Minute)
			for n := len(acked); len(acked) < n+8 && time.Now().Before(deadline); {
				write(2)
			}
			check("the database's restart")

			before := runCount(t, others[1])
			leader.kill()
			live = []*serveProc{others[1]}
			others[1].waitFor("/v1/runs?limit=200", func(code int, body string) bool {
				return code == http.StatusOK && strings.Count(body, `"trigger"`) > before
			})
			write(6)
			check("the leader's SIGKILL")
			t.Logf("%d writes acknowledged through the three faults", len(acked))
		})
	}
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
