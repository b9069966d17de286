// Package ibsim runs the InfiniBand fabric simulator ibsim (package
// ibsim-utils) for tests, so that the real ibnetdiscover (package
// infiniband-diags) can be run against any fabric through ibsim-run, which
// LD_PRELOADs libumad2sim.so.
//
// A test calls [Require] (it skips when the tools are missing, and fails
// instead when CI=true), builds a [Fabric] — usually with [Expand] from a
// cluster model — and calls [Start]. Every simulator listens on its own
// abstract Unix sockets, named by IBSIM_SOCKNAME, so any number of them can
// run at once in parallel tests; [Sim.Command] carries that name to
// ibsim-run. The simulator is a child process stopped by PID when the test
// ends.
//
// Quirks of ibsim 0.10 and ibnetdiscover 44 (Debian bookworm):
//
//   - ibsim-run ibnetdiscover blocks forever when no simulator listens on
//     the socket name: always run it under a timeout.
//   - ibsim-run appends the literal text "sim_so" (not the library path) to
//     an LD_PRELOAD that is already set; [Sim.Command] unsets LD_PRELOAD.
//   - Without a subnet manager every LID is 0 unless the net file sets one.
//   - Only SDR, DDR and QDR are simulated (4x: 10, 20, 40 Gb/s).
//   - Node IDs and descriptions are limited to 64 bytes, lines to 256.
//   - ibnetdiscover is attached to the first node of the net file unless
//     SIM_HOST names another one; [Sim.Command] attaches it to the first
//     HCA, as on a real host.
package ibsim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// installHint ends every "tools missing" message.
const installHint = "run hack/install-ibsim.sh (as root) to install ibsim-utils and infiniband-diags"

// readyLine is what ibsim prints once the fabric is up.
const readyLine = "Network simulator ready."

// startTimeout bounds how long Start waits for readyLine.
const startTimeout = 30 * time.Second

// Require skips the test when ibsim, ibsim-run or ibnetdiscover is
// missing, with a message that says to run hack/install-ibsim.sh. When the
// environment variable CI is "true" it fails the test instead.
func Require(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		msg := fmt.Sprintf("ibsim: the InfiniBand simulator is not usable here: %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true, so this is a failure, not a skip)")
		}
		t.Skip(msg)
	}
}

// Available reports why the simulator cannot run here, or nil.
func Available() error {
	for _, bin := range []string{"ibsim", "ibsim-run", "ibnetdiscover"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s is not on PATH (%w); %s", bin, err, installHint)
		}
	}
	return nil
}

// Sim is a running simulator.
type Sim struct {
	cmd    *exec.Cmd
	sock   string
	attach string
	dir    string
	mu     sync.Mutex
	log    strings.Builder
	done   chan struct{}
	waited error
}

// Start writes f's net file into a temporary folder and starts ibsim on it
// with its own socket name. It fails the test when ibsim does not report
// the fabric ready within 30 s, and stops the simulator when the test ends.
func Start(t testing.TB, f *Fabric) *Sim {
	t.Helper()
	s, err := start(t.TempDir(), f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("ibsim: %v", err)
		}
	})
	return s
}

func start(dir string, f *Fabric) (*Sim, error) {
	net, err := f.NetFile()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "net")
	if err := os.WriteFile(path, net, 0o644); err != nil {
		return nil, fmt.Errorf("ibsim: %w", err)
	}
	nodes, switches, ports := f.size()
	s := &Sim{sock: fmt.Sprintf("toposcope-%d-%x", os.Getpid(), rand.Uint64()), dir: dir, done: make(chan struct{})}
	if len(f.HCAs) > 0 {
		s.attach = f.HCAs[0].ID
	}
	s.cmd = exec.Command("ibsim", "-n", "-s",
		"-N", strconv.Itoa(nodes+16), "-S", strconv.Itoa(switches+16), "-P", strconv.Itoa(ports+64), path)
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), "IBSIM_SOCKNAME="+s.sock)
	s.cmd.SysProcAttr = sysProcAttr()
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("ibsim: %w", err)
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("ibsim: start: %w", err)
	}
	ready := make(chan struct{})
	go s.read(out, ready)
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		why := s.waited
		if why == nil {
			why = errors.New("exit status 0")
		}
		return nil, fmt.Errorf("ibsim exited before the fabric was ready (%w); net file %s; output:\n%s", why, path, s.Log())
	case <-time.After(startTimeout):
		_ = s.Stop()
		return nil, fmt.Errorf("ibsim did not report %q within %v; output:\n%s", readyLine, startTimeout, s.Log())
	}
}

// read copies ibsim's output into the log, closes ready at readyLine and
// done when the process has exited.
func (s *Sim) read(out interface{ Read([]byte) (int, error) }, ready chan struct{}) {
	sc := bufio.NewScanner(out)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		s.mu.Lock()
		s.log.WriteString(line + "\n")
		s.mu.Unlock()
		if !signalled && strings.Contains(line, readyLine) {
			signalled = true
			close(ready)
		}
	}
	s.waited = s.cmd.Wait()
	close(s.done)
}

// Log returns what ibsim printed so far.
func (s *Sim) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// PID returns the simulator's process ID.
func (s *Sim) PID() int { return s.cmd.Process.Pid }

// SocketName returns the simulator's IBSIM_SOCKNAME.
func (s *Sim) SocketName() string { return s.sock }

// Command returns the argv that runs the real ibnetdiscover against this
// simulator: env -u LD_PRELOAD IBSIM_SOCKNAME=… SIM_HOST=… ibsim-run
// ibnetdiscover.
func (s *Sim) Command() []string {
	argv := []string{"env", "-u", "LD_PRELOAD", "IBSIM_SOCKNAME=" + s.sock}
	if s.attach != "" {
		argv = append(argv, "SIM_HOST="+s.attach)
	}
	return append(argv, "ibsim-run", "ibnetdiscover")
}

// Discover runs Command and returns ibnetdiscover's output.
func (s *Sim) Discover(ctx context.Context) ([]byte, error) {
	argv := s.Command()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = s.dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Stop kills the simulator by PID and waits for it to exit. It may be
// called more than once.
func (s *Sim) Stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	if err := killPID(s.cmd.Process.Pid); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill pid %d: %w", s.cmd.Process.Pid, err)
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("pid %d did not exit within 10s of SIGKILL", s.cmd.Process.Pid)
	}
}
