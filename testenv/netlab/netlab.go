// Package netlab builds small networks of Linux network namespaces for
// tests: a namespace per host and per switch, joined by veth pairs, with
// the real lldpd running in each, so that a host's lldpcli names the
// switch and port its NIC is cabled to. It needs root and iproute2 and
// lldpd (Debian packages iproute2, lldpd); namespaces and daemons go
// with the test.
package netlab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const installHint = "run hack/install-netlab.sh (packages iproute2, lldpd, snmpd; as root)"

// Lab is one test's namespaces.
type Lab struct {
	t      testing.TB
	prefix string
	dir    string
	nodes  map[string]bool
	links  int
	lldpd  map[string]*exec.Cmd
	// mgmt is the management network, once made (Mgmt).
	mgmt *mgmtNet
	// daemons are the other processes started (snmpd), by group.
	daemons []*exec.Cmd
}

// Require skips the test when the lab cannot be built here (not root, no
// ip or lldpd), or fails it when CI is "true".
func Require(t testing.TB) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, bin := range []string{"/usr/sbin/ip", "/usr/sbin/lldpd", "/usr/sbin/lldpcli", "/usr/sbin/snmpd"} {
		if _, err := os.Stat(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("netlab: %s missing; %s", strings.Join(missing, ", "), installHint)
	if os.Getenv("CI") != "true" {
		t.Skip(msg)
	}
	t.Fatal(msg + " (CI=true, so this is a failure, not a skip)")
}

// New returns an empty lab; everything in it is removed with the test.
func New(t testing.TB) *Lab {
	t.Helper()
	Require(t)
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	// lldpd's helper drops to its own user: the folder of its sockets
	// must let it in.
	dir, err := os.MkdirTemp("", "netlab-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l := &Lab{t: t, prefix: "nl" + hex.EncodeToString(b[:]), dir: dir, nodes: map[string]bool{}, lldpd: map[string]*exec.Cmd{}}
	t.Cleanup(l.close)
	return l
}

// ns is the namespace of node name.
func (l *Lab) ns(name string) string { return l.prefix + "-" + name }

// ip runs ip with args, failing the test on error.
func (l *Lab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("/usr/sbin/ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("netlab: ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Node makes the namespace of a host or switch, with its loopback up.
func (l *Lab) Node(name string) {
	l.t.Helper()
	if l.nodes[name] {
		return
	}
	l.ip("netns", "add", l.ns(name))
	l.nodes[name] = true
	l.ip("-n", l.ns(name), "link", "set", "lo", "up")
}

// Link cables node a's interface aIf to node b's interface bIf (a veth
// pair), both up; the nodes are made when new.
func (l *Lab) Link(a, aIf, b, bIf string) {
	l.t.Helper()
	l.Node(a)
	l.Node(b)
	l.links++
	ta, tb := fmt.Sprintf("%sa%d", l.prefix, l.links), fmt.Sprintf("%sb%d", l.prefix, l.links)
	l.ip("link", "add", ta, "type", "veth", "peer", "name", tb)
	for _, e := range []struct{ tmp, node, name string }{{ta, a, aIf}, {tb, b, bIf}} {
		l.ip("link", "set", e.tmp, "netns", l.ns(e.node))
		l.ip("-n", l.ns(e.node), "link", "set", e.tmp, "name", e.name)
		l.ip("-n", l.ns(e.node), "link", "set", e.name, "up")
	}
}

// socket is node's lldpd control socket.
func (l *Lab) socket(node string) string { return filepath.Join(l.dir, node+".ctl") }

// LLDPD starts lldpd in node's namespace on every interface, naming the
// system hostname, and has it send at once. Its capabilities are the
// kernel's (a host: station).
func (l *Lab) LLDPD(ctx context.Context, node, hostname string) {
	l.t.Helper()
	l.startLLDPD(ctx, node, hostname, "")
}

// SwitchLLDPD is LLDPD for a switch: it says it is a bridge and a router,
// as a data center switch's LLDP does.
func (l *Lab) SwitchLLDPD(ctx context.Context, node, hostname string) {
	l.t.Helper()
	l.startLLDPD(ctx, node, hostname, "configure system capabilities enabled bridge,router")
}

func (l *Lab) startLLDPD(ctx context.Context, node, hostname, configure string) {
	l.t.Helper()
	l.Node(node)
	logf, err := os.Create(filepath.Join(l.dir, node+".log"))
	if err != nil {
		l.t.Fatal(err)
	}
	// lldpd configures itself at start by running lldpcli (-L): this one
	// names the system before lldpd sends its first frame, then resumes.
	script := filepath.Join(l.dir, node+"-lldpcli.sh")
	body := fmt.Sprintf("#!/bin/sh\n/usr/sbin/lldpcli -u %[1]s configure system hostname %[2]s && exec /usr/sbin/lldpcli -u %[1]s resume\n", l.socket(node), hostname)
	if configure != "" {
		body = fmt.Sprintf("#!/bin/sh\n/usr/sbin/lldpcli -u %[1]s configure system hostname %[2]s && /usr/sbin/lldpcli -u %[1]s %[3]s && exec /usr/sbin/lldpcli -u %[1]s resume\n", l.socket(node), hostname, configure)
	}
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		l.t.Fatal(err)
	}
	cmd := exec.Command("/usr/sbin/ip", "netns", "exec", l.ns(node), "/usr/sbin/lldpd", "-d", "-u", l.socket(node), "-M", "4", "-I", "*", "-L", script)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("netlab: lldpd: %v", err)
	}
	l.lldpd[node] = cmd
	go func() { _ = cmd.Wait(); _ = logf.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := l.LLDPCLI(ctx, node, "show", "configuration")
		if err == nil && strings.Contains(string(out), "Override system name with: "+hostname+"\n") {
			break
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("netlab: lldpd in %s did not start: %v\n%s", node, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, args := range [][]string{{"resume"}, {"update"}} { // running, and sending now rather than in 30 s
		if out, err := l.LLDPCLI(ctx, node, args...); err != nil {
			l.t.Fatalf("netlab: lldpcli %s in %s: %v\n%s", args[0], node, err, out)
		}
	}
}

// LLDPCLI runs lldpcli against node's lldpd and returns its output.
func (l *Lab) LLDPCLI(ctx context.Context, node string, args ...string) ([]byte, error) {
	argv := append([]string{"netns", "exec", l.ns(node), "/usr/sbin/lldpcli", "-u", l.socket(node)}, args...)
	out, err := exec.CommandContext(ctx, "/usr/sbin/ip", argv...).Output()
	if err != nil {
		return out, fmt.Errorf("lldpcli %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// Command is the argv that runs lldpcli in node's namespace against its
// lldpd, with args: what a node agent there would run.
func (l *Lab) Command(node string, args ...string) []string {
	return append([]string{"/usr/sbin/ip", "netns", "exec", l.ns(node), "/usr/sbin/lldpcli", "-u", l.socket(node)}, args...)
}

// In runs fn on an OS thread of its own inside node's network namespace
// (the thread ends with fn, still in it, so no other goroutine ever runs
// there), and waits for it; the error is entering the namespace's.
func (l *Lab) In(node string, fn func()) error {
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread is discarded with the goroutine
		f, ferr := os.Open(filepath.Join("/var/run/netns", l.ns(node)))
		if ferr != nil {
			err = ferr
			return
		}
		defer func() { _ = f.Close() }()
		if err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			return
		}
		fn()
	}()
	<-done
	if err != nil {
		return fmt.Errorf("netlab: enter %s: %w", node, err)
	}
	return nil
}

// close stops every lldpd and removes the namespaces and the folder.
func (l *Lab) close() {
	for _, cmd := range l.lldpd {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
	}
	for _, cmd := range l.daemons {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
	}
	for node := range l.nodes {
		_ = exec.Command("/usr/sbin/ip", "netns", "del", l.ns(node)).Run()
	}
	if l.mgmt != nil {
		_ = exec.Command("/usr/sbin/ip", "link", "del", l.mgmt.bridge).Run()
	}
	_ = os.RemoveAll(l.dir)
}
