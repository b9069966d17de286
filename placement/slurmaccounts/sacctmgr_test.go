package slurmaccounts_test

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/slurmaccounts"
	"github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func readBudgets(t *testing.T, path string) *placement.Budgets {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := placement.ParseBudgets(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFileGolden writes the sample tree: root's children scaled by 10
// (3, 1.5, 0 → 30, 15, 0); students is Fairshare=parent, so its children
// rank beside nlp and vision and are scaled with them by 100 (2, 1, 1,
// 0.25 → 200, 100, 100, 25); every parent comes before its children.
func TestFileGolden(t *testing.T) {
	t.Parallel()
	got, err := slurmaccounts.File("tux", readBudgets(t, "testdata/budgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/budgets.sacctmgr", got, *update)
}

func TestFileRefuses(t *testing.T) {
	t.Parallel()
	one := func(name string, shares float64) *placement.Budgets {
		return &placement.Budgets{Accounts: []placement.AccountSpec{{Name: name, Shares: placement.Shares(shares)}}}
	}
	for _, tc := range []struct {
		name, cluster string
		b             *placement.Budgets
		want          string
	}{
		{"upper-case account", "tux", one("Research", 1), `account "Research"`},
		{"colon in account", "tux", one("a:b", 1), `account "a:b"`},
		{"root account", "tux", one("root", 1), `account "root"`},
		{"bad cluster", "Tux Cluster", one("a", 1), `cluster "Tux Cluster"`},
		{"no accounts", "tux", &placement.Budgets{}, "no accounts"},
		{"share below a thousandth", "tux", one("a", 0.0001), `account "a": shares 0.0001`},
		{"duplicate", "tux", &placement.Budgets{Accounts: []placement.AccountSpec{{Name: "a"}, {Name: "a"}}}, `duplicate account "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := slurmaccounts.File(tc.cluster, tc.b)
			if !errors.Is(err, slurmaccounts.ErrInexpressible) || !strings.Contains(err.Error(), tc.want) || out != nil {
				t.Errorf("File = %q, %v; want ErrInexpressible naming %s", out, err, tc.want)
			}
		})
	}
}
