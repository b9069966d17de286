package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/testenv/budget"
	"github.com/toposcope/toposcope/testenv/proctest"
	"github.com/toposcope/toposcope/testenv/releasebin"
)

// serveProc is a running `toposcope serve` process.
type serveProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *proctest.Output
	exited chan error
}

var listening = regexp.MustCompile(`listening on (https?://\S+)`)

// startService starts the binary and waits until it prints its address.
func startService(t *testing.T, bin, cfgPath string) *serveProc {
	t.Helper()
	s := &serveProc{t: t, stderr: &proctest.Output{}, exited: make(chan error, 1)}
	s.cmd = exec.Command(bin, "serve", "--config", cfgPath, "--log-level", "debug", "--allow-root")
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	select {
	case s.base = <-addr:
	case err := <-s.exited:
		t.Fatalf("toposcope serve exited: %v\n%s", err, s.stderr)
	case <-time.After(2 * time.Minute):
		t.Fatalf("toposcope serve printed no address\n%s", s.stderr)
	}
	return s
}

// startSmall starts the release binary on the small-tree model in dir,
// with the read and write tokens, auth's further keys (", key: value"
// inside server.auth), the store in dir/state and the YAML sections of
// rest, and waits until it is ready. It skips only outside CI under
// -short.
func startSmall(t *testing.T, dir, auth, rest string) *serveProc {
	t.Helper()
	if testing.Short() && os.Getenv("CI") != "true" { // never skipped in CI
		t.Skip("builds and runs the binary")
	}
	bin := releasebin.Get(budget.Context(t, 15*time.Minute), t).Server
	tokens := writeFile(t, dir, "tokens", []byte("read:"+readToken+"\nwrite:"+writeToken+"\n"))
	cfgPath := writeFile(t, dir, "config.yaml", fmt.Appendf(nil, `provider: {name: sim, params: {model: small-tree}}
server: {listen: "127.0.0.1:0", auth: {tokensFile: %s%s}}
store: {path: %s}
%s`, tokens, auth, filepath.Join(dir, "state", "toposcope.db"), rest))
	svc := startService(t, bin, cfgPath)
	svc.waitFor("/readyz", func(code int, _ string) bool { return code == http.StatusOK })
	return svc
}

func (s *serveProc) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		s.t.Fatal(err)
	}
	<-s.exited
}

// callQuiet is call for a process that may be killed: a failed exchange
// is status 0, not a test failure.
func (s *serveProc) callQuiet(method, path, body string) (int, string) {
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+writeToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// call sends a request with the write token and returns status and body.
func (s *serveProc) call(method, path, body string) (int, string) {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+writeToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

// waitFor polls path until ok accepts the answer or the deadline passes.
func (s *serveProc) waitFor(path string, ok func(int, string) bool) (int, string) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body := s.call(http.MethodGet, path, "")
		if ok(code, body) {
			return code, body
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("GET %s: still %d %.300s", path, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func currentSnapshot(t *testing.T, s *serveProc) (current, pending uint64) {
	t.Helper()
	_, body := s.call(http.MethodGet, "/v1/snapshots", "")
	var v struct{ Current, Pending uint64 }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("snapshots %q: %v", body, err)
	}
	return v.Current, v.Pending
}

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Getenv("CI") != "true" { // never skipped in CI
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := releasebin.Get(budget.Context(t, 15*time.Minute), t).Server
	model := filepath.Join(dir, "model.yaml")
	writeModel(t, model, 20000)
	tokens := writeFile(t, dir, "tokens", []byte("read:"+readToken+"\nwrite:"+writeToken+"\n"))
	conf := filepath.Join(dir, "topology.conf")
	storePath := filepath.Join(dir, "state", "toposcope.db")
	cfgPath := writeFile(t, dir, "config.yaml", fmt.Appendf(nil, `provider:
  name: sim
  params:
    model: %s
engines:
  - name: slurm
    params:
      plugin: topology/tree
      output: %s
server:
  listen: 127.0.0.1:0
  maxConcurrentDiscoveries: 1
  auth:
    tokensFile: %s
discovery:
  interval: 0s
store:
  path: %s
`, model, conf, tokens, storePath))

	svc := startService(t, bin, cfgPath)
	svc.waitFor("/readyz", func(code int, _ string) bool { return code == http.StatusOK })
	// The topology becomes current just before the engines publish it, so
	// wait for the file rather than expect it at once.
	waitForFile(t, conf, "SwitchName=leaf0001")
	first, _ := currentSnapshot(t, svc)

	// Accept a batch of requests that queue behind one discovery slot,
	// then kill the process while most are still pending.
	var ids []string
	for _, plugin := range []string{"topology/tree", "topology/block"} {
		for _, version := range []string{"24.11", "25.05", "25.11"} {
			for _, header := range []bool{true, false} {
				// The provider and its model file are the operator's: the
				// request chooses only rendering options.
				body := fmt.Sprintf(`{"provider":{"name":"sim"},"engine":{"name":"slurm","params":{"plugin":%q,"slurmVersion":%q,"header":%t}}}`,
					plugin, version, header)
				code, id := svc.call(http.MethodPost, "/v1/generate", body)
				if code != http.StatusAccepted {
					t.Fatalf("generate = %d %s", code, id)
				}
				ids = append(ids, id)
			}
		}
	}
	credBody := `{"provider":{"name":"sim","params":{"model":"nvl72"},"creds":{"secretAccessKey":"` + secret + `"}},"engine":{"name":"slurm"}}`
	code, credID := svc.call(http.MethodPost, "/v1/generate", credBody)
	if code != http.StatusAccepted {
		t.Fatalf("generate with creds = %d %s", code, credID)
	}
	svc.kill()

	svc = startService(t, bin, cfgPath)
	svc.waitFor("/readyz", func(code int, _ string) bool { return code == http.StatusOK })
	t.Logf("requests pending at SIGKILL, resumed: %d of %d", strings.Count(svc.stderr.String(), "resuming request"), len(ids)+1)
	if cur, _ := currentSnapshot(t, svc); cur != first {
		t.Errorf("current snapshot after SIGKILL = %d, want %d", cur, first)
	}
	for _, id := range ids {
		code, body := svc.waitFor("/v1/topology?uid="+id, func(code int, _ string) bool { return code != http.StatusAccepted })
		if code != http.StatusOK || !strings.Contains(body, "Switch") && !strings.Contains(body, "Block") {
			t.Errorf("request %s after restart = %d %.200s", id, code, body)
		}
	}
	code, body := svc.waitFor("/v1/topology?uid="+credID, func(code int, _ string) bool { return code != http.StatusAccepted })
	if code != http.StatusOK && (code != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"interrupted"`)) {
		t.Errorf("request with credentials after restart = %d %s", code, body)
	}

	// The shrink guard refuses a smaller fabric until an operator accepts.
	writeModel(t, model, 15000)
	if code, body := svc.call(http.MethodPost, "/v1/discover", ""); code != http.StatusAccepted {
		t.Fatalf("discover = %d %s", code, body)
	}
	_, status := svc.waitFor("/v1/status", func(_ int, body string) bool { return strings.Contains(body, `"outcome":"refused"`) })
	if !strings.Contains(status, `"status":"refused"`) {
		t.Fatalf("status = %s", status)
	}
	cur, pend := currentSnapshot(t, svc)
	if cur != first || pend == 0 {
		t.Fatalf("after refusal current=%d pending=%d", cur, pend)
	}
	if code, body := svc.call(http.MethodPost, fmt.Sprintf("/v1/snapshots/%d/accept", pend), ""); code != http.StatusOK {
		t.Fatalf("accept = %d %s", code, body)
	}
	svc.kill()

	svc = startService(t, bin, cfgPath)
	if cur, pend2 := currentSnapshot(t, svc); cur != pend || pend2 != 0 {
		t.Errorf("after restart current=%d pending=%d, want the accepted %d", cur, pend2, pend)
	}
	if code, _ := svc.call(http.MethodGet, "/v1/nodes/gpu19999", ""); code != http.StatusNotFound {
		t.Errorf("a node of the refused-then-accepted shrink is still there: %d", code)
	}
	if code, _ := svc.call(http.MethodGet, "/v1/nodes/gpu00001", ""); code != http.StatusOK {
		t.Errorf("node query after restart = %d", code)
	}
	if err := svc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-svc.exited; err != nil {
		t.Errorf("graceful shutdown: %v\n%s", err, svc.stderr)
	}
	st, err := store.Open(storePath, store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Errorf("store check: %v", err)
	}
	data, err := os.ReadFile(storePath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) || strings.Contains(svc.stderr.String(), secret) {
		t.Error("the credential reached the store or the log")
	}
}

// waitForFile polls until path exists and contains want.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine did not publish %q to %s: %v", want, path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
