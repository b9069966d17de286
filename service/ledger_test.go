package service

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
)

// TestLedgerSyncerFromConfig builds the serve sources from a config
// file's placement section: a slurm source whose squeue prints output in
// the data_parser shape of Slurm 23.02 and later ({"set","number"}
// numbers, job_state a list), synced into a store; and a name that is
// not registered.
func TestLedgerSyncerFromConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "squeue.json")
	if err := os.WriteFile(out, []byte(`{"errors": [], "jobs": [
	  {"job_id": 77, "account": "proj-a", "cluster": "c1", "job_state": ["RUNNING"],
	   "submit_time": {"set": true, "infinite": false, "number": 1796290000},
	   "start_time": {"set": true, "infinite": false, "number": 1796290060},
	   "end_time": {"set": true, "infinite": false, "number": 1796300000},
	   "time_minimum": {"set": true, "infinite": false, "number": 90},
	   "nodes": "gpu[001-002]", "node_count": {"set": true, "infinite": false, "number": 2},
	   "gres_detail": [], "tres_per_node": "gres/gpu:4", "requeue": false,
	   "priority": {"set": true, "infinite": false, "number": 100}},
	  {"job_id": 78, "account": "proj-b", "job_state": ["PENDING"], "nodes": "",
	   "start_time": {"set": false, "infinite": false, "number": 0}, "tres_per_node": "gres/gpu:8"}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse([]byte(`
placement:
  syncInterval: 5s
  sources:
    - name: slurm
      params:
        squeue: [/bin/sh, -c, 'cat ` + out + `', squeue]
`))
	if err != nil {
		t.Fatal(err)
	}
	store := placement.NewBooks()
	s, err := ledgerSyncer(internalRegistry(t), f.Placement, store, time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	v, err := store.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Records) != 1 {
		t.Fatalf("records %+v, want job 77 only", v.Records)
	}
	r := v.Records[0]
	if r.Workload != "c1/77" || r.GPUs != 8 || len(r.Nodes) != 2 || r.MinRuntime.Minutes() != 90 || !r.Allocated ||
		r.Priority != 100 || !r.End.IsZero() || r.Start.Unix() != 1796290060 {
		t.Fatalf("record %+v", r)
	}

	f.Placement.Sources[0].Name = "lsf"
	if _, err := ledgerSyncer(internalRegistry(t), f.Placement, store, time.Now, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "placement.sources[0]") {
		t.Fatalf("unknown source: err %v", err)
	}
	if _, err := config.Parse([]byte("placement:\n  syncInterval: 0s\n")); err == nil || !strings.Contains(err.Error(), "placement.syncInterval") {
		t.Fatalf("zero interval: err %v", err)
	}
}
