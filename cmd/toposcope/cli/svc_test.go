package cli_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestShrinkGuardRecovery runs the real service and recovers from a
// refused discovery with the CLI alone: trigger reports the refusal and
// names the pending snapshot, status and snapshots show it, diff says
// what it would change, accept makes it current.
func TestShrinkGuardRecovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := filepath.Join(dir, "model.yaml")
	genModel(t, model, 100)
	addr := freeAddr(t)
	serveOut := serveInProcess(t, "serve", "--listen", addr, "--model", model, "--store", filepath.Join(dir, "s.db"), "--interval", "1h", "--allow-root")
	base := "http://" + addr
	waitRuns(t, base, 1, serveOut)
	svc := func(args ...string) result { return run(t, append(args, "--server", base)...) }

	if r := svc("status"); r.code != 0 || !strings.Contains(r.stdout, "current:  snapshot 1") || !strings.Contains(r.stdout, "pending:  none") {
		t.Fatalf("status before: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := svc("trigger"); r.code != 0 || !strings.Contains(r.stdout, "discovery queued") || !strings.Contains(r.stdout, ": unchanged") {
		t.Fatalf("trigger of an unchanged fabric: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A fabric that lost over a third of its nodes: the guard refuses it.
	genModel(t, model, 64)
	r := svc("trigger")
	if r.code != 1 || !strings.Contains(r.stderr, "refused by the shrink guard") || !strings.Contains(r.stderr, "toposcope accept 2") ||
		!strings.Contains(r.stderr, "toposcope diff 2") {
		t.Fatalf("trigger of a shrunk fabric: exit %d, want 1 naming the pending snapshot 2\n%s%s\nservice:\n%s", r.code, r.stdout, r.stderr, serveOut.String())
	}
	if r := svc("status"); r.code != 0 || !strings.Contains(r.stdout, "pending:  snapshot 2 (refused, 64 nodes") ||
		!strings.Contains(r.stdout, "toposcope accept 2") {
		t.Errorf("status with a pending snapshot: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = svc("snapshots")
	if r.code != 0 || !regexp.MustCompile(`(?m)^2 .*refused\s+64 .*pending$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^1 .*100 .*current$`).MatchString(r.stdout) {
		t.Errorf("snapshots: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := svc("diff", "2"); r.code != 0 || !strings.Contains(r.stdout, "snapshot 1 -> 2: nodes +0 -36") || !strings.Contains(r.stdout, "nodes removed (36):") {
		t.Errorf("diff 2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var d struct {
		Summary struct {
			NodesRemoved int `json:"nodesRemoved"`
		} `json:"summary"`
	}
	if r := svc("diff", "1", "2", "-o", "json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &d) != nil || d.Summary.NodesRemoved != 36 {
		t.Errorf("diff 1 2 -o json: exit %d, %+v\n%s%s", r.code, d, r.stdout, r.stderr)
	}

	if r := svc("accept", "2"); r.code != 0 || !strings.Contains(r.stdout, "snapshot 2 accepted") {
		t.Fatalf("accept 2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var st struct {
		Current struct {
			ID uint64 `json:"id"`
		} `json:"current"`
		Pending *struct{} `json:"pending"`
	}
	if r := svc("status", "-o", "json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || st.Current.ID != 2 || st.Pending != nil {
		t.Errorf("status after accept: exit %d, %+v\n%s", r.code, st, r.stdout)
	}

	// Usage errors and the service's own refusals.
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"accept", "2"}, 1, "answered 4"}, // nothing pending any more
		{[]string{"accept", "x"}, 2, "not a snapshot ID"},
		{[]string{"diff", "1", "2", "3"}, 2, "at most two"},
		{[]string{"diff", "99"}, 1, "answered 404"},
	} {
		if r := svc(tt.args...); r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
}
