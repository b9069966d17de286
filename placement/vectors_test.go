package placement

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func slurmTree(t *testing.T) *Tree {
	t.Helper()
	data, err := os.ReadFile("testdata/slurm-tree.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBudgets(data)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTree(b)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// slurmUsage is the §2.4 usage: u1 0.2, u2 0.25, u4 0.25 (subtree sums).
func slurmUsage(t *testing.T, tr *Tree) []float64 {
	t.Helper()
	own := make([]float64, len(tr.Accounts()))
	for name, u := range map[string]float64{"u1": 0.2, "u2": 0.25, "u4": 0.25} {
		i, _ := tr.Lookup(name)
		own[i] = u
	}
	return subtreeUsage(tr, own)
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestVectorNormShares(t *testing.T) {
	t.Parallel()
	tr := slurmTree(t)
	for _, tc := range []struct {
		name string
		want float64
	}{{"u1", 0.3}, {"u2", 0.05}, {"u3", 0.05}, {"u4", 0.25}, {"u5", 0.35}, {"A", 0.4}, {"D", 0.6}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			i, _ := tr.Lookup(tc.name)
			if got := tr.Accounts()[i].Norm; !near(got, tc.want, 1e-12) {
				t.Errorf("S(%s) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}

// Vector 9.6.1: Slurm classic factors to 1e-6, and effective usages.
func TestVectorClassic(t *testing.T) {
	t.Parallel()
	tr := slurmTree(t)
	ue, f := Classic(tr, slurmUsage(t, tr), 1)
	for _, tc := range []struct {
		name   string
		ue, ff float64
	}{
		{"A", 0.45, -1}, {"D", 0.25, -1}, {"B", 0.3875, -1}, {"C", 0.3, -1}, {"E", 0.25, -1}, {"F", 0.145833, -1},
		{"u1", 0.3875, 0.408479}, {"u2", 0.275, 0.022097}, {"u3", 0.15, 0.125000},
		{"u4", 0.25, 0.500000}, {"u5", 0.145833, 0.749154},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			i, _ := tr.Lookup(tc.name)
			if !near(ue[i], tc.ue, 1e-6) {
				t.Errorf("U_E(%s) = %.7f, want %v", tc.name, ue[i], tc.ue)
			}
			if tc.ff >= 0 && !near(f[i], tc.ff, 1e-6) {
				t.Errorf("F(%s) = %.7f, want %v", tc.name, f[i], tc.ff)
			}
		})
	}
}

// Vector 9.6.2: Fair Tree LFs and ranks u5 > u4 > u1 > u3 > u2.
func TestVectorFairTree(t *testing.T) {
	t.Parallel()
	tr := slurmTree(t)
	lf := LevelFairShare(tr, slurmUsage(t, tr))
	_, fs := FairTreeRanks(tr, lf)
	inf := math.Inf(1)
	for _, tc := range []struct {
		name   string
		lf, fs float64
	}{
		{"A", 0.4 / (0.45 / 0.7), -1}, {"D", 1.68, -1}, {"B", 1.6875, -1}, {"C", 0.45, -1},
		{"E", 0.25 / 0.6 / 1, -1}, {"F", inf, -1},
		{"u5", inf, 1.0}, {"u4", 1, 0.8}, {"u1", 1, 0.6}, {"u3", inf, 0.4}, {"u2", 0.5, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			i, _ := tr.Lookup(tc.name)
			if !(lf[i] == tc.lf || near(lf[i], tc.lf, 1e-4)) {
				t.Errorf("LF(%s) = %v, want %v", tc.name, lf[i], tc.lf)
			}
			if tc.fs >= 0 && !near(fs[i], tc.fs, 1e-12) {
				t.Errorf("FairShare(%s) = %v, want %v", tc.name, fs[i], tc.fs)
			}
		})
	}
}

// Vector 9.6.3: decay is 0.5 at one half-life and 0.25 at two, in the
// decay table classic mode uses, and decayed usage over one half-life is
// half of a full integral's (∫ from T½ to ∞ = ∫ from 0 to T½ of 2^(-t/T½)).
func TestVectorDecay(t *testing.T) {
	t.Parallel()
	hl := 7 * 24 * time.Hour
	d := newDecayTable(hl)
	s := int64(hl / time.Second)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"one-half-life", d.factor(s), 0.5},
		{"two-half-lives", d.factor(2 * s), 0.25},
		{"integral-halves", d.integral(0, s) / d.integral(0, 1<<33-1), 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !near(tc.got, tc.want, 1e-9) {
				t.Errorf("got %.12f, want %v", tc.got, tc.want)
			}
		})
	}
	// DecayedUsage (one record) agrees with the table.
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	r := Record{GPUs: 2, Start: now.Add(-hl), Allocated: true}
	if got, want := DecayedUsage(&r, now, hl), 2*d.integral(0, s); !near(got, want, 1e-6*want) {
		t.Errorf("DecayedUsage = %v, want %v", got, want)
	}
}

// Vector 9.6.13: 8 h 1 min is clamped to 8 h; min runtime 0 is unprotected.
func TestVectorProtection(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		r    Record
		want time.Time
	}{
		{"clamped", Record{Start: start, MinRuntime: 8*time.Hour + time.Minute, Allocated: true}, start.Add(8 * time.Hour)},
		{"unallocated", Record{Start: start}, start},
		{"debug", Record{Start: start, MinRuntime: 15 * time.Minute, Allocated: true}, start.Add(15 * time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.r.ProtectedUntil(8 * time.Hour); !got.Equal(tc.want) {
				t.Errorf("ProtectedUntil = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestVectorSlurmTest24_4 reproduces Slurm's Fair Tree regression test
// (testsuite/expect/test24.4): its association tree, with Fairshare=parent
// accounts and users, and its raw usage; every user's FairShare and the
// printed LevelFS values must match. It covers ties between users and
// accounts (aE, aF and u1 all 1.0; uG1 tied with uGA1, uGA2 two ranks
// lower), Fairshare=parent (uD1 and uDA1 rank first in aD, aDA's users
// rank among aD's) and a zero-share account (aC last).
func TestVectorSlurmTest24_4(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/slurm-test24.4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBudgets(data)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTree(b)
	if err != nil {
		t.Fatal(err)
	}
	own := make([]float64, len(tr.Accounts()))
	for name, u := range map[string]float64{"u2": 10, "uAA1": 20, "uAB1": 25, "uBA1": 25, "uC1": 30, "uD1": 20, "uD2": 20, "uD3": 25,
		"uDA1": 10, "uDA2": 10, "uDA3": 25, "uG1": 10, "uGA1": 4, "uGA2": 6} {
		i, ok := tr.Lookup(name)
		if !ok {
			t.Fatalf("no account %s", name)
		}
		own[i] = u
	}
	lf := LevelFairShare(tr, subtreeUsage(tr, own))
	_, fs := FairTreeRanks(tr, lf)
	// The level path that ranks uDA2 skips aDA (Fairshare=parent); uGA1's
	// goes through aG and aGA.
	for name, want := range map[string]string{"uDA2": "aD 0.524476 > uDA2 1.941176", "uGA1": "aG 0.461538 > aGA 1.000000 > uGA1 1.250000",
		"uD1": "aD 0.524476 > uD1 inf"} {
		i, _ := tr.Lookup(name)
		var steps []string
		for _, st := range levelPath(tr, lf, i) {
			v := "inf"
			if st.LevelFS != nil {
				v = fmt.Sprintf("%.6f", *st.LevelFS)
			}
			steps = append(steps, st.Account+" "+v)
		}
		if got := strings.Join(steps, " > "); got != want {
			t.Errorf("levelPath(%s) = %s, want %s", name, got, want)
		}
	}
	// FairShare and LevelFS as test24.4 expects them (six digits; -1: not printed).
	for _, tc := range []struct {
		name   string
		fs, lf float64
	}{
		{"u1", 1.000000, math.Inf(1)}, {"u2", 0.666667, 1.153846},
		{"aA", -1, 1.025641}, {"aAA", -1, 1.687500}, {"uAA1", 0.619048, 1.000000},
		{"aAB", -1, 0.450000}, {"uAB1", 0.523810, 0.500000}, {"uAB2", 0.571429, math.Inf(1)},
		{"aB", -1, 2.769231}, {"aBA", -1, 0.416667}, {"uBA1", 0.714286, 1.000000}, {"aBB", -1, math.Inf(1)}, {"uBB1", 0.761905, math.Inf(1)},
		{"aC", -1, 0}, {"uC1", 0.047619, 0},
		{"aD", -1, 0.524476}, {"uD1", 0.476190, -1}, {"uD2", 0.238095, 1.294118}, {"uD3", 0.333333, 1.294118},
		{"uDA1", 0.476190, -1}, {"uDA2", 0.380952, 1.941176}, {"uDA3", 0.333333, 1.294118},
		{"aE", -1, math.Inf(1)}, {"aE1", 1.000000, math.Inf(1)}, {"aE2", 1.000000, math.Inf(1)},
		{"aF", -1, math.Inf(1)}, {"uF1", 1.000000, math.Inf(1)}, {"uF2", 1.000000, math.Inf(1)},
		{"aG", -1, 0.461538}, {"uG1", 0.190476, 1.000000}, {"aGA", -1, 1.000000}, {"uGA1", 0.190476, 1.250000}, {"uGA2", 0.095238, 0.833333},
	} {
		i, _ := tr.Lookup(tc.name)
		if tc.fs >= 0 && !near(fs[i], tc.fs, 5e-7) {
			t.Errorf("FairShare(%s) = %.6f, want %.6f", tc.name, fs[i], tc.fs)
		}
		if tc.lf >= 0 && !(lf[i] == tc.lf || near(lf[i], tc.lf, 5e-7)) {
			t.Errorf("LevelFS(%s) = %.6f, want %.6f", tc.name, lf[i], tc.lf)
		}
	}
}
