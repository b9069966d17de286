package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/testenv/snmprec"
)

// LLDP-MIB subtypes of the types lldpcli names (LldpChassisIdSubtype,
// LldpPortIdSubtype).
var (
	chassisSubtype = map[string]int64{"chassis": 1, "ifalias": 2, "port": 3, "mac": 4, "ip": 5, "ifname": 6, "local": 7}
	portSubtype    = map[string]int64{"ifalias": 1, "port": 2, "mac": 3, "ip": 4, "ifname": 5, "circuit": 6, "local": 7}
)

// fromLLDPD builds the LLDP-MIB rows from what the switch's lldpd shows:
// its own ports (show interfaces) and its neighbors (show neighbors).
// Local ports are numbered 1, 2, ... in the order of their names.
func fromLLDPD(ctx context.Context, socket string) ([]snmprec.Record, error) {
	ifOut, err := lldpcli(ctx, socket, "show", "interfaces")
	if err != nil {
		return nil, err
	}
	nbOut, err := lldpcli(ctx, socket, "show", "neighbors")
	if err != nil {
		return nil, err
	}
	local, _, err := neighbor.Parse(ifOut)
	if err != nil {
		return nil, fmt.Errorf("show interfaces: %w", err)
	}
	remote, _, err := neighbor.Parse(nbOut)
	if err != nil {
		return nil, fmt.Errorf("show neighbors: %w", err)
	}
	if len(local) == 0 {
		return nil, errors.New("show interfaces: no port")
	}
	slices.SortFunc(local, func(a, b neighbor.Neighbor) int { return strings.Compare(a.Interface, b.Interface) })
	const loc, rem, man = "1.0.8802.1.1.2.1.3", "1.0.8802.1.1.2.1.4.1.1", "1.0.8802.1.1.2.1.4.2.1"
	me := local[0]
	recs := []snmprec.Record{
		integer(loc+".1.0", chassisSubtype[me.ChassisIDType]),
		octets(loc+".2.0", idBytes(me.ChassisIDType, me.ChassisID)),
		octets(loc+".3.0", []byte(me.SysName)),
	}
	portNum := map[string]int{}
	for i, p := range local {
		n := i + 1
		portNum[p.Interface] = n
		recs = append(recs,
			integer(fmt.Sprintf("%s.7.1.2.%d", loc, n), portSubtype[p.PortIDType]),
			octets(fmt.Sprintf("%s.7.1.3.%d", loc, n), idBytes(p.PortIDType, p.PortID)),
			octets(fmt.Sprintf("%s.7.1.4.%d", loc, n), []byte(p.PortDescr)))
	}
	for i, r := range remote {
		n, ok := portNum[r.Interface]
		if !ok {
			continue
		}
		idx := fmt.Sprintf("0.%d.%d", n, i+1)
		col := func(c int) string { return fmt.Sprintf("%s.%d.%s", rem, c, idx) }
		recs = append(recs,
			integer(col(4), chassisSubtype[r.ChassisIDType]),
			octets(col(5), idBytes(r.ChassisIDType, r.ChassisID)),
			integer(col(6), portSubtype[r.PortIDType]),
			octets(col(7), idBytes(r.PortIDType, r.PortID)),
			octets(col(8), []byte(r.PortDescr)),
			octets(col(9), []byte(r.SysName)),
			octets(col(12), []byte{capBits(r.Capabilities)}))
		for _, a := range r.MgmtIPs {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				continue
			}
			family := 1
			if ip.Is6() {
				family = 2
			}
			arcs := []string{}
			for _, b := range ip.AsSlice() {
				arcs = append(arcs, fmt.Sprint(b))
			}
			recs = append(recs, integer(fmt.Sprintf("%s.3.%s.%d.%d.%s", man, idx, family, len(arcs), strings.Join(arcs, ".")), 2))
		}
	}
	return recs, nil
}

// capBits is the LLDP-MIB BITS octet of the capabilities: other(0) is
// the most significant bit.
func capBits(caps []string) byte {
	var b byte
	for bit, name := range neighbor.Capabilities {
		if slices.Contains(caps, name) {
			b |= 0x80 >> bit
		}
	}
	return b
}

// idBytes is an ID's MIB value: a MAC address's six octets, a network
// address as its family octet and address, others as text.
func idBytes(kind, id string) []byte {
	switch kind {
	case "mac":
		if b, err := hex.DecodeString(strings.ReplaceAll(id, ":", "")); err == nil {
			return b
		}
	case "ip":
		if ip, err := netip.ParseAddr(id); err == nil {
			family := byte(1)
			if ip.Is6() {
				family = 2
			}
			return append([]byte{family}, ip.AsSlice()...)
		}
	}
	return []byte(id)
}

func integer(oid string, v int64) snmprec.Record {
	return snmprec.Record{OID: oid, Tag: snmprec.TagInteger, Int: v}
}

func octets(oid string, b []byte) snmprec.Record {
	return snmprec.Record{OID: oid, Tag: snmprec.TagOctets, Bytes: b}
}
