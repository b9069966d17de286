//go:build !linux

package slurmtest

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to add off Linux (Slurm runs only on Linux here).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p alone.
func killGroup(p *os.Process) error { return p.Kill() }
