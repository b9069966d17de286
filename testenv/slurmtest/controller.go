package slurmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	startTimeout    = 30 * time.Second // until `scontrol ping` says UP
	reconfTimeout   = 30 * time.Second // until a reconfigured slurmctld answers again
	scontrolTimeout = 60 * time.Second // one scontrol run
	stopGrace       = 5 * time.Second  // SIGTERM to SIGKILL
	pollEvery       = 100 * time.Millisecond
	tailLines       = 40
	startAttempts   = 3 // new ports after a port clash
)

// Controller is a slurmctld started by [Start]. It is stopped by the test's cleanup.
type Controller struct {
	version Version
	root    string  // chroot root; "" when slurmctld runs on the host
	yaml    bool    // the topology is topology.yaml
	dir     confDir // slurm.conf, topology.conf, state, log
	cmd     *exec.Cmd
	done    chan struct{} // closed when slurmctld has exited
	waitErr error         // cmd.Wait's result; read only after done is closed
	once    sync.Once
}

// Start writes slurm.conf and topology.conf (o.Topology) into a fresh directory,
// starts slurmctld in the foreground as a child process on free loopback ports, and
// waits (up to 30 s, or less if ctx ends first) until `scontrol ping` says it is UP.
// ctx bounds only the start; the controller runs until the test's cleanup kills it.
//
// The directory is t.TempDir() for V2205 and a fresh folder under <chroot>/srv for
// V2411 (removed at cleanup). If slurmctld refuses the configuration it exits at
// once; Start then returns an error that contains the tail of its log, which names
// what was refused. Start also returns an error when the component is missing (call
// [Require] first to skip instead) and for topology/block on Slurm 22.05.
func Start(ctx context.Context, t testing.TB, o Options) (*Controller, error) {
	t.Helper()
	o, err := o.normalize()
	if err != nil {
		return nil, err
	}
	if err := available(o.Version); err != nil {
		return nil, fmt.Errorf("slurmtest: Slurm %s is not usable here: %w", o.Version, err)
	}
	for attempt := 1; ; attempt++ {
		c, portClash, err := start(ctx, t, o)
		if err == nil {
			return c, nil
		}
		if !portClash || attempt == startAttempts {
			return nil, err
		}
	}
}

// start makes one attempt; portClash reports that slurmctld could not bind its port
// (another process took it after freePorts released it), so a retry may work.
func start(ctx context.Context, t testing.TB, o Options) (c *Controller, portClash bool, err error) {
	c = &Controller{version: o.Version, yaml: o.Plugin == PluginYAML, done: make(chan struct{})}
	if o.Version == V2205 {
		d := t.TempDir()
		c.dir = confDir{host: d, inner: d}
	} else {
		if c.root = o.Root; c.root == "" {
			if c.root, err = chrootDir(o.Version); err != nil {
				return nil, false, err
			}
		}
		d, err := os.MkdirTemp(filepath.Join(c.root, "srv"), "slurmtest-")
		if err != nil {
			return nil, false, fmt.Errorf("slurmtest: %w", err)
		}
		t.Cleanup(func() {
			if err := os.RemoveAll(d); err != nil {
				t.Errorf("slurmtest: removing %s: %v", d, err)
			}
		})
		c.dir = confDir{host: d, inner: "/srv/" + filepath.Base(d)}
	}
	nodePorts := 0
	if o.Slurmd {
		nodePorts = len(o.Nodes)
	}
	ports, err := freePorts(2 + nodePorts)
	if err != nil {
		return nil, false, err
	}
	if err := writeConfig(c.dir, o, ports[0], ports[1], ports[2:]); err != nil {
		return nil, false, err
	}
	logf, err := os.Create(c.logPath())
	if err != nil {
		return nil, false, fmt.Errorf("slurmtest: %w", err)
	}
	// With -D, slurmctld logs to stderr; no SlurmctldLogFile is set, so this file
	// holds everything, including fatal errors printed before logging is set up.
	argv := c.command(slurmctldBin, "-D", "-f", c.dir.innerPath("slurm.conf"))
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Dir = c.dir.host
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	c.cmd.SysProcAttr = sysProcAttr()
	if err := c.cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, false, fmt.Errorf("slurmtest: starting %s: %w", strings.Join(argv, " "), err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		_ = logf.Close()
		close(c.done)
	}()
	t.Cleanup(c.stop)

	if err := c.waitUp(ctx); err != nil {
		c.stop()
		log := c.Log()
		portClash = strings.Contains(log, "Address already in use") ||
			strings.Contains(log, "Unable to listen to file descriptors")
		return nil, portClash, fmt.Errorf("slurmtest: slurmctld %s did not come up: %w\n%s",
			o.Version, err, c.logTail(log, "slurmctld log"))
	}
	if o.Slurmd {
		if err := c.startSlurmds(ctx, t, o.Nodes); err != nil {
			c.stop()
			return nil, false, err
		}
	}
	return c, false, nil
}

// waitUp polls `scontrol ping` until it says UP, slurmctld exits, or time runs out.
func (c *Controller) waitUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	last := ""
	for {
		if c.hasExited() {
			return fmt.Errorf("slurmctld exited (%s) before answering; its log says why", exitText(c.waitErr))
		}
		up, out := c.ping(ctx)
		if up {
			return nil
		}
		last = out
		select {
		case <-c.done:
		case <-ctx.Done():
			return fmt.Errorf("scontrol ping did not say UP (%w); last answer: %q", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// ping runs `scontrol ping` and reports whether it says the controller is UP.
func (c *Controller) ping(ctx context.Context) (bool, string) {
	out, errOut, err := c.scontrol(ctx, "ping")
	return err == nil && strings.Contains(out, " is UP"), strings.TrimSpace(out + errOut)
}

// stop kills slurmctld by its PID (SIGTERM, then SIGKILL to its process group, which
// also holds its slurmscriptd child) and waits for it. It is safe to call twice.
func (c *Controller) stop() {
	c.once.Do(func() {
		if c.hasExited() {
			return
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(stopGrace):
			_ = killGroup(c.cmd.Process)
			<-c.done
		}
	})
}

// exitText describes a process result; nil means a clean exit.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func (c *Controller) hasExited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// exitedErr is non-nil once slurmctld has exited.
func (c *Controller) exitedErr() error {
	if !c.hasExited() {
		return nil
	}
	return fmt.Errorf("slurmtest: slurmctld has exited (%s)\n%s", exitText(c.waitErr), c.logTail(c.Log(), "slurmctld log"))
}

// ShowTopology returns the output of `scontrol show topology` (with a name, of
// that topology of topology.yaml: `scontrol show topology NAME`). scontrol exits 0
// even when it cannot reach slurmctld, so any stderr output is treated as an error
// too. Parse the result with [ParseTopology].
func (c *Controller) ShowTopology(ctx context.Context, name ...string) (string, error) {
	if err := c.exitedErr(); err != nil {
		return "", err
	}
	out, errOut, err := c.scontrol(ctx, append([]string{"show", "topology"}, name...)...)
	if err != nil || strings.TrimSpace(errOut) != "" {
		if xerr := c.exitedErr(); xerr != nil {
			return "", fmt.Errorf("slurmtest: scontrol show topology: %s: %w", strings.TrimSpace(errOut), xerr)
		}
		return "", fmt.Errorf("slurmtest: scontrol show topology (%s): %s", exitText(err), strings.TrimSpace(errOut+out))
	}
	return out, nil
}

// Reconfigure runs `scontrol reconfigure` so slurmctld rereads slurm.conf and
// topology.conf, and waits until it answers again. It returns an error, with the
// slurmctld log written since the request, when scontrol fails or slurmctld exits.
//
// In the foreground mode used here, both 22.05 and 24.11 exit (fatal) when the new
// topology.conf is refused: 22.05 reconfigures in place and scontrol fails with "Zero
// Bytes were transmitted or received"; 24.11 re-executes itself in place, so scontrol
// exits 0 and only the daemon's exit shows the refusal. (A daemonized or systemd-run
// 24.11 instead keeps the old configuration and scontrol exits 1.) After an error the
// controller is usually gone; start a new one.
func (c *Controller) Reconfigure(ctx context.Context) error {
	if err := c.exitedErr(); err != nil {
		return err
	}
	mark := c.logSize()
	out, errOut, err := c.scontrol(ctx, "reconfigure")
	if err != nil || strings.TrimSpace(errOut) != "" {
		c.waitExit(ctx, time.Second) // let a dying slurmctld finish its log
		return fmt.Errorf("slurmtest: scontrol reconfigure (%s): %s\n%s", exitText(err),
			strings.TrimSpace(out+errOut), c.logTail(c.logSince(mark), "slurmctld log since the reconfigure"))
	}
	ctx, cancel := context.WithTimeout(ctx, reconfTimeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if c.hasExited() {
			return fmt.Errorf("slurmtest: slurmctld exited (%s) after scontrol reconfigure: it refused the new configuration\n%s",
				exitText(c.waitErr), c.logTail(c.logSince(mark), "slurmctld log since the reconfigure"))
		}
		// 22.05 has applied the file when scontrol returns; 24.11 logs this line
		// again once its re-executed process has loaded the new files.
		if c.version == V2205 || strings.Contains(c.logSince(mark), "Running as primary controller") {
			if up, _ := c.ping(ctx); up {
				return nil
			}
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return fmt.Errorf("slurmtest: slurmctld did not answer after scontrol reconfigure (%w)\n%s",
				ctx.Err(), c.logTail(c.logSince(mark), "slurmctld log since the reconfigure"))
		case <-tick.C:
		}
	}
}

// waitExit waits up to d for slurmctld to exit.
func (c *Controller) waitExit(ctx context.Context, d time.Duration) {
	select {
	case <-c.done:
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// ScontrolArgv returns the full argv that runs scontrol, with args, against this
// controller: "/usr/bin/env -i PATH=... SLURM_CONF=<conf> /usr/bin/scontrol args..."
// for V2205; for V2411 the same behind "/usr/sbin/chroot <root>", itself behind an
// unshare(1) and sh(1) prefix that mounts the controller's private /run (see the
// package doc). Give it to code under test that must run a reconfigure command; it
// needs no particular environment, but V2411 needs root.
func (c *Controller) ScontrolArgv(args ...string) []string {
	return c.command(scontrolBin, args...)
}

// mountRun is the shell script that bind-mounts a controller's private run folder
// ($1) on the chroot's /run ($2/run) and then execs the rest of its arguments.
const mountRun = mountBin + ` --bind "$1" "$2/run" && shift 2 && exec "$@"`

// command builds the argv that runs bin with a clean environment that points
// SLURM_CONF at this controller. Every program in the chain (unshare, sh, chroot,
// env) execs in place, so the started process's PID is bin's own.
//
// For V2411 it runs in a new mount namespace whose chroot /run is this controller's
// own <dir>/run: Slurm 24.11 clients (scontrol) authenticate through the unix socket
// /run/slurmctld/sack.socket that slurmctld creates, and with a shared /run every
// new slurmctld would take that socket over from the others, so scontrol would get
// tokens signed with another controller's slurm.key ("Protocol authentication error").
func (c *Controller) command(bin string, args ...string) []string {
	var argv []string
	if c.root != "" {
		argv = append(argv, unshareBin, "--mount", "--propagation", "private", "--",
			shBin, "-c", mountRun, "slurmtest", c.dir.hostPath("run"), c.root,
			chrootBin, c.root)
	}
	argv = append(argv, envBin, "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"SLURM_CONF="+c.dir.innerPath("slurm.conf"), bin)
	return append(argv, args...)
}

// scontrol runs scontrol args and returns its stdout and stderr.
func (c *Controller) scontrol(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	return c.Run(ctx, scontrolBin, args...)
}

// TopologyPath returns the host path of this controller's topology.conf, so a test
// can rewrite it and call [Controller.Reconfigure].
func (c *Controller) TopologyPath() string {
	if c.yaml {
		return c.dir.hostPath("topology.yaml")
	}
	return c.dir.hostPath("topology.conf")
}

// Log returns everything slurmctld has logged so far (its stdout and stderr).
func (c *Controller) Log() string {
	b, err := os.ReadFile(c.logPath())
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", c.logPath(), err)
	}
	return string(b)
}

func (c *Controller) logPath() string { return c.dir.hostPath("slurmctld.log") }

func (c *Controller) logSize() int64 {
	fi, err := os.Stat(c.logPath())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logSince returns the log written after byte offset mark.
func (c *Controller) logSince(mark int64) string {
	log := c.Log()
	if int64(len(log)) < mark {
		return log
	}
	return log[mark:]
}

// logTail formats the last lines of log under a heading that names the log file.
func (c *Controller) logTail(log, what string) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return fmt.Sprintf("--- %s (%s), last %d lines ---\n%s", what, c.logPath(), len(lines), strings.Join(lines, "\n"))
}
