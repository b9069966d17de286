package simulate_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
)

func TestParseTraceErrors(t *testing.T) {
	t.Parallel()
	h := simulate.HeaderV1 + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "line 1: missing header"},
		{"wrong header", "submit,account\n", "line 1: header must be"},
		{"too few fields", h + "0,a,8,60\n", "line 2: 4 fields, want 5"},
		{"bad submit", h + "x,a,8,60,0\n", "line 2 column 1 (submit_seconds)"},
		{"negative duration", h + "0,a,8,-1,0\n", "line 2 column 4 (duration_seconds)"},
		{"zero GPUs", h + "0,a,0,60,0\n", "line 2 column 3 (gpus)"},
		{"no account", h + "0, ,8,60,0\n", "line 2 column 2 (account)"},
		{"min runtime above duration", h + "0,a,8,60,61\n", "line 2 column 5 (min_runtime_seconds)"},
		{"submit goes back", h + "10,a,8,60,0\n5,a,8,60,0\n", "line 3 column 1 (submit_seconds)"},
		{"NaN", h + "NaN,a,8,60,0\n", "line 2 column 1"},
		{"bad resumable", simulate.HeaderV2 + "\n0,a,8,60,0,maybe\n", "line 2 column 6 (resumable)"},
		{"resumable row in a v1 trace", h + "0,a,8,60,0,1\n", "line 2: 6 fields, want 5"},
		// Past time.Duration's range these replayed as nothing (owed and
		// delivered 0, the account served).
		{"submit past the range", h + "0,a,8,60,0\n1e15,a,8,60,0\n", "line 3 column 1 (submit_seconds): 1e15 is past"},
		{"duration past the range", h + "0,a,8,1e11,0\n", "line 2 column 4 (duration_seconds): 1e11 is past"},
		{"min runtime past the range", h + "0,a,8,60,4e8\n", "line 2 column 5 (min_runtime_seconds): 4e8 is past"},
		{"just past ten years", h + "315360001,a,8,60,0\n", "line 2 column 1 (submit_seconds)"},
		{"header and no jobs", h, "a header and no jobs"},
		{"header and a blank line", h + "\n", "a header and no jobs"},
	} {
		_, err := simulate.ParseTrace(strings.NewReader(tc.in))
		if !errors.Is(err, simulate.ErrTrace) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseTrace = %v, want ErrTrace with %q", tc.name, err, tc.want)
		}
	}
}

// TestParseTraceBounds: ten years is the last time a trace may give.
func TestParseTraceBounds(t *testing.T) {
	t.Parallel()
	jobs, err := simulate.ParseTrace(strings.NewReader(simulate.HeaderV1 + "\n315360000,a,8,315360000,315360000\n"))
	if err != nil || len(jobs) != 1 || jobs[0].Submit != simulate.MaxTraceSeconds {
		t.Fatalf("ParseTrace = %+v, %v; want one job at %g s", jobs, err, simulate.MaxTraceSeconds)
	}
}

func TestTraceRoundTrip(t *testing.T) {
	t.Parallel()
	jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 500, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := simulate.WriteTrace(&buf, jobs); err != nil {
		t.Fatal(err)
	}
	back, err := simulate.ParseTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, jobs) {
		t.Fatal("trace changed in a write/parse round trip")
	}
}

func TestSynthetic(t *testing.T) {
	t.Parallel()
	o := simulate.SyntheticOptions{Jobs: 4000, Seed: 3, MaxGPUs: 512, Accounts: 3}
	a, err := simulate.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := simulate.Synthetic(o)
	if !slices.Equal(a, b) {
		t.Fatal("equal options gave different traces")
	}
	o.Seed = 4
	if c, _ := simulate.Synthetic(o); slices.Equal(a, c) {
		t.Fatal("another seed gave the same trace")
	}
	sizes := map[int]int{}
	accounts := map[string]bool{}
	allocated := 0
	for i, j := range a {
		if j.GPUs&(j.GPUs-1) != 0 || j.GPUs > 512 || j.Duration < 1 || j.Duration > 48*3600 || j.MinRuntime > j.Duration {
			t.Fatalf("job %d out of shape: %+v", i, j)
		}
		if i > 0 && j.Submit < a[i-1].Submit {
			t.Fatalf("job %d submitted before job %d", i, i-1)
		}
		sizes[j.GPUs]++
		accounts[j.Account] = true
		if j.MinRuntime > 0 {
			allocated++
		}
	}
	// Heavy tail: 1-GPU jobs are the most common, yet the largest size occurs.
	for s, n := range sizes {
		if s != 1 && n >= sizes[1] {
			t.Errorf("size %d (%d jobs) is as common as 1 GPU (%d)", s, n, sizes[1])
		}
	}
	if sizes[512] == 0 || len(accounts) != 3 || allocated != (len(a)+2)/3 {
		t.Errorf("sizes %v, accounts %v, allocated %d", sizes, accounts, allocated)
	}
	if _, err := simulate.Synthetic(simulate.SyntheticOptions{}); err == nil {
		t.Error("zero jobs accepted")
	}
}

// TestSyntheticLoad: with a load, the mean gap between submits is set so
// that the offered GPU-seconds per second are that fraction of the
// capacity (heavy tails: checked within 20% on a long trace, per seed).
func TestSyntheticLoad(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 20000, Seed: seed, MaxGPUs: 1024, Load: 0.9, CapacityGPUs: 4096})
		if err != nil {
			t.Fatal(err)
		}
		var work float64
		for _, j := range jobs {
			work += float64(j.GPUs) * j.Duration
		}
		offered := work / (4096 * (jobs[len(jobs)-1].Submit - jobs[0].Submit))
		if offered < 0.72 || offered > 1.08 {
			t.Errorf("seed %d: offered load %.3f, want 0.9 ± 20%%", seed, offered)
		}
	}
	if _, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 10, Load: 1}); err == nil {
		t.Error("a load without a capacity was accepted")
	}
}

// TestResumableColumn: the sixth column marks resumable work; a trace
// without it (the first format) is all restartable.
func TestResumableColumn(t *testing.T) {
	t.Parallel()
	jobs, err := simulate.ParseTrace(strings.NewReader(simulate.HeaderV2 + "\n0,a,8,60,0,1\n0,a,8,60,0,0\n"))
	if err != nil || !jobs[0].Resumable || jobs[1].Resumable {
		t.Fatalf("jobs %+v, %v", jobs, err)
	}
	jobs, err = simulate.ParseTrace(strings.NewReader(simulate.HeaderV1 + "\n0,a,8,60,0\n"))
	if err != nil || jobs[0].Resumable {
		t.Fatalf("v1 jobs %+v, %v", jobs, err)
	}
}
