package simulate_test

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
)

// TestDebugColumn: the seventh column marks debug work, which must be
// allocated; a trace with debug work survives a write/parse round trip.
func TestDebugColumn(t *testing.T) {
	t.Parallel()
	h := simulate.Header + "\n"
	jobs, err := simulate.ParseTrace(strings.NewReader(h + "0,a,8,600,600,0,1\n0,a,8,60,0,1,0\n"))
	if err != nil || !jobs[0].Debug || jobs[0].Resumable || jobs[1].Debug || !jobs[1].Resumable {
		t.Fatalf("jobs %+v, %v", jobs, err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"bad debug", h + "0,a,8,60,10,0,yes\n", "line 2 column 7 (debug)"},
		{"unallocated debug", h + "0,a,8,60,0,0,1\n", "line 2 column 5 (min_runtime_seconds): debug work is allocated"},
		{"debug row in a v2 trace", simulate.HeaderV2 + "\n0,a,8,60,10,0,1\n", "line 2: 7 fields, want 6"},
	} {
		if _, err := simulate.ParseTrace(strings.NewReader(tc.in)); !errors.Is(err, simulate.ErrTrace) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseTrace = %v, want ErrTrace with %q", tc.name, err, tc.want)
		}
	}
	synth, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 500, Seed: 7, DebugShare: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := simulate.WriteTrace(&buf, synth); err != nil {
		t.Fatal(err)
	}
	back, err := simulate.ParseTrace(&buf)
	if err != nil || !slices.Equal(back, synth) {
		t.Fatalf("trace with debug work changed in a write/parse round trip (%v)", err)
	}
}

// TestSyntheticDebugShare: about that share of the jobs is debug work of
// 1-8 GPUs for 1-30 minutes, protected for its run up to 15 minutes;
// with a load, the gaps shrink so the offered load stays what was asked.
func TestSyntheticDebugShare(t *testing.T) {
	t.Parallel()
	offered := func(jobs []simulate.Job) float64 {
		var gpuSec float64
		for _, j := range jobs {
			gpuSec += float64(j.GPUs) * j.Duration
		}
		return gpuSec / (4096 * jobs[len(jobs)-1].Submit)
	}
	o := simulate.SyntheticOptions{Jobs: 20000, Seed: 4, MaxGPUs: 256, Load: 0.9, CapacityGPUs: 4096}
	plain, err := simulate.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	o.DebugShare = 0.3
	mixed, err := simulate.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	debug := 0
	for _, j := range mixed {
		if !j.Debug {
			continue
		}
		debug++
		if !slices.Contains([]int{1, 2, 4, 8}, j.GPUs) || j.Duration < 60 || j.Duration > 1800 ||
			j.MinRuntime != math.Min(j.Duration, 900) || j.Resumable {
			t.Fatalf("debug job %+v: want 1-8 GPUs, 60-1800 s, protected min(duration, 900 s), not resumable", j)
		}
	}
	if share := float64(debug) / float64(len(mixed)); share < 0.28 || share > 0.32 {
		t.Errorf("debug share %.3f, want about 0.3", share)
	}
	if p, m := offered(plain), offered(mixed); math.Abs(m/p-1) > 0.1 {
		t.Errorf("offered load %.3f with debug work, %.3f without; want the same within 10%%", m, p)
	}
	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		if _, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 10, DebugShare: bad}); err == nil {
			t.Errorf("debug share %g was accepted", bad)
		}
	}
}

// TestDebugProtectionCapped: job 0 of a (all of small-tree, resumable)
// asks for 2 h of protection; at 5,400 s b's allocated job needs a
// leaf. Marked as debug work, job 0 is protected only 15 minutes and is
// preempted at once; otherwise b waits for its protection to end at
// 7,200 s.
func TestDebugProtectionCapped(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	for _, tc := range []struct {
		debug  string
		start1 float64
		count  int
	}{{"1", 5400, 1}, {"0", 7200, 1}} {
		jobs, err := simulate.ParseTrace(strings.NewReader(simulate.Header + "\n0,a,128,10000,7200,1," + tc.debug + "\n5400,b,64,7200,50,0,0\n"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := simulate.Run(g, jobs, simulate.PolicyToposcope, simulate.Options{Preempt: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Starts[1] != tc.start1 || r.Preemptions != tc.count {
			t.Errorf("debug %s: job 1 starts at %g, %d preempted; want %g, %d", tc.debug, r.Starts[1], r.Preemptions, tc.start1, tc.count)
		}
		if jobs[0].MinRuntime != 7200 {
			t.Errorf("the replay changed the caller's trace: min runtime %g", jobs[0].MinRuntime)
		}
	}
}

// TestDebugReport: two debug jobs wait 990 s and 980 s behind a job
// holding the cluster, and a whole-cluster job after them 1,570 s; the
// report counts the debug jobs and the p90 of their waits alone (990 s,
// where the p90 of all waits is 1,570 s), and the table's debug column,
// its last here, shows it.
func TestDebugReport(t *testing.T) {
	t.Parallel()
	jobs, err := simulate.ParseTrace(strings.NewReader(simulate.Header +
		"\n0,a,128,1000,0,0,0\n10,b,8,600,600,0,1\n20,b,8,600,600,0,1\n30,c,128,500,0,0,0\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulate.Run(model(t, "small-tree"), jobs, simulate.PolicyBestFit, simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.DebugJobs != 2 || r.DebugWaitP90 != 990 || r.WaitP90 != 1570 {
		t.Fatalf("%d debug jobs, debug p90 wait %g, p90 wait %g; want 2, 990, 1570", r.DebugJobs, r.DebugWaitP90, r.WaitP90)
	}
	var out bytes.Buffer
	if err := simulate.WriteTable(&out, []*simulate.Report{r}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	row := strings.Fields(lines[1])
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "debug p90") || row[len(row)-1] != "16m30s" {
		t.Errorf("want a last column debug p90 of 16m30s:\n%s", out.String())
	}
}
