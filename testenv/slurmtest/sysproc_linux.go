//go:build linux

package slurmtest

import (
	"os"
	"syscall"
)

// sysProcAttr puts slurmctld in its own process group (so its slurmscriptd child can
// be killed with it) and has the kernel kill it if the test process dies first (for
// example on a `go test -timeout` panic, when no cleanup runs). Pdeathsig fires when
// the OS thread that started the child exits, which Go does only for goroutines that
// exit while locked to their thread.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to p's process group, which sysProcAttr made p's own.
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}
