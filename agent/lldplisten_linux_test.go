package agent_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/testenv/netlab"
)

// TestListenLLDP: a host that runs no lldpd, cabled to two leaves that
// do, hears each leaf's own LLDP frames on a raw socket and reads from
// them the switch and port lldpcli would name.
func TestListenLLDP(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	lab.Link("h1", "eth0", "leaf01", "swp1")
	lab.Link("h1", "eth1", "leaf02", "swp3")
	for _, n := range []string{"leaf01", "leaf02"} {
		lab.LLDPD(t.Context(), n, n)
	}
	var got []providers.LLDPNeighbor
	var warnings []string
	var err error
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { // the leaves send again once the host listens, not in 30 s
		for ctx.Err() == nil {
			time.Sleep(300 * time.Millisecond)
			for _, n := range []string{"leaf01", "leaf02"} {
				_, _ = lab.LLDPCLI(ctx, n, "update")
			}
		}
	})
	if ierr := lab.In("h1", func() { got, warnings, err = agent.ListenLLDP(ctx, []string{"eth0", "eth1"}, 20*time.Second) }); ierr != nil {
		t.Fatal(ierr)
	}
	cancel()
	wg.Wait()
	if err != nil || len(warnings) > 0 {
		t.Fatalf("ListenLLDP: %v %v", err, warnings)
	}
	want := map[string]string{"eth0": "leaf01/swp1", "eth1": "leaf02/swp3"}
	if len(got) != 2 {
		t.Fatalf("heard %+v, want both leaves", got)
	}
	for _, n := range got {
		if want[n.Interface] != n.SysName+"/"+n.PortDescr || n.ChassisIDType != "mac" || len(n.ChassisID) != 17 || n.PortID == "" {
			t.Errorf("%s heard %+v, want %s", n.Interface, n, want[n.Interface])
		}
	}
}

// TestGatherListensWithoutLLDPD: where lldpcli is not installed, the
// agent listens on its fabric NICs (not the management NIC) for the
// switches' frames; garbled frames a switch keeps sending meanwhile (a
// TLV past the frame's end: dropped with a warning, as TestParseFrame
// shows) do not keep the good ones from being heard.
func TestGatherListensWithoutLLDPD(t *testing.T) {
	t.Parallel()
	lab := netlab.New(t)
	lab.Link("h1", "eth0", "leaf01", "swp1")
	lab.Link("h1", "eth1", "leaf02", "swp1")
	lab.Link("h1", "eth9", "oob01", "port1")
	for _, n := range []string{"leaf01", "leaf02", "oob01"} {
		lab.LLDPD(t.Context(), n, n)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			time.Sleep(300 * time.Millisecond)
			_ = lab.In("leaf02", func() { _ = sendFrame("swp1", garbled) })
			for _, n := range []string{"leaf01", "leaf02", "oob01"} {
				_, _ = lab.LLDPCLI(ctx, n, "update")
			}
		}
	})
	logs := &strings.Builder{}
	var f providers.NodeFacts
	var err error
	g := &agent.Gatherer{LLDP: []string{"/nonexistent/lldpcli"}, LLDPListen: 20 * time.Second,
		LLDPInterfaces: regexp.MustCompile(`^eth[01]$`), Logger: slog.New(slog.NewTextHandler(&syncWriter{w: logs}, nil))}
	if ierr := lab.In("h1", func() { f, err = g.Gather(ctx, "h1") }); ierr != nil {
		t.Fatal(ierr)
	}
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range f.LLDP {
		got[n.Interface] = n.SysName + "/" + n.PortDescr
	}
	if want := map[string]string{"eth0": "leaf01/swp1", "eth1": "leaf02/swp1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("heard %v, want %v (eth9's management switch not listened to)", got, want)
	}
	if err := agents.CheckFacts(f); err != nil {
		t.Errorf("the server refuses the report: %v", err)
	}
	t.Logf("log: %s", logs)
}

// garbled is an LLDP frame whose third TLV runs past the frame's end.
var garbled = []byte{0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 9, 0x88, 0xcc,
	0x02, 0x07, 4, 0x0c, 0x42, 0xa1, 0, 0, 9, 0x04, 0x03, 5, 'p', '1', 0x06, 0xff}

// sendFrame sends one raw Ethernet frame out of iface (of the calling
// thread's namespace).
func sendFrame(iface string, frame []byte) error {
	ifc, err := net.InterfaceByName(iface)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }()
	return unix.Sendto(fd, frame, 0, &unix.SockaddrLinklayer{Ifindex: ifc.Index, Halen: 6, Addr: [8]byte{0x01, 0x80, 0xc2, 0, 0, 0x0e}})
}

// syncWriter lets goroutines log into one builder.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
