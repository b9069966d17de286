package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/budget"
	"github.com/toposcope/toposcope/testenv/releasebin"
)

// TestLedgerSurvivesKill streams ledger writes to a real `toposcope
// serve`, kills it with SIGKILL while writes are in flight, and checks
// that every record it acknowledged is in the store when it is opened
// again.
func TestLedgerSurvivesKill(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Getenv("CI") != "true" { // never skipped in CI
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := releasebin.Get(budget.Context(t, 15*time.Minute), t).Server
	tokens := writeFile(t, dir, "tokens", []byte("read:"+readToken+"\nwrite:"+writeToken+"\n"))
	storePath := filepath.Join(dir, "state", "toposcope.db")
	cfgPath := writeFile(t, dir, "config.yaml", fmt.Appendf(nil, `provider: {name: sim, params: {model: small-tree}}
server: {listen: "127.0.0.1:0", auth: {tokensFile: %s}}
discovery: {interval: 0s}
store: {path: %s}
`, tokens, storePath))
	svc := startService(t, bin, cfgPath)
	svc.waitFor("/readyz", func(code int, _ string) bool { return code == http.StatusOK })

	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				body := fmt.Sprintf(`{"records":[{"account":"a","workload":%q,"gpus":1,"start":"2026-01-01T00:00:00Z","end":"2026-01-01T01:00:00Z"}]}`, name)
				code, _ := svc.callQuiet(http.MethodPost, "/v1/ledger", body)
				if code != http.StatusOK {
					return // the process is gone
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
			}
		})
	}
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	svc.kill() // writes still in flight
	close(stop)
	wg.Wait()
	if len(acked) < 50 {
		t.Fatalf("only %d records acknowledged before the kill", len(acked))
	}

	st, err := store.Open(storePath, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ps, err := placement.OpenBooks(st)
	if err != nil {
		t.Fatal(err)
	}
	view, err := ps.View()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range view.Records {
		have[r.Workload] = true
	}
	for _, w := range acked {
		if !have[w] {
			t.Errorf("acknowledged record %s is lost", w)
		}
	}
	t.Logf("%d acknowledged, %d stored", len(acked), len(view.Records))
}
