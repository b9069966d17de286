package slurmtest

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Options describe the controller that [Start] runs.
type Options struct {
	// Version is the Slurm series to run: V2205, V2411 or V2605.
	Version Version
	// Plugin is the TopologyPlugin: PluginTree (the default when empty) or PluginBlock;
	// or PluginYAML (V2605 only): Topology is then topology.yaml. Slurm 22.05 has no
	// topology/block.
	Plugin string
	// Nodes are the node names defined in slurm.conf, one NodeName line each, all with
	// NodeAddr=127.0.0.1 and CPUs=1. Names are plain hostnames (letters, digits, '-',
	// '_', '.'); at least one is needed. A few thousand are fine.
	Nodes []string
	// Topology is the content of the topology.conf written beside slurm.conf.
	Topology string
	// Slurmd starts one slurmd per node (each on its own loopback port), so that
	// jobs run; only V2205 (the chroot has no slurmd). Nodes then have 8 CPUs.
	Slurmd bool
	// GPUs per node, as gres/gpu backed by empty files (with Slurmd).
	GPUs int
	// Root is the chroot to run V2411 in instead of the cached one: a
	// copy of it (see [Chroot]) into which a test installed something.
	Root string
	// Partitions are more partitions beside "all" (every node, the default).
	Partitions []Partition
	// DBD, when set, is the slurmdbd (see [StartDBD]) the controller keeps
	// accounts in, with multifactor priority, so that sshare shows fair
	// share; only V2205.
	DBD *DBD
	// JWT turns on Slurm's JSON Web Token authentication beside the
	// normal one (AuthAltTypes=auth/jwt with a fresh HS256 key), so that
	// [Controller.Token] issues tokens and [Controller.StartRESTD] runs a
	// slurmrestd that accepts them; only V2205 (the chroots have no
	// slurmrestd).
	JWT bool
}

// Partition is one PartitionName line.
type Partition struct {
	// Name and Nodes (a hostlist) of the partition.
	Name, Nodes string
	// Topology is the topology.yaml topology it uses (26.05); empty: the
	// cluster default.
	Topology string
}

// normalize checks o and fills in defaults.
func (o Options) normalize() (Options, error) {
	switch o.Version {
	case V2205, V2411, V2605:
	default:
		return o, fmt.Errorf("slurmtest: unknown Slurm version %q (want one of %v)", o.Version, versions)
	}
	if o.Plugin == "" {
		o.Plugin = PluginTree
	}
	switch o.Plugin {
	case PluginTree:
	case PluginBlock:
		if o.Version == V2205 {
			return o, fmt.Errorf("slurmtest: Slurm 22.05 has no %s plugin (it came in 23.11); use V2411", PluginBlock)
		}
	case PluginYAML:
		if o.Version != V2605 {
			return o, fmt.Errorf("slurmtest: topology.yaml is read from Slurm 25.05 on; use V2605")
		}
	default:
		return o, fmt.Errorf("slurmtest: unsupported topology plugin %q (want %q, %q or %q)", o.Plugin, PluginTree, PluginBlock, PluginYAML)
	}
	for _, p := range o.Partitions {
		if !plainHostname(p.Name) || p.Name == "all" || p.Nodes == "" || strings.ContainsAny(p.Nodes+p.Topology, " \n") {
			return o, fmt.Errorf("slurmtest: bad partition %+v", p)
		}
		if p.Topology != "" && o.Version != V2605 {
			return o, fmt.Errorf("slurmtest: a partition's Topology= needs Slurm 25.05 or later; use V2605")
		}
	}
	if o.Root != "" && o.Version != V2411 {
		return o, fmt.Errorf("slurmtest: Root is a chroot for %s only", V2411)
	}
	if o.DBD != nil && o.Version != V2205 {
		return o, fmt.Errorf("slurmtest: slurmdbd runs only with %s", V2205)
	}
	if o.JWT && o.Version != V2205 {
		return o, fmt.Errorf("slurmtest: JWT and slurmrestd run only with %s", V2205)
	}
	if o.Slurmd && o.Version != V2205 {
		return o, fmt.Errorf("slurmtest: slurmd runs only with %s (the %s chroot has none)", V2205, o.Version)
	}
	if o.GPUs < 0 || o.GPUs > 0 && !o.Slurmd {
		return o, fmt.Errorf("slurmtest: GPUs need Slurmd and must not be negative, got %d", o.GPUs)
	}
	if len(o.Nodes) == 0 {
		return o, fmt.Errorf("slurmtest: Options.Nodes is empty; slurm.conf needs at least one node")
	}
	seen := make(map[string]bool, len(o.Nodes))
	for _, n := range o.Nodes {
		if !plainHostname(n) {
			return o, fmt.Errorf("slurmtest: node name %q is not a plain hostname", n)
		}
		if seen[n] {
			return o, fmt.Errorf("slurmtest: node %q is listed twice", n)
		}
		seen[n] = true
	}
	return o, nil
}

// plainHostname reports whether s is usable verbatim as a NodeName.
func plainHostname(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

// confDir is where one controller's files live: host is the host path, inner is the
// same folder as slurmctld sees it (different only inside the chroot).
type confDir struct {
	host, inner string
}

func (d confDir) hostPath(name string) string  { return filepath.Join(d.host, name) }
func (d confDir) innerPath(name string) string { return path.Join(d.inner, name) }

// writeConfig writes slurm.conf, topology.conf, the state and spool folders and, for
// auth/slurm, slurm.key into d.
func writeConfig(d confDir, o Options, ctldPort, slurmdPort int, nodePorts []int) error {
	for _, sub := range []string{"state", "spool", "run"} {
		if err := os.Mkdir(d.hostPath(sub), 0o755); err != nil {
			return fmt.Errorf("slurmtest: %w", err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# slurm.conf written by testenv/slurmtest for Slurm %s\n", o.Version)
	fmt.Fprintf(&b, "ClusterName=%s\n", dbdClusterKey)
	b.WriteString("SlurmctldHost=localhost(127.0.0.1)\n")
	fmt.Fprintf(&b, "SlurmctldPort=%d\nSlurmdPort=%d\n", ctldPort, slurmdPort)
	if o.Version == V2205 {
		b.WriteString("AuthType=auth/munge\n")
	} else {
		// auth/slurm (23.11+) needs no munged; it reads slurm.key beside slurm.conf.
		b.WriteString("AuthType=auth/slurm\nCredType=cred/slurm\n")
	}
	fmt.Fprintf(&b, "StateSaveLocation=%s\n", d.innerPath("state"))
	perNode := "" // one slurmd per node needs its own spool folder and pid file
	if o.Slurmd {
		perNode = "/%n"
	}
	fmt.Fprintf(&b, "SlurmdSpoolDir=%s%s\n", d.innerPath("spool"), perNode)
	fmt.Fprintf(&b, "SlurmctldPidFile=%s\n", d.innerPath("slurmctld.pid"))
	fmt.Fprintf(&b, "SlurmdPidFile=%s\n", d.innerPath("slurmd"+strings.ReplaceAll(perNode, "/", "-")+".pid"))
	b.WriteString(`SlurmUser=root
SlurmdUser=root
SlurmctldDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
ReturnToService=2
`)
	if o.Plugin != PluginYAML {
		fmt.Fprintf(&b, "TopologyPlugin=%s\n", o.Plugin)
	}
	if o.JWT {
		if err := writeKey(d.hostPath(jwtKeyFile), 32); err != nil {
			return err
		}
		fmt.Fprintf(&b, "AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=%s\n", d.innerPath(jwtKeyFile))
	}
	if o.DBD != nil {
		b.WriteString(o.DBD.accountingLines())
		b.WriteString("PriorityType=priority/multifactor\n")
	}
	if o.Slurmd {
		if err := writeSlurmdConfig(&b, d, o, nodePorts); err != nil {
			return err
		}
	} else {
		for _, n := range o.Nodes {
			fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n", n)
		}
	}
	b.WriteString("PartitionName=all Nodes=ALL Default=YES State=UP\n")
	for _, p := range o.Partitions {
		fmt.Fprintf(&b, "PartitionName=%s Nodes=%s State=UP", p.Name, p.Nodes)
		if p.Topology != "" {
			fmt.Fprintf(&b, " Topology=%s", p.Topology)
		}
		b.WriteByte('\n')
	}

	if err := os.WriteFile(d.hostPath("slurm.conf"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("slurmtest: %w", err)
	}
	topo := "topology.conf"
	if o.Plugin == PluginYAML {
		topo = "topology.yaml"
	}
	if err := os.WriteFile(d.hostPath(topo), []byte(o.Topology), 0o644); err != nil {
		return fmt.Errorf("slurmtest: %w", err)
	}
	if o.Version != V2205 {
		return writeKey(d.hostPath("slurm.key"), 1024)
	}
	return nil
}

// jwtKeyFile is the HS256 key of auth/jwt, beside slurm.conf.
const jwtKeyFile = "jwt.key"

// writeKey writes n random bytes to path, readable by its owner only.
func writeKey(path string, n int) error {
	key := make([]byte, n)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("slurmtest: %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return fmt.Errorf("slurmtest: %w", err)
	}
	return nil
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment ago.
// All listeners are held open together so the ports differ from each other.
func freePorts(n int) (ports []int, err error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			if cerr := l.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("slurmtest: closing probe listener: %w", cerr)
			}
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("slurmtest: picking a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
