package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlaceCmd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.yaml")
	if err := os.WriteFile(ledger, []byte(`records:
  - {account: b, workload: b1, gpus: 64, nodes: ["gb[001-016]"], start: 2026-12-02T10:00:00Z}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	budgets := filepath.Join(dir, "budgets.yaml")
	if err := os.WriteFile(budgets, []byte("accounts:\n  - name: A\n    shares: 3\n  - name: b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badBudgets := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badBudgets, []byte("accounts:\n  - name: A\n    share: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := "--now=2026-12-02T12:00:00Z"
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool
		want  []string
	}{
		{name: "table", args: []string{"--model", "nvl72", "--account", "A", "--gpus", "64", now},
			want: []string{"RANK", "domain nvl01", "free"}},
		{name: "json", args: []string{"--model", "nvl72", "--account", "A", "--gpus", "64", "--json", now},
			want: []string{`"candidates"`, `"rankKey"`}},
		{name: "budgets", args: []string{"--model", "nvl72", "--budgets", budgets, "--account", "A", "--gpus", "8", now},
			want: []string{"S 0.75"}},
		{name: "bad-budgets", args: []string{"--model", "nvl72", "--budgets", badBudgets, "--account", "A", "--gpus", "8", now},
			usage: true, want: []string{"accounts[0].share (line 3)"}},
		{name: "ledger-reclaim", args: []string{"--model", "nvl72", "--ledger", ledger, "--account", "A", "--gpus", "576",
			"--min-runtime", "1h", now}, want: []string{"free+reclaimable", "victim b1", "unallocated"}},
		{name: "unknown-node-in-ledger", args: []string{"--model", "small-tree", "--ledger", ledger, "--account", "A", "--gpus", "8", now},
			usage: true, want: []string{"unknown node"}},
		{name: "too-big", args: []string{"--model", "nvl72", "--account", "A", "--gpus", "4096", now},
			usage: true, want: []string{"no candidate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			cmd := newPlaceCmd(&Env{Stdout: &out, Stderr: &out})
			cmd.SetArgs(tc.args)
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if tc.usage != (err != nil && errors.Is(err, ErrUsage)) {
				t.Fatalf("err = %v, usage error wanted: %v", err, tc.usage)
			}
			text := out.String()
			if err != nil {
				text = err.Error()
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			if tc.name == "json" && !json.Valid(out.Bytes()) {
				t.Errorf("invalid JSON")
			}
		})
	}
}
