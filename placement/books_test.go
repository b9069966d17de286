package placement

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestStoreSync follows one source through three syncs: running work is
// live, finished work is stored once, vanished work is stored as ended
// at the sync, and an invalid answer changes nothing.
func TestStoreSync(t *testing.T) {
	t.Parallel()
	s := NewBooks()
	if err := s.Append(context.Background(), []Record{{Account: "a", Workload: "rest", GPUs: 1, Start: t0.Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	run := func(w string, gpus int) Record {
		return Record{Account: "b", Workload: w, GPUs: gpus, Start: t0.Add(-30 * time.Minute)}
	}
	done := run("done", 2)
	done.End = t0.Add(-10 * time.Minute)
	steps := []struct {
		name      string
		at        time.Time
		recs      []Record
		wantErr   bool
		wantTotal int // records in the view
		wantEnded map[string]time.Time
	}{
		{"first", t0, []Record{run("j1", 4), run("j2", 8), done}, false, 4, map[string]time.Time{"done": done.End}},
		{"again", t0.Add(time.Minute), []Record{run("j1", 4), run("j2", 8), done}, false, 4, nil},
		{"invalid", t0.Add(2 * time.Minute), []Record{{Account: "b", Workload: "bad", GPUs: 0, Start: t0}}, true, 4, nil},
		{"j2 gone", t0.Add(3 * time.Minute), []Record{run("j1", 4)}, false, 4, map[string]time.Time{"j2": t0.Add(3 * time.Minute)}},
		{"all gone", t0.Add(4 * time.Minute), nil, false, 4, map[string]time.Time{"j1": t0.Add(4 * time.Minute)}},
	}
	for _, st := range steps {
		before, err := s.View(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		err = s.Sync(context.Background(), "slurm", st.recs, st.at)
		if (err != nil) != st.wantErr || st.wantErr && !errors.Is(err, ErrInvalid) {
			t.Fatalf("%s: err %v", st.name, err)
		}
		v, err := s.View(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Records) != st.wantTotal {
			t.Fatalf("%s: %d records, want %d: %+v", st.name, len(v.Records), st.wantTotal, v.Records)
		}
		ended := map[string]int{}
		for i, r := range v.Records {
			if v.Index[i] < 0 || v.Tree.Accounts()[v.Index[i]].Name != r.Account {
				t.Fatalf("%s: record %d (%s) has index %d", st.name, i, r.Account, v.Index[i])
			}
			if !r.End.IsZero() {
				ended[r.Workload]++
			}
			if r.Workload != "rest" && r.Source != "slurm" {
				t.Fatalf("%s: %s has source %q", st.name, r.Workload, r.Source)
			}
		}
		for w, end := range st.wantEnded {
			found := false
			for _, r := range v.Records {
				found = found || r.Workload == w && r.End.Equal(end)
			}
			if !found {
				t.Fatalf("%s: %s not stored as ended at %v: %+v", st.name, w, end, v.Records)
			}
		}
		for w, n := range ended {
			if n != 1 {
				t.Fatalf("%s: %s stored %d times", st.name, w, n)
			}
		}
		for i := range before.Records { // an earlier view is unchanged
			if before.Records[i].Workload == "" {
				t.Fatalf("%s: an earlier view changed", st.name)
			}
		}
	}
}

// TestViewIndexFollowsBudgets: records of accounts outside the budgets
// get -1, and without budgets the extra names join the equal tree.
func TestViewIndexFollowsBudgets(t *testing.T) {
	t.Parallel()
	s := NewBooks()
	if err := s.Append(context.Background(), []Record{{Account: "a", GPUs: 1, Start: t0}, {Account: "x", GPUs: 1, Start: t0}}); err != nil {
		t.Fatal(err)
	}
	v, err := s.View(context.Background(), "req")
	if err != nil {
		t.Fatal(err)
	}
	if v.Tree.Leaves() != 3 || v.Index[0] < 0 || v.Index[1] < 0 {
		t.Fatalf("equal tree: %d leaves, index %v", v.Tree.Leaves(), v.Index)
	}
	if err := s.SetBudgets(context.Background(), &Budgets{Accounts: []AccountSpec{{Name: "a", Shares: Shares(1)}}}); err != nil {
		t.Fatal(err)
	}
	if v, err = s.View(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v.Index[0] != 1 || v.Index[1] != -1 {
		t.Fatalf("with budgets: index %v, want [1 -1]", v.Index)
	}
}

// TestAccumulateMatchesDefinitions checks the one-pass sums (window and
// decayed usage, delivered hours) against the per-record definitions on
// random records.
func TestAccumulateMatchesDefinitions(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	tr := EqualTree([]string{"a", "b", "c"})
	var recs []Record
	for i := range 2000 {
		start := t0.Add(-time.Duration(rng.IntN(30*24*3600)) * time.Second)
		r := Record{Account: []string{"a", "b", "c"}[i%3], GPUs: 1 + rng.IntN(64), Start: start, Allocated: rng.IntN(4) != 0}
		if rng.IntN(5) != 0 {
			r.End = start.Add(time.Duration(rng.IntN(40*3600)) * time.Second)
		}
		recs = append(recs, r)
	}
	cfg := DefaultConfig()
	cfg.Mode = ModeClassic
	st, err := Compute(tr, recs, t0, 512, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		var window, decayed, delivered float64
		for i := range recs {
			if recs[i].Account == name {
				window += WindowUsage(&recs[i], t0, cfg.Window)
				decayed += DecayedUsage(&recs[i], t0, cfg.HalfLife)
				if recs[i].Allocated {
					delivered += float64(recs[i].GPUs) * overlap(recs[i].Start, recs[i].End, t0.Add(-cfg.Window), t0) / 3600
				}
			}
		}
		got, _ := st.Of(name)
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"window", got.UsageRaw, window}, {"decayed", got.UsageDecayed, decayed}, {"delivered", got.DeliveredGPUHours, delivered}} {
			if math.Abs(c.got-c.want) > 1e-9*max(1, math.Abs(c.want)) {
				t.Errorf("%s %s usage %v, want %v", name, c.what, c.got, c.want)
			}
		}
	}
}
