package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/testenv/netlab"
)

// TestGatherLLDP: a host in a network namespace is cabled to two rail
// leaves and a management switch, each running the real lldpd. The agent
// runs the real lldpcli there and reports the leaves and ports of its
// fabric NICs only: the RDMA devices' interfaces (a sysfs folder laid out
// as Linux lays it out), or those an interface pattern names; the
// management NIC's switch is left out. The report passes the server's
// checks and its annotation holds the same neighbors.
func TestGatherLLDP(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	lab.Link("h1", "eth0", "leaf01", "swp1")
	lab.Link("h1", "eth1", "leaf02", "swp1")
	lab.Link("h1", "eth9", "oob01", "port7")
	for _, n := range []string{"leaf01", "leaf02", "oob01", "h1"} {
		lab.LLDPD(t.Context(), n, n)
	}
	rdma := t.TempDir()
	for dev, nic := range map[string]string{"mlx5_0": "eth0", "mlx5_1": "eth1"} {
		if err := os.MkdirAll(filepath.Join(rdma, dev, "device", "net", nic), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	command := lab.Command("h1", "-f", "json0", "show", "neighbors")
	for _, g := range []*agent.Gatherer{
		{LLDP: command, SysfsDir: rdma},
		{LLDP: command, LLDPInterfaces: regexp.MustCompile(`^eth[01]$`)},
	} {
		var f providers.NodeFacts
		deadline := time.Now().Add(30 * time.Second)
		for len(f.LLDP) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("after 30 s the agent reports %+v", f.LLDP)
			}
			time.Sleep(100 * time.Millisecond)
			var err error
			if f, err = g.Gather(t.Context(), "h1"); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]string{}
		for _, n := range f.LLDP {
			got[n.Interface] = n.SysName + "/" + n.PortDescr
		}
		if want := map[string]string{"eth0": "leaf01/swp1", "eth1": "leaf02/swp1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("reported %v, want %v (the management NIC's switch left out)", got, want)
		}
		if err := agents.CheckFacts(f); err != nil {
			t.Errorf("the server refuses the report: %v", err)
		}
		var annotated []providers.LLDPNeighbor
		if err := json.Unmarshal([]byte(agent.Annotations(f)[keys.LLDP]), &annotated); err != nil || !reflect.DeepEqual(annotated, f.LLDP) {
			t.Errorf("annotation %s: %v", agent.Annotations(f)[keys.LLDP], err)
		}
	}
}

// TestGatherLLDPWithoutLLDPD: a host without lldpcli reports no
// neighbors and no error; garbage from the command is an error.
func TestGatherLLDPWithoutLLDPD(t *testing.T) {
	t.Parallel()
	f, err := (&agent.Gatherer{LLDP: []string{"/nonexistent/lldpcli"}}).Gather(context.Background(), "h1")
	if err != nil || len(f.LLDP) != 0 {
		t.Errorf("without lldpcli: %+v, %v", f.LLDP, err)
	}
	_, err = (&agent.Gatherer{LLDP: []string{"lldpcli"}, Run: runner("Interface: eth0", nil)}).Gather(context.Background(), "h1")
	if err == nil {
		t.Error("garbled lldpcli output gave no error")
	}
}

// TestGatherLLDPWithoutDaemon: lldpcli installed but lldpd not running
// (the command fails) is no error and no neighbors: the round goes on.
func TestGatherLLDPWithoutDaemon(t *testing.T) {
	t.Parallel()
	g := &agent.Gatherer{LLDP: []string{"lldpcli", "-f", "json0", "show", "neighbors"},
		Run: runner("", errors.New("exit status 1: unable to connect to socket /run/lldpd.socket"))}
	f, err := g.Gather(context.Background(), "h1")
	if err != nil || len(f.LLDP) != 0 {
		t.Errorf("lldpd not running: %+v, %v; want no neighbors and no error", f.LLDP, err)
	}
}
