package netlab

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/gosnmp/gosnmp"
)

// mgmtNet is the lab's management network: a bridge in the test's own
// namespace, on a /24 of 198.18.0.0/15 (set aside for benchmarking, so no
// real network is shadowed), with one port per switch.
type mgmtNet struct {
	bridge string
	prefix netip.Prefix
	next   int
}

// Mgmt gives node a management interface, mgmt0, on the lab's management
// network, reachable from the test's own namespace, and returns its
// address. lldpd advertises it as the node's management address.
func (l *Lab) Mgmt(node string) netip.Addr {
	l.t.Helper()
	l.Node(node)
	if l.mgmt == nil {
		l.mgmt = &mgmtNet{bridge: l.prefix + "br", prefix: l.freeSubnet(), next: 1}
		l.ip("link", "add", l.mgmt.bridge, "type", "bridge")
		l.ip("addr", "add", l.hostAddr(254).String()+"/24", "dev", l.mgmt.bridge)
		l.ip("link", "set", l.mgmt.bridge, "up")
	}
	addr := l.hostAddr(l.mgmt.next)
	l.mgmt.next++
	l.links++
	root, tmp := fmt.Sprintf("%sm%d", l.prefix, l.links), fmt.Sprintf("%sn%d", l.prefix, l.links)
	l.ip("link", "add", root, "type", "veth", "peer", "name", tmp)
	l.ip("link", "set", root, "master", l.mgmt.bridge)
	l.ip("link", "set", root, "up")
	l.ip("link", "set", tmp, "netns", l.ns(node))
	l.ip("-n", l.ns(node), "link", "set", tmp, "name", "mgmt0")
	l.ip("-n", l.ns(node), "addr", "add", addr.String()+"/24", "dev", "mgmt0")
	l.ip("-n", l.ns(node), "link", "set", "mgmt0", "up")
	return addr
}

func (l *Lab) hostAddr(n int) netip.Addr {
	b := l.mgmt.prefix.Addr().As4()
	b[3] = byte(n)
	return netip.AddrFrom4(b)
}

// freeSubnet picks a /24 of 198.18.0.0/15 that no interface here uses.
func (l *Lab) freeSubnet() netip.Prefix {
	l.t.Helper()
	out, err := exec.Command("/usr/sbin/ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		l.t.Fatalf("netlab: ip addr: %v", err)
	}
	for range 64 {
		var b [2]byte
		_, _ = rand.Read(b[:])
		third := int(b[0])
		second := 18 + int(b[1]&1)
		p := netip.MustParsePrefix(fmt.Sprintf("198.%d.%d.0/24", second, third))
		if !strings.Contains(string(out), fmt.Sprintf(" 198.%d.%d.", second, third)) {
			return p
		}
	}
	l.t.Fatal("netlab: no free /24 in 198.18.0.0/15")
	return netip.Prefix{}
}

// SNMP is how SNMPD serves a switch's LLDP-MIB.
type SNMP struct {
	// Community is the v2c read community.
	Community string
	// User, AuthPass and PrivPass, when User is set, make an SNMPv3
	// user with SHA authentication and AES privacy.
	User, AuthPass, PrivPass string
	// SNMPRec, when set, serves that saved walk instead of the switch's
	// own lldpd.
	SNMPRec string
	// Delay slows every answer of the MIB's helper.
	Delay time.Duration
}

// SNMPD starts the real snmpd in node's namespace, on addr (its
// management address) port 161, serving the LLDP-MIB: from the node's
// lldpd (or a saved walk) through lldpmib, over pass_persist. It returns
// when snmpd answers.
func (l *Lab) SNMPD(ctx context.Context, node string, addr netip.Addr, s SNMP) {
	l.t.Helper()
	helper := l.lldpmibBinary()
	dir := filepath.Join(l.dir, node+"-snmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		l.t.Fatal(err)
	}
	src := "-socket " + l.socket(node)
	if s.SNMPRec != "" {
		src = "-snmprec " + s.SNMPRec
	}
	if s.Delay > 0 {
		src += " -delay " + s.Delay.String()
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "agentAddress udp:%s:161\n", addr)
	if s.Community != "" {
		fmt.Fprintf(&conf, "rocommunity %s default .1.0.8802.1.1.2\n", s.Community)
	}
	if s.User != "" {
		fmt.Fprintf(&conf, "createUser %s SHA \"%s\" AES \"%s\"\nrouser %s priv .1.0.8802.1.1.2\n", s.User, s.AuthPass, s.PrivPass, s.User)
	}
	fmt.Fprintf(&conf, "pass_persist .1.0.8802.1.1.2 %s %s\n", helper, src)
	confFile := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(confFile, []byte(conf.String()), 0o600); err != nil {
		l.t.Fatal(err)
	}
	logf := filepath.Join(dir, "snmpd.log")
	cmd := exec.Command("/usr/sbin/ip", "netns", "exec", l.ns(node), "/usr/sbin/snmpd", "-f", "-Lf", logf, "-C", "-c", confFile, "-p", filepath.Join(dir, "pid"))
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=", "MIBDIRS="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("netlab: snmpd: %v", err)
	}
	l.daemons = append(l.daemons, cmd)
	go func() { _ = cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := &gosnmp.GoSNMP{Target: addr.String(), Port: 161, Transport: "udp", Community: s.Community, Version: gosnmp.Version2c, Timeout: 500 * time.Millisecond, Retries: 0, Context: ctx}
		if s.Community == "" {
			c.Version, c.SecurityModel, c.MsgFlags = gosnmp.Version3, gosnmp.UserSecurityModel, gosnmp.AuthPriv
			c.SecurityParameters = &gosnmp.UsmSecurityParameters{UserName: s.User, AuthenticationProtocol: gosnmp.SHA, AuthenticationPassphrase: s.AuthPass, PrivacyProtocol: gosnmp.AES, PrivacyPassphrase: s.PrivPass}
		}
		err := c.Connect()
		if err == nil {
			var r *gosnmp.SnmpPacket
			r, err = c.Get([]string{".1.0.8802.1.1.2.1.3.2.0"})
			_ = c.Conn.Close()
			if err == nil && len(r.Variables) == 1 && r.Variables[0].Type == gosnmp.OctetString {
				return
			}
		}
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(logf)
			l.t.Fatalf("netlab: snmpd in %s does not serve the LLDP-MIB: %v\n%s", node, err, data)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lldpmibBinary builds the lldpmib helper into the lab's folder, once a
// lab.
func (l *Lab) lldpmibBinary() string {
	l.t.Helper()
	bin := filepath.Join(l.dir, "lldpmib")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		l.t.Fatalf("netlab: building lldpmib needs the go command: %v", err)
	}
	_, here, _, _ := runtime.Caller(0)
	cmd := exec.Command(goBin, "build", "-o", bin, "./lldpmib")
	cmd.Dir = filepath.Dir(here)
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("netlab: go build lldpmib: %v\n%s", err, out)
	}
	return bin
}
