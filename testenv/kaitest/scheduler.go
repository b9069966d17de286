package kaitest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const stopTimeout = 10 * time.Second

// Scheduler is a running kai-scheduler process.
type Scheduler struct {
	// Pool is the node pool it schedules (see NodePoolLabel).
	Pool string
	cmd  *exec.Cmd
	out  *output
	done chan struct{}
	err  error
}

// Start runs the KAI scheduler of in against c, as the cluster admin,
// for node pool pool, with its default configuration (every plugin of
// KAI's default, topology included), leader election off and its HTTP
// servers on free loopback ports. It is stopped when the test ends.
func Start(t testing.TB, in Install, c *kubetest.Cluster, pool string) *Scheduler {
	t.Helper()
	s, err := start(t.TempDir(), in, c, pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("kai-scheduler (pool %s) output (tail):\n%s", pool, s.Tail(6000))
		}
	})
	return s
}

func start(dir string, in Install, c *kubetest.Cluster, pool string) (*Scheduler, error) {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := kubetest.WriteKubeconfig(kubeconfig, c.AdminConfig()); err != nil {
		return nil, err
	}
	ports, err := kubetest.FreePorts(2)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(in.Scheduler,
		"--partition-label-value="+pool,
		"--plugin-server-port="+strconv.Itoa(ports[0]),
		"--listen-address=127.0.0.1:"+strconv.Itoa(ports[1]),
		"--leader-elect=false",
		"--schedule-period=500ms",
		"--v=4")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, and it dies with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("kaitest: start %s: %w", in.Scheduler, err)
	}
	s := &Scheduler{Pool: pool, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// Exited reports whether the scheduler has exited, and how.
func (s *Scheduler) Exited() (bool, error) {
	select {
	case <-s.done:
		if s.err == nil {
			return true, fmt.Errorf("kai-scheduler exited with status 0")
		}
		return true, fmt.Errorf("kai-scheduler exited: %w", s.err)
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the scheduler's process group, and SIGKILL after
// stopTimeout.
func (s *Scheduler) Stop() {
	if exited, _ := s.Exited(); exited {
		return
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
}

// Logged reports whether the scheduler's output (what is kept of it)
// contains sub.
func (s *Scheduler) Logged(sub string) bool { return strings.Contains(s.out.tail(maxOutput), sub) }

// Tail returns the last n bytes of the scheduler's output.
func (s *Scheduler) Tail(n int) string { return s.out.tail(n) }

// maxOutput is how much of a scheduler's output is kept (the end of it).
const maxOutput = 4 << 20

// output collects the last maxOutput bytes of a process's output.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.buf.Len()+len(p) > maxOutput {
		keep := o.buf.Bytes()[min(o.buf.Len(), o.buf.Len()+len(p)-maxOutput/2):]
		rest := append([]byte(nil), keep...)
		o.buf.Reset()
		o.buf.Write(rest)
	}
	return o.buf.Write(p)
}

func (o *output) tail(n int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.buf.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
