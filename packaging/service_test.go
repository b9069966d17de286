package packaging_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/testenv/proctest"
	"github.com/toposcope/toposcope/testenv/slurmtest"
)

// serviceAddr is where the packaged configuration and the Slurm trigger
// script expect the service.
const serviceAddr = "127.0.0.1:49021"

// liveConfig runs the slurm-nodes provider (the nodes of the real
// slurmctld, placed by the bundled small-tree model) and writes the Slurm
// engine's file where the package says: its state directory.
const liveConfig = `provider:
  name: slurm-nodes
  params:
    instanceID: none
    provider: {name: sim, params: {model: small-tree}}
engines:
  - name: slurm
    params: {plugin: topology/tree, slurmVersion: "24.11", output: /var/lib/toposcope/slurm/topology.conf}
discovery: {interval: 1h, triggers: {api: true}}
server: {listen: ` + serviceAddr + `}
store: {path: /var/lib/toposcope/toposcope.db}
paths: {read: [/etc/toposcope, /var/lib/toposcope], write: [/var/lib/toposcope/slurm]}
`

// serviceOnSlurm installs the package into a copy of the trixie chroot,
// starts slurmctld 24.11 there with topology.conf a link to the service's
// file (as docs/install-slurm.md says), and runs the packaged binary as
// the toposcope user, as the unit would: it lists the nodes from
// slurmctld, writes topology.conf, and after `scontrol reconfigure` (what
// toposcope-reconfigure.service runs) `scontrol show topology` shows its
// switches. Then the packaged strigger script is registered, a node is
// set down, and the trigger makes the service discover again.
func serviceOnSlurm(ctx context.Context, t *testing.T, chroot, deb string) {
	if l, err := net.Listen("tcp", serviceAddr); err != nil {
		t.Fatalf("the packaged configuration's port is taken: %v", err)
	} else {
		_ = l.Close()
	}
	root, _ := installed(ctx, t, chroot, deb)
	c, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2411, Root: root,
		Nodes: []string{"gpu001", "gpu002", "gpu009", "gpu010"}, Topology: "SwitchName=s0 Nodes=gpu[001-002,009-010]\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(c.TopologyPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/var/lib/toposcope/slurm/topology.conf", c.TopologyPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/toposcope/live.yaml"), []byte(liveConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	// slurm.conf is readable by every user on a head node, as Slurm's
	// clients need; slurmtest makes its folder private.
	if err := os.Chmod(filepath.Dir(c.TopologyPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(filepath.Dir(c.TopologyPath()), "slurm.conf"), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := c.Argv("/usr/sbin/runuser", "-u", "toposcope", "--", "/usr/bin/toposcope", "serve", "--config", "/etc/toposcope/live.yaml", "--log-level", "info")
	log := proctest.Start(ctx, t, argv...) // runuser forks the service: Start stops both

	written := filepath.Join(root, "var/lib/toposcope/slurm/topology.conf")
	waitFor(t, "the service to write topology.conf", log, func() bool {
		b, err := os.ReadFile(written)
		return err == nil && strings.Count(string(b), "Nodes=") == 2 // the two leaves
	})
	// The service's own user may not reconfigure slurmctld (only
	// SlurmUser, root or an Admin may): that is why the package has the
	// path unit run it as the Slurm user.
	if out, errOut, err := c.Run(ctx, "/usr/sbin/runuser", "-u", "toposcope", "--", "/usr/bin/scontrol", "reconfigure"); err == nil {
		t.Errorf("scontrol reconfigure as toposcope was accepted: %s %s", out, errOut)
	} else {
		t.Logf("scontrol reconfigure as toposcope: %v: %s", err, strings.TrimSpace(errOut))
	}
	if err := c.Reconfigure(ctx); err != nil { // as toposcope-reconfigure.service does
		t.Fatal(err)
	}
	shown, err := c.ShowTopology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	switches, _, err := slurmtest.ParseTopology(shown)
	if err != nil {
		t.Fatal(err)
	}
	leaves := map[string]string{}
	for _, s := range switches {
		if s.Level != 0 {
			continue // leaves only
		}
		nodes, err := hostlist.Expand(s.Nodes)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			leaves[n] = s.Name
		}
	}
	if leaves["gpu001"] == "" || leaves["gpu001"] != leaves["gpu002"] || leaves["gpu009"] != leaves["gpu010"] || leaves["gpu001"] == leaves["gpu009"] {
		t.Errorf("scontrol show topology after the service wrote the file: %v\n%s", leaves, shown)
	}
	if strings.Contains(shown, "SwitchName=s0 ") {
		t.Errorf("slurmctld still shows the first topology:\n%s", shown)
	}

	runs := countRuns(t)
	if _, errOut, err := c.Run(ctx, "/usr/bin/strigger", "--set", "--node", "--down", "--flags=PERM", "--program=/usr/lib/toposcope/slurm-trigger"); err != nil {
		t.Fatalf("strigger --set: %v: %s", err, errOut)
	}
	if _, errOut, err := c.Run(ctx, "/usr/bin/scontrol", "update", "nodename=gpu010", "state=down", "reason=toposcope-test"); err != nil {
		t.Fatalf("scontrol update state=down: %v: %s", err, errOut)
	}
	waitFor(t, "the Slurm trigger to start a discovery", log, func() bool { return countRuns(t) > runs })

	// One topology.yaml topology per partition slurmctld reports (for
	// Slurm 25.05, which is not here to read it: the document is checked).
	if _, errOut, err := c.Run(ctx, "/usr/bin/scontrol", "create", "partitionname=gpu", "nodes=gpu[001-002]"); err != nil {
		t.Fatalf("scontrol create partition: %v: %s", err, errOut)
	}
	perPartition := strings.Replace(liveConfig, "output: /var/lib/toposcope/slurm/topology.conf}",
		`partitionTopologies: tree}`, 1)
	perPartition = strings.Replace(perPartition, "plugin: topology/tree, slurmVersion: \"24.11\"", "plugin: topology/yaml, slurmVersion: \"25.05\"", 1)
	if err := os.WriteFile(filepath.Join(root, "etc/toposcope/yaml.yaml"), []byte(perPartition), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := c.Run(ctx, "/usr/sbin/runuser", "-u", "toposcope", "--", "/usr/bin/toposcope", "generate", "--config", "/etc/toposcope/yaml.yaml")
	if err != nil {
		t.Fatalf("toposcope generate with per-partition topologies: %v: %s\n%s", err, errOut, perPartition)
	}
	for _, want := range []string{"- topology: default\n  cluster_default: true", "- topology: gpu\n  cluster_default: false", "nodes: gpu[001-002]"} {
		if !strings.Contains(out, want) {
			t.Errorf("topology.yaml lacks %q:\n%s", want, out)
		}
	}
}

// get returns the body of a GET to the service, or the error.
func get(path string) string {
	resp, err := http.Get("http://" + serviceAddr + path)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return b.String()
}

// countRuns returns how many runs the service reports that an API
// request (the trigger) started.
func countRuns(t *testing.T) int {
	t.Helper()
	return strings.Count(get("/v1/runs"), `"trigger":"api"`)
}

// waitLimit bounds waitFor: slurmctld runs triggers on its own schedule.
const waitLimit = 2 * time.Minute

// waitFor polls cond for up to waitLimit.
func waitFor(t *testing.T, what string, log *proctest.Output, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; the service's log:\n%s\nits runs: %s", waitLimit, what, log.String(), get("/v1/runs"))
		}
		time.Sleep(250 * time.Millisecond)
	}
}
