// Package proctest runs a test's long-lived commands in a process group
// of their own, so that stopping one stops every process it started
// (buildah's chroot helper, runuser's child), and no server outlives its
// test holding a port or a pipe.
package proctest

import (
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// waitDelay is how long Wait waits for the group after SIGTERM before it
// kills it and closes the output pipes.
const waitDelay = 10 * time.Second

// Group makes cmd (not yet started) lead a new process group: cancelling
// its context sends SIGTERM to the whole group, and Wait gives up on the
// pipes after waitDelay. Call the returned function after Wait (or
// instead of it, deferred) to SIGKILL whatever is left of the group.
func Group(cmd *exec.Cmd) (killAll func()) {
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
