// Package proctest runs a test's long-lived commands in a process group
// of their own, so that stopping one stops every process it started
// (buildah's chroot helper, runuser's child), and no server outlives its
// test holding a port or a pipe.
package proctest

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// waitDelay is how long Wait waits for the group after SIGTERM before it
// kills it and closes the output pipes.
const waitDelay = 10 * time.Second

// Start runs argv in a new process group with its output collected, and
// stops the whole group when the test ends: SIGTERM (through ctx's
// cancellation), a wait of at most waitDelay, then SIGKILL for whatever
// is left, so that a program that forks (runuser, buildah run) leaves
// nothing behind.
func Start(ctx context.Context, t testing.TB, argv ...string) *Output {
	t.Helper()
	ctx, stop := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out := &Output{}
	cmd.Stdout, cmd.Stderr = out, out
	killAll := group(cmd)
	if err := cmd.Start(); err != nil {
		stop()
		t.Fatalf("start %s: %v", argv[0], err)
	}
	t.Cleanup(func() {
		stop()
		_ = cmd.Wait()
		killAll()
	})
	return out
}

// group makes cmd (not yet started) lead a new process group: cancelling
// its context sends SIGTERM to the whole group, and Wait gives up on the
// pipes after waitDelay. The returned function, called after Wait,
// SIGKILLs whatever is left of the group.
func group(cmd *exec.Cmd) (killAll func()) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = waitDelay
	return func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

// Output collects what a process (or a goroutine running a server)
// writes, safe to read while it still writes.
type Output struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
