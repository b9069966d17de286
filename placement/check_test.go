package placement

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckRecords(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree") // gpu[001-016], 8 GPUs each
	now := time.Now()
	held := []Record{{Account: "a", Workload: "held", GPUs: 8, Nodes: []string{"gpu001"}, Start: now.Add(-time.Hour)}}
	tests := []struct {
		name  string
		rec   Record
		field string // "" for none
	}{
		{"fits", Record{GPUs: 16, Nodes: []string{"gpu002", "gpu003"}}, ""},
		{"hostlist", Record{GPUs: 16, Nodes: []string{"gpu[004-005]"}}, ""},
		{"unknown node", Record{GPUs: 8, Nodes: []string{"gpu099"}}, "records[0].nodes[0]"},
		{"twice", Record{GPUs: 8, Nodes: []string{"gpu002", "gpu002"}}, "records[0].nodes[1]"},
		{"too many GPUs", Record{GPUs: 9, Nodes: []string{"gpu002"}}, "records[0].gpus"},
		{"overlap", Record{GPUs: 1, Nodes: []string{"gpu001"}}, "records[0].nodes"},
		{"ended work does not overlap", Record{GPUs: 8, Nodes: []string{"gpu001"}, End: now.Add(-time.Minute)}, ""},
		{"bad hostlist", Record{GPUs: 8, Nodes: []string{"gpu[002"}}, "records[0].nodes[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.rec
			r.Account, r.Workload, r.Start = "b", "w", now.Add(-2*time.Hour)
			err := CheckRecords(g, held, []Record{r}, now)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("CheckRecords = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.field+":") && !strings.Contains(err.Error(), tt.field+" ") {
				t.Fatalf("CheckRecords = %v, want an error on %s", err, tt.field)
			}
		})
	}
}

// TestUsableRecords: a stored record that no longer fits (its node is
// gone, or it overlaps) is left out and named; the rest still occupy.
func TestUsableRecords(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	now := time.Now()
	start := now.Add(-time.Hour)
	recs := []Record{
		{Account: "a", Workload: "ok", GPUs: 8, Nodes: []string{"gpu001"}, Start: start},
		{Account: "a", Workload: "gone", GPUs: 8, Nodes: []string{"gpu999"}, Start: start},
		{Account: "a", Workload: "overlap", GPUs: 4, Nodes: []string{"gpu001"}, Start: start},
		{Account: "a", Workload: "ok2", GPUs: 4, Nodes: []string{"gpu002"}, Start: start},
	}
	if _, err := NewCluster(g, recs, now); err == nil {
		t.Fatal("NewCluster accepted the bad records; the test proves nothing")
	}
	keep, bad := UsableRecords(g, recs, now)
	if !slices.Equal(bad, []string{"gone", "overlap"}) || len(keep) != 2 {
		t.Fatalf("bad = %v, kept %d", bad, len(keep))
	}
	cl, err := NewCluster(g, keep, now)
	if err != nil || cl.FreeGPUs() != cl.GPUs()-12 {
		t.Fatalf("cluster of the kept records: %v", err)
	}
}
