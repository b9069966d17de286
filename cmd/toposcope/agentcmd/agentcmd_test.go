package agentcmd

import (
	"errors"
	"testing"
	"time"
)

// TestFabricFlags: --ibnetdiscover runs only on the nodes of
// --ibnetdiscover-nodes, with the given bounds; each flag without the
// other, a bad hostlist or a non-positive bound is a usage error.
func TestFabricFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, command, nodes, node string
		interval                   time.Duration
		wantRun, wantErr           bool
	}{
		{name: "off", node: "gpu001"},
		{name: "a chosen node", command: "ibnetdiscover -C mlx5_0", nodes: "gpu[001,019]", node: "gpu019", wantRun: true},
		{name: "another node", command: "ibnetdiscover", nodes: "gpu[001,019]", node: "gpu002"},
		{name: "command without nodes", command: "ibnetdiscover", node: "gpu001", wantErr: true},
		{name: "nodes without command", nodes: "gpu001", node: "gpu001", wantErr: true},
		{name: "bad hostlist", command: "ibnetdiscover", nodes: "gpu[001", node: "gpu001", wantErr: true},
		{name: "zero interval", command: "ibnetdiscover", nodes: "gpu001", node: "gpu001", interval: -1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := &agentOptions{ibnetdiscover: tc.command, ibNodes: tc.nodes, ibInterval: time.Hour, ibTimeout: time.Minute}
			if tc.interval != 0 {
				o.ibInterval = tc.interval
			}
			d, err := o.fabric(tc.node)
			if tc.wantErr {
				if !errors.Is(err, ErrUsage) {
					t.Errorf("fabric = %v, want a usage error", err)
				}
				return
			}
			if err != nil || (d != nil) != tc.wantRun {
				t.Fatalf("fabric = %v, %v; want a run: %v", d, err, tc.wantRun)
			}
			if d != nil && (d.Command.String() != tc.command || d.Interval != time.Hour || d.Timeout != time.Minute) {
				t.Errorf("fabric = %+v", d)
			}
		})
	}
}
