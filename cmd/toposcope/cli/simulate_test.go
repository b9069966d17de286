package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
)

func TestSimulateCmd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	written := filepath.Join(dir, "written.csv")
	badTrace := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(badTrace, []byte(simulate.HeaderV1+"\n0,a,8,60,0\n0,a,eight,60,0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyTrace, farTrace := filepath.Join(dir, "empty.csv"), filepath.Join(dir, "far.csv")
	if err := os.WriteFile(emptyTrace, []byte(simulate.Header+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(farTrace, []byte(simulate.HeaderV1+"\n0,a,8,60,0\n1e15,a,8,60,0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	small := []string{"--model", "small-tree", "--jobs", "200", "--max-gpus", "64", "--interarrival", "60"}
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool
		want  []string
	}{
		{name: "table", args: small, want: []string{"mean leaf span", "toposcope", "firstfit", "bestfit", "slurm-tree", "delivered/owed", "acct03",
			"useful GPU-h", "capped delivered/owed"}},
		{name: "preempt", args: append([]string{"--preempt", "--order", "fairshare", "--load", "1.5", "--policies", "toposcope,bestfit"}, small...),
			want: []string{"preempted", "redone GPU-h"}},
		{name: "zero-accounts", args: append([]string{"--accounts", "0"}, small...), usage: true, want: []string{"--accounts must be at least 1 (got 0)"}},
		{name: "negative-accounts", args: append([]string{"--accounts", "-2"}, small...), usage: true, want: []string{"--accounts must be at least 1 (got -2)"}},
		{name: "header-only-trace", args: []string{"--trace", emptyTrace}, usage: true, want: []string{"empty.csv", "a header and no jobs"}},
		{name: "trace-past-range", args: []string{"--trace", farTrace}, usage: true, want: []string{"far.csv", "line 3 column 1 (submit_seconds)"}},
		{name: "write-trace", args: append([]string{"--write-trace", written, "--policies", "firstfit"}, small...), want: []string{"firstfit"}},
		{name: "bad-trace", args: []string{"--trace", badTrace}, usage: true, want: []string{"bad.csv", "line 3 column 3 (gpus)"}},
		{name: "bad-policy", args: append([]string{"--policies", "random"}, small...), usage: true, want: []string{`policy "random"`}},
		{name: "bad-model", args: []string{"--model", "nope"}, usage: true, want: []string{"neither a bundled model"}},
		{name: "defrag", args: append([]string{"--defrag-after", "1h", "--policies", "toposcope"}, small...), want: []string{"preempted", "redone GPU-h"}},
		{name: "negative-defrag", args: append([]string{"--defrag-after", "-1h"}, small...), usage: true, want: []string{"--defrag-after must not be negative"}},
		{name: "reserve-nodes", args: append([]string{"--reserve", "nodes", "--policies", "bestfit"}, small...), want: []string{"bestfit"}},
		{name: "bad-reserve", args: append([]string{"--reserve", "leaves"}, small...), usage: true, want: []string{`reserve "leaves"`}},
		{name: "scenario", args: []string{"--scenario", "venus", "--policies", "firstfit"}, want: []string{"firstfit", "/15", "vcJsw", "vcgkz"}},
		{name: "scenario-debug-share", args: []string{"--scenario", "venus", "--debug-share", "0.1", "--policies", "firstfit"}, want: []string{"debug p90", "/15"}},
		{name: "debug-share-with-trace", args: []string{"--trace", badTrace, "--debug-share", "0.1"}, usage: true, want: []string{"--debug-share shapes a synthetic trace"}},
		{name: "bad-debug-share", args: append([]string{"--debug-share", "1"}, small...), usage: true, want: []string{"debug share must be at least 0 and below 1"}},
		{name: "scenario-and-jobs", args: []string{"--scenario", "venus", "--jobs", "10"}, usage: true, want: []string{"--jobs cannot be given with --scenario"}},
		{name: "bad-scenario", args: []string{"--scenario", "nope"}, usage: true, want: []string{"neither a bundled scenario (venus)"}},
	} {
		var out, errOut bytes.Buffer
		cmd := newSimulateCmd(&Env{Stdout: &out, Stderr: &errOut})
		cmd.SetArgs(tc.args)
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.Execute()
		if tc.usage != (err != nil && errors.Is(err, ErrUsage)) {
			t.Fatalf("%s: err = %v, usage error wanted: %v", tc.name, err, tc.usage)
		}
		text := out.String()
		if err != nil {
			text = err.Error()
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, text)
			}
		}
		if err == nil && !strings.Contains(errOut.String(), "events/s") {
			t.Errorf("%s: no throughput on stderr: %q", tc.name, errOut.String())
		}
	}
	// The written trace replays to the same report, as JSON.
	var a, b bytes.Buffer
	for i, args := range [][]string{
		append([]string{"--policies", "bestfit", "--json"}, small...),
		{"--model", "small-tree", "--trace", written, "--policies", "bestfit", "--json"},
	} {
		cmd := newSimulateCmd(&Env{Stdout: []*bytes.Buffer{&a, &b}[i], Stderr: &bytes.Buffer{}})
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	var ra struct {
		Policies []map[string]any `json:"policies"`
	}
	if err := json.Unmarshal(a.Bytes(), &ra); err != nil || len(ra.Policies) != 1 || ra.Policies[0]["jobs"] != 200.0 {
		t.Fatalf("JSON report %s: %v", a.String(), err)
	}
	// The keys the report promises.
	for _, k := range []string{"policy", "meanLeafSpan", "waitP50Seconds", "waitP90Seconds", "largestJobWaitSeconds",
		"partNodeFreeGPUs", "headBlockedFreeGPUs", "accounts", "accountsAtLeast95", "usefulGPUHours", "redoneGPUHours",
		"cappedDeliveredRatio"} {
		if _, ok := ra.Policies[0][k]; !ok {
			t.Errorf("JSON report lacks %q", k)
		}
	}
	if acc, _ := ra.Policies[0]["accounts"].([]any); len(acc) == 0 || acc[0].(map[string]any)["name"] == nil || acc[0].(map[string]any)["owedGPUHours"] == nil {
		t.Errorf("accounts %v: want name, owedGPUHours, deliveredGPUHours", ra.Policies[0]["accounts"])
	}
	if a.String() != b.String() {
		t.Errorf("the written trace replays differently:\n%s\n%s", a.String(), b.String())
	}
}
