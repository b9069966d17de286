package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
)

// lldpMulticast is the nearest-bridge address LLDP frames are sent to.
var lldpMulticast = [8]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}

// ErrListen is wrapped when the agent cannot listen for LLDP frames (no
// CAP_NET_RAW, an unknown interface).
var ErrListen = errors.New("listen for LLDP frames")

// ListenLLDP listens on the named interfaces for the switches' own LLDP
// frames (EtherType 0x88cc, a raw packet socket: it needs CAP_NET_RAW and
// nothing more) for up to wait, and returns the neighbor each interface
// heard, by interface; it returns early once every interface heard one.
// A frame that cannot be read is left out and named in the warnings, as
// are its garbled TLVs. It works in the network namespace of the calling
// thread.
func ListenLLDP(ctx context.Context, ifaces []string, wait time.Duration) ([]providers.LLDPNeighbor, []string, error) {
	if len(ifaces) == 0 {
		return nil, nil, nil
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(neighbor.EtherType)))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: raw socket: %w", ErrListen, err)
	}
	defer func() { _ = unix.Close(fd) }()
	byIndex := map[int]string{}
	for _, name := range ifaces {
		ifc, err := net.InterfaceByName(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrListen, err)
		}
		byIndex[ifc.Index] = name
		mreq := unix.PacketMreq{Ifindex: int32(ifc.Index), Type: unix.PACKET_MR_MULTICAST, Alen: 6, Address: lldpMulticast}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return nil, nil, fmt.Errorf("%w: join the LLDP group on %s: %w", ErrListen, name, err)
		}
	}
	heard := map[string]providers.LLDPNeighbor{}
	var warnings []string
	deadline := time.Now().Add(wait)
	buf := make([]byte, 9216)
	for len(heard) < len(byIndex) && ctx.Err() == nil {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		tv := unix.NsecToTimeval(min(left, time.Second).Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrListen, err)
		}
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrListen, err)
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		name := byIndex[ll.Ifindex]
		if !ok || name == "" || ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		nb, ws, err := neighbor.ParseFrame(name, buf[:n])
		for _, w := range ws {
			warnings = append(warnings, fmt.Sprintf("frame on %s: %s", name, w))
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("frame on %s dropped: %v", name, err))
			continue
		}
		heard[name] = nb
	}
	out := make([]providers.LLDPNeighbor, 0, len(heard))
	for _, nb := range heard {
		out = append(out, nb)
	}
	slices.SortFunc(out, func(a, b providers.LLDPNeighbor) int { return strings.Compare(a.Interface, b.Interface) })
	return out, warnings, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
