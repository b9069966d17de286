package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReconfigureOutputNeverReachesTheCaller: a request that publishes
// through a Slurm engine whose reconfigure command fails gets the failure
// without a word of the command's output; the service log has its end.
func TestReconfigureOutputNeverReachesTheCaller(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "scontrol")
	body := "#!/bin/sh\necho 'scontrol: fatal: Could not establish a configuration source' >&2\necho 'root:HostSecret42' >&2\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "topology.conf")
	s := newStack(t, stackOpts{publish: true, guard: 1,
		engines: "[{name: slurm, params: {output: " + out + ", reconfigure: true, reconfigureCommand: [" + script + ", reconfigure]}}]"})
	w := s.do(http.MethodPost, "/v1/generate", `{"engine":{"name":"slurm","params":{"header":false}}}`)
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit = %d %s", w.Code, w.Body)
	}
	res := s.poll("/v1/topology?uid=" + w.Body.String())
	if res.Code == http.StatusOK {
		t.Fatalf("a failed reconfigure answered 200: %s", res.Body)
	}
	for _, secret := range []string{"Could not establish", "HostSecret42", "fatal"} {
		if strings.Contains(res.Body.String(), secret) {
			t.Errorf("the answer quotes the command's output %q: %s", secret, res.Body)
		}
	}
	if !strings.Contains(s.logs.String(), "Could not establish a configuration source") {
		t.Errorf("the service log lacks the command's reason:\n%s", s.logs)
	}
}
