package slurmaccounts_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/slurmaccounts"
	"github.com/toposcope/toposcope/testenv/slurmtest"
)

// TestLoadIntoSlurmdbd loads the sample tree's file into a real slurmdbd
// (Slurm 22.05 on MariaDB) with `sacctmgr load`, reads the associations
// back with `sacctmgr show assoc` (every account under the parent and
// with the Fairshare the file gave), then starts slurmctld on it and
// checks `sshare -l`: within each set of accounts Slurm ranks together,
// NormShares are in the proportion of toposcope's shares (students'
// children rank beside nlp and vision, as Fairshare=parent says).
func TestLoadIntoSlurmdbd(t *testing.T) {
	slurmtest.RequireDBD(t)
	t.Parallel()
	ctx := t.Context()
	dbd, err := slurmtest.StartDBD(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	b := readBudgets(t, "testdata/budgets.yaml")
	file, err := slurmaccounts.File(dbd.Cluster(), b)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "accounts.cfg")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dbd.Sacctmgr(ctx, "load", "file="+path); err != nil {
		t.Fatal(err)
	}
	out, err := dbd.Sacctmgr(ctx, "-nP", "show", "assoc", "cluster="+dbd.Cluster(), "format=account,parentname,share,user")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sacctmgr show assoc:\n%s", out)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) == 4 && f[3] == "" && f[0] != "root" {
			got[f[0]] = f[1] + " " + f[2]
		}
	}
	want := map[string]string{
		"research": "root 30", "production": "root 15", "interns": "root 0",
		"nlp": "research 200", "vision": "research 100", "students": "research parent",
		"alice": "students 100", "bob": "students 25",
	}
	for a, w := range want {
		if got[a] != w {
			t.Errorf("account %s: parent and share %q, want %q", a, got[a], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("slurmdbd has accounts %v, want %v", got, want)
	}

	ctl, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2205, Nodes: []string{"n1"}, DBD: dbd})
	if err != nil {
		t.Fatal(err)
	}
	sshare, errOut, err := ctl.Run(ctx, "/usr/bin/sshare", "-l", "-a", "-P")
	if err != nil {
		t.Fatalf("sshare: %v: %s", err, errOut)
	}
	t.Logf("sshare -l -a -P:\n%s", sshare)
	norm := normShares(t, sshare)
	tree, err := placement.NewTree(b)
	if err != nil {
		t.Fatal(err)
	}
	// The sets Slurm ranks together, with toposcope's shares.
	for _, group := range [][]string{{"research", "production", "interns"}, {"nlp", "vision", "alice", "bob"}} {
		var sumT, sumS float64
		for _, a := range group {
			i, _ := tree.Lookup(a)
			sumT += tree.Accounts()[i].Shares
			sumS += norm[a]
		}
		for _, a := range group {
			i, _ := tree.Lookup(a)
			wantFrac, gotFrac := tree.Accounts()[i].Shares/sumT, norm[a]/sumS
			if math.Abs(wantFrac-gotFrac) > 1e-5 {
				t.Errorf("%s: Slurm's share among %v is %.6f, toposcope's %.6f", a, group, gotFrac, wantFrac)
			}
		}
	}
}

// normShares reads NormShares per account (the account rows, no user)
// from `sshare -l -a -P`.
func normShares(t *testing.T, out string) map[string]float64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	head := strings.Split(lines[0], "|")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, k := range []string{"Account", "User", "NormShares"} {
		if _, ok := col[k]; !ok {
			t.Fatalf("sshare has no %s column: %q", k, lines[0])
		}
	}
	got := map[string]float64{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(head) || f[col["User"]] != "" {
			continue
		}
		v, err := strconv.ParseFloat(f[col["NormShares"]], 64)
		if err != nil {
			continue // Fairshare=parent has no NormShares of its own
		}
		got[strings.TrimSpace(f[col["Account"]])] = v
	}
	return got
}
