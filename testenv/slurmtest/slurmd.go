package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	slurmdBin     = "/usr/sbin/slurmd"
	slurmdTimeout = 30 * time.Second // until every node is idle
)

// writeSlurmdConfig adds what running jobs needs to slurm.conf (b): a port per node,
// so that one slurmd per node shares the loopback address, per-node spool and pid
// files, and gres/gpu backed by empty files (Slurm drops a GPU without a File; with
// task/none nothing opens them). config_overrides makes slurmd report the
// configured CPUs and GPUs instead of the machine's.
func writeSlurmdConfig(b *strings.Builder, d confDir, o Options, ports []int) error {
	b.WriteString("SlurmdParameters=config_overrides\nMinJobAge=300\nSelectTypeParameters=CR_Core\n")
	if o.GPUs > 0 {
		b.WriteString("GresTypes=gpu\n")
	}
	var gres strings.Builder
	for i, n := range o.Nodes {
		line := fmt.Sprintf("NodeName=%s NodeAddr=127.0.0.1 Port=%d CPUs=8 State=UNKNOWN", n, ports[i])
		if o.GPUs > 0 {
			line += fmt.Sprintf(" Gres=gpu:%d", o.GPUs)
			dev := d.hostPath(filepath.Join("dev", n))
			if err := os.MkdirAll(dev, 0o755); err != nil {
				return fmt.Errorf("slurmtest: %w", err)
			}
			for g := range o.GPUs {
				if err := os.WriteFile(filepath.Join(dev, fmt.Sprintf("gpu%d", g)), nil, 0o644); err != nil {
					return fmt.Errorf("slurmtest: %w", err)
				}
			}
			fmt.Fprintf(&gres, "NodeName=%s Name=gpu File=%s/gpu[0-%d]\n", n, d.innerPath("dev/"+n), o.GPUs-1)
		}
		b.WriteString(line + "\n")
		if err := os.MkdirAll(d.hostPath(filepath.Join("spool", n)), 0o755); err != nil {
			return fmt.Errorf("slurmtest: %w", err)
		}
	}
	if err := os.WriteFile(d.hostPath("gres.conf"), []byte(gres.String()), 0o644); err != nil {
		return fmt.Errorf("slurmtest: %w", err)
	}
	return nil
}

// startSlurmds starts `slurmd -D -N node` for every node and waits until
// slurmctld has every node idle. Each slurmd (and the slurmstepd of its jobs) is
// killed, by process group, at the test's cleanup.
func (c *Controller) startSlurmds(ctx context.Context, t testing.TB, nodes []string) error {
	for _, n := range nodes {
		logf, err := os.Create(c.dir.hostPath("slurmd-" + n + ".log"))
		if err != nil {
			return fmt.Errorf("slurmtest: %w", err)
		}
		argv := c.command(slurmdBin, "-D", "-N", n, "-f", c.dir.innerPath("slurm.conf"))
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = c.dir.host
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = sysProcAttr()
		if err := cmd.Start(); err != nil {
			_ = logf.Close()
			return fmt.Errorf("slurmtest: starting slurmd for %s: %w", n, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); _ = logf.Close(); close(done) }()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(stopGrace):
			}
			_ = killGroup(cmd.Process) // its jobs' slurmstepd and scripts too
			<-done
		})
	}
	// Cleanups run last-registered first: this one, before the slurmds are killed.
	// slurmstepd leaves slurmd's process group, so jobs are cancelled through
	// slurmctld and the test waits (briefly) until none holds a node.
	t.Cleanup(func() { c.cancelJobs() })
	ctx, cancel := context.WithTimeout(ctx, slurmdTimeout)
	defer cancel()
	want := strings.Repeat("idle\n", len(nodes))
	last := ""
	for {
		out, errOut, err := c.Run(ctx, "/usr/bin/sinfo", "-h", "-N", "-o", "%t")
		if err == nil && out == want {
			return nil
		}
		last = strings.TrimSpace(out + errOut)
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(c.dir.hostPath("slurmd-" + nodes[0] + ".log"))
			return fmt.Errorf("slurmtest: the nodes did not all become idle (%w); sinfo says %q\n%s\n%s",
				ctx.Err(), last, c.logTail(c.Log(), "slurmctld log"), c.logTail(string(b), "slurmd log of "+nodes[0]))
		case <-time.After(pollEvery):
		}
	}
}

// Argv returns the argv that runs the Slurm client bin (an absolute path such as
// /usr/bin/squeue) against this controller, for code under test that runs it.
func (c *Controller) Argv(bin string, args ...string) []string { return c.command(bin, args...) }

// Run runs the Slurm client bin with args against this controller and returns its
// stdout and stderr.
func (c *Controller) Run(ctx context.Context, bin string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, scontrolTimeout)
	defer cancel()
	argv := c.command(bin, args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err = cmd.Run()
	return so.String(), se.String(), err
}

// cancelJobs cancels every job (all steps, the batch shell included) and waits up to
// stopGrace until squeue lists none running or completing.
func (c *Controller) cancelJobs() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*stopGrace)
	defer cancel()
	_, _, _ = c.Run(ctx, "/usr/bin/scancel", "--full", "--partition=all")
	deadline := time.Now().Add(stopGrace)
	for time.Now().Before(deadline) {
		out, _, err := c.Run(ctx, "/usr/bin/squeue", "-h", "-t", "running,completing,suspended", "-o", "%i")
		if err != nil || strings.TrimSpace(out) == "" {
			return
		}
		time.Sleep(pollEvery)
	}
}
