package simulate_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/simulate"
)

// TestSyntheticMix: accounts are drawn by weight, and a horizon ends the
// trace at the first submit past it.
func TestSyntheticMix(t *testing.T) {
	t.Parallel()
	o := simulate.SyntheticOptions{Seed: 3, Horizon: 7 * 24 * 3600, MeanInterarrival: 60,
		Mix: []simulate.AccountWeight{{Account: "big", Weight: 3}, {Account: "small", Weight: 1}}}
	jobs, err := simulate.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	// 7 days at one job a minute: about 10,080 jobs.
	if len(jobs) < 9500 || len(jobs) > 10700 {
		t.Fatalf("%d jobs in 7 days at a mean gap of 60 s", len(jobs))
	}
	count := map[string]int{}
	for _, j := range jobs {
		if j.Submit > o.Horizon {
			t.Fatalf("job %d submitted at %g, past the horizon", j.ID, j.Submit)
		}
		count[j.Account]++
	}
	if len(count) != 2 {
		t.Fatalf("accounts %v, want big and small", count)
	}
	if f := float64(count["big"]) / float64(len(jobs)); f < 0.72 || f > 0.78 {
		t.Errorf("big submitted %.3f of the jobs, want about 0.75", f)
	}
	o.Jobs = 100
	if capped, err := simulate.Synthetic(o); err != nil || len(capped) != 100 {
		t.Errorf("horizon with jobs 100: %d jobs, %v", len(capped), err)
	}
}

func TestSyntheticMixErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    simulate.SyntheticOptions
		want string
	}{
		{"no jobs, no horizon", simulate.SyntheticOptions{}, "jobs must be positive"},
		{"negative horizon", simulate.SyntheticOptions{Horizon: -1}, "horizon must be finite and not negative"},
		{"endless horizon", simulate.SyntheticOptions{Horizon: math.Inf(1)}, "horizon must be finite"},
		{"gap under a second", simulate.SyntheticOptions{Horizon: 100, Load: 1e6, CapacityGPUs: 8}, "under a second"},
		{"empty name", simulate.SyntheticOptions{Jobs: 1, Mix: []simulate.AccountWeight{{Weight: 1}}}, "mix[0]: account name is empty"},
		{"twice", simulate.SyntheticOptions{Jobs: 1, Mix: []simulate.AccountWeight{{Account: "a", Weight: 1}, {Account: "a", Weight: 2}}}, `mix[1]: account "a" is listed twice`},
		{"zero weight", simulate.SyntheticOptions{Jobs: 1, Mix: []simulate.AccountWeight{{Account: "a"}}}, `mix[0]: account "a": weight must be positive`},
		{"NaN weight", simulate.SyntheticOptions{Jobs: 1, Mix: []simulate.AccountWeight{{Account: "a", Weight: math.NaN()}}}, "weight must be positive"},
	} {
		if _, err := simulate.Synthetic(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestVenusScenario: the bundled scenario has Venus's fifteen quotas
// (1,080 GPUs, the size of its model), demands of 0.5 to 4 times a share
// that come to its load, and a trace whose accounts all have budgets.
func TestVenusScenario(t *testing.T) {
	t.Parallel()
	sc, err := simulate.LoadScenario("venus")
	if err != nil {
		t.Fatal(err)
	}
	g := model(t, sc.Model)
	gpus := 0
	for _, n := range g.Nodes() {
		gpus += n.GPUs
	}
	shares, offered := 0.0, 0.0
	for _, a := range sc.Accounts {
		shares += a.Shares
		offered += a.Shares * a.Demand
		if a.Demand < 0.5 || a.Demand > 4 {
			t.Errorf("%s: demand %g, want 0.5 to 4", a.Name, a.Demand)
		}
	}
	if len(sc.Accounts) != 15 || shares != 1080 || gpus != 1080 {
		t.Fatalf("%d accounts, %g shares, %d GPUs; want 15, 1080, 1080", len(sc.Accounts), shares, gpus)
	}
	if math.Abs(offered/shares-sc.Load) > 0.01 || sc.Load != 1.1 || sc.Days != 7 || sc.Order != simulate.OrderFairShare {
		t.Errorf("demand comes to %.3f of the cluster, load %g, %g days, order %s", offered/shares, sc.Load, sc.Days, sc.Order)
	}
	tree, err := placement.NewTree(sc.Budgets())
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := simulate.Synthetic(sc.Synthetic(1, gpus))
	if err != nil {
		t.Fatal(err)
	}
	last := jobs[len(jobs)-1].Submit
	if len(jobs) < 1000 || last > 7*24*3600 || last < 6*24*3600 {
		t.Fatalf("%d jobs, the last at %g s; want a week of them", len(jobs), last)
	}
	for _, j := range jobs {
		if _, ok := tree.Lookup(j.Account); !ok {
			t.Fatalf("job %d: account %q has no budget", j.ID, j.Account)
		}
	}
}

func TestParseScenarioErrors(t *testing.T) {
	t.Parallel()
	ok := "name: s\nmodel: small-tree\ndays: 1\nload: 1\naccounts:\n  - {name: a, shares: 1, demand: 1}\n"
	if sc, err := simulate.ParseScenario([]byte(ok)); err != nil || sc.Order != simulate.OrderFairShare {
		t.Fatalf("ParseScenario(ok) = %+v, %v", sc, err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"unknown key", ok + "weeks: 2\n", "weeks"},
		{"no days", strings.Replace(ok, "days: 1", "days: 0", 1), "scenario.days (line 3): must be more than 0"},
		{"endless", strings.Replace(ok, "days: 1", "days: .inf", 1), "scenario.days (line 3)"},
		{"load too high", strings.Replace(ok, "load: 1", "load: 1e9", 1), "scenario.load (line 4)"},
		{"negative duration", ok + "meanDurationSeconds: -1\n", "scenario.meanDurationSeconds"},
		{"debug share of one", ok + "debugShare: 1\n", "scenario.debugShare"},
		{"bad order", ok + "order: random\n", "scenario.order"},
		{"zero shares", strings.Replace(ok, "shares: 1", "shares: 0", 1), "scenario.accounts[0].shares (line 6): must be positive"},
		{"duplicate", ok + "  - {name: a, shares: 1, demand: 2}\n", `scenario.accounts[1].name (line 7): duplicate account "a"`},
		{"no accounts", "name: s\nmodel: m\ndays: 1\nload: 1\n", "scenario.accounts"},
	} {
		_, err := simulate.ParseScenario([]byte(tc.in))
		if !errors.Is(err, simulate.ErrScenarioFile) || !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrScenarioFile naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := simulate.LoadScenario("no-such-scenario"); !errors.Is(err, simulate.ErrScenarioFile) || !strings.Contains(err.Error(), "venus") {
		t.Errorf("unknown scenario: %v, want the bundled ones listed", err)
	}
}
