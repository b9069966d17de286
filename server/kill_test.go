package server_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/service/store"
)

// TestLedgerSurvivesKill streams ledger writes to a real `toposcope
// serve`, kills it with SIGKILL while writes are in flight, and checks
// that every record it acknowledged is in the store when it is opened
// again.
func TestLedgerSurvivesKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	storePath := filepath.Join(dir, "state", "toposcope.db")
	svc := startSmall(t, dir, "", "discovery: {interval: 0s}\n")

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
	ps, err := placement.OpenBooks(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	view, err := ps.View(context.Background())
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
