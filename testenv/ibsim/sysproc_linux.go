//go:build linux

package ibsim

import (
	"errors"
	"syscall"
)

// sysProcAttr has the kernel kill ibsim if the test process dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// killPID sends SIGKILL to the process.
func killPID(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return err
	}
	return nil
}
