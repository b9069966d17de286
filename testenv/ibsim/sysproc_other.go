//go:build !linux

package ibsim

import (
	"os"
	"syscall"
)

// sysProcAttr sets nothing outside Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killPID kills the process.
func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
