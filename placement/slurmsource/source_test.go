package slurmsource_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/slurmsource"
	"github.com/toposcope/toposcope/testenv/slurmtest"
)

// TestRecordsFromSlurm runs jobs on a real slurmctld with a slurmd per
// node (Slurm 22.05, gres/gpu), reads them through the real squeue, and
// syncs a cancelled job into a store.
func TestRecordsFromSlurm(t *testing.T) {
	t.Parallel()
	slurmtest.Require(t, slurmtest.V2205)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2205, Nodes: []string{"gpu001", "gpu002", "gpu003"},
		Slurmd: true, GPUs: 8})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir() // the jobs' working folder and output files
	submit := func(args ...string) string {
		t.Helper()
		out, errOut, err := c.Run(ctx, "/usr/bin/sbatch", append([]string{"--parsable", "--chdir", work}, args...)...)
		if err != nil {
			t.Fatalf("sbatch %v: %v: %s", args, err, errOut)
		}
		return strings.TrimSpace(out)
	}
	protected := submit("-A", "proj-a", "--gres=gpu:4", "-N1", "--time-min=120", "--time=600", "--requeue", "--wrap", "sleep 600")
	wide := submit("-A", "proj-b", "--gres=gpu:8", "-N2", "--no-requeue", "--wrap", "sleep 600")
	short := submit("-A", "proj-c", "--gres=gpu:2", "-N1", "--time=5", "--wrap", "true")
	pending := submit("-A", "proj-a", "--gres=gpu:8", "-N3", "--wrap", "sleep 600")
	cpuOnly := submit("-A", "proj-d", "-N1", "--wrap", "sleep 600")

	cfg := slurmsource.DefaultConfig()
	cfg.Squeue = c.Argv("/usr/bin/squeue")
	src, err := slurmsource.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var recs []placement.Record
	var byID map[string]placement.Record
	for {
		recs, err = src.Records(ctx, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		byID = map[string]placement.Record{}
		for _, r := range recs {
			byID[r.Workload[strings.IndexByte(r.Workload, '/')+1:]] = r
		}
		if r, ok := byID[short]; ok && !r.End.IsZero() && len(byID) == 3 {
			break
		}
		select {
		case <-ctx.Done():
			out, _, _ := c.Run(context.Background(), "/usr/bin/squeue", "-t", "all")
			t.Fatalf("the jobs did not reach their states; records %+v; squeue:\n%s", recs, out)
		case <-time.After(200 * time.Millisecond):
		}
	}
	for _, id := range []string{pending, cpuOnly} {
		if _, ok := byID[id]; ok {
			t.Errorf("job %s should be left out: %+v", id, byID[id])
		}
	}
	p, w, s := byID[protected], byID[wide], byID[short]
	if p.Account != "proj-a" || p.GPUs != 4 || len(p.Nodes) != 1 || p.MinRuntime != 2*time.Hour || !p.Allocated || !p.Resumable ||
		!p.End.IsZero() || p.Start.IsZero() || p.Submit.After(p.Start) || !strings.HasPrefix(p.Workload, "topotest/") {
		t.Errorf("protected job: %+v", p)
	}
	if w.Account != "proj-b" || w.GPUs != 16 || len(w.Nodes) != 2 || w.Allocated || w.Resumable || !w.End.IsZero() {
		t.Errorf("two-node job: %+v", w)
	}
	if s.Account != "proj-c" || s.GPUs != 2 || s.End.Before(s.Start) || s.End.IsZero() {
		t.Errorf("finished job: %+v", s)
	}
	all := slices.Concat(p.Nodes, w.Nodes)
	slices.Sort(all)
	if len(slices.Compact(all)) != 3 {
		t.Errorf("the running jobs are not on three distinct nodes: %v and %v", p.Nodes, w.Nodes)
	}

	store := placement.NewBooks()
	syncer, err := placement.NewSyncer(store, []placement.Source{src}, time.Minute, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := syncer.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := c.Run(ctx, "/usr/bin/scancel", wide); err != nil {
		t.Fatalf("scancel: %v: %s", err, errOut)
	}
	for {
		if err := syncer.SyncOnce(ctx); err != nil {
			t.Fatal(err)
		}
		v, err := store.View(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ended *placement.Record
		for i := range v.Records {
			if strings.HasSuffix(v.Records[i].Workload, "/"+wide) && !v.Records[i].End.IsZero() {
				ended = &v.Records[i]
			}
		}
		if ended != nil {
			if ended.Source != slurmsource.Name || ended.GPUs != 16 || len(v.Records) != 3 {
				t.Fatalf("after scancel: %+v", v.Records)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the cancelled job was not stored as ended: %+v", v.Records)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestSqueueFailure: a failing command is an error naming it, with its
// stderr, and no records.
func TestSqueueFailure(t *testing.T) {
	t.Parallel()
	cfg := slurmsource.DefaultConfig()
	cfg.Squeue = []string{"/bin/sh", "-c", "echo 'squeue: error: Unable to contact slurm controller' >&2; exit 1", "squeue"}
	src, err := slurmsource.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := src.Records(context.Background(), time.Now())
	if !errors.Is(err, slurmsource.ErrSqueue) || !strings.Contains(err.Error(), "Unable to contact") || recs != nil {
		t.Fatalf("records %v, err %v", recs, err)
	}
}
