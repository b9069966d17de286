package lldp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// maxVars caps the variables read from one switch: far above any real
// switch's LLDP tables (a 128-port switch with 4 neighbors a port reads
// under 8,000), so that a hostile agent cannot grow the walk without end.
const maxVars = 50000

// errTooMany ends a walk that passes maxVars.
var errTooMany = errors.New("more variables than any switch's LLDP tables hold")

// target is a switch to walk.
type target struct {
	chassis string
	name    string
	addrs   []netip.Addr
}

// crawler walks the fabric's switches breadth-first, from the leaves up.
type crawler struct {
	s    SNMP
	walk Walker
	nets []netip.Prefix
	log  *slog.Logger
	// hosts are the cluster's node names: a neighbor that names one is
	// not a switch to follow.
	hosts map[string]bool
}

// crawl walks the leaves, then the switches they name, up to s.MaxHops
// tiers and s.MaxSwitches switches, and returns each walked switch's
// view by chassis ID. A switch that cannot be walked (no address in
// networks, no answer, a wrong answer) is a warning: it and what only it
// would show are missing, the rest of the discovery goes on.
func (c *crawler) crawl(ctx context.Context, leaves []target) (map[string]*View, []string) {
	views := map[string]*View{}
	var warnings []string
	seen := map[string]bool{}
	for _, t := range leaves {
		seen[t.chassis] = true
	}
	level, walked := leaves, 0
	for hop := 0; hop < c.s.MaxHops && len(level) > 0; hop++ {
		if room := c.s.MaxSwitches - walked; len(level) > room {
			warnings = append(warnings, fmt.Sprintf("snmp: %d switches of tier %d not walked: maxSwitches is %d", len(level)-room, hop+1, c.s.MaxSwitches))
			level = level[:room]
		}
		walked += len(level)
		got, warn := c.level(ctx, level)
		warnings = append(warnings, warn...)
		var next []target
		for _, t := range level {
			v := got[t.chassis]
			if v == nil {
				continue
			}
			views[t.chassis] = v
			for _, r := range v.Remotes {
				if !r.Switch() || seen[r.ChassisID] || c.hosts[shortName(r.SysName)] {
					continue
				}
				seen[r.ChassisID] = true
				next = append(next, target{chassis: r.ChassisID, name: r.SysName, addrs: r.Addrs})
			}
		}
		level = next
	}
	return views, warnings
}

// level walks one tier's switches, s.Parallel at a time.
func (c *crawler) level(ctx context.Context, ts []target) (map[string]*View, []string) {
	var mu sync.Mutex
	out := map[string]*View{}
	warn := make([]string, len(ts))
	sem := make(chan struct{}, c.s.Parallel)
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			v, err := c.one(ctx, t)
			if err != nil {
				warn[i] = fmt.Sprintf("snmp: switch %s: %v", cmp.Or(t.name, t.chassis), err)
				return
			}
			mu.Lock()
			out[t.chassis] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, slices.DeleteFunc(warn, func(s string) bool { return s == "" })
}

// one walks one switch and checks that it is the switch asked for.
func (c *crawler) one(ctx context.Context, t target) (*View, error) {
	host, port, err := c.address(t)
	if err != nil {
		return nil, err
	}
	// A switch that answers, but slowly, gets ten requests' time.
	ctx, cancel := context.WithTimeout(ctx, 10*c.s.Timeout*time.Duration(c.s.Retries+1))
	defer cancel()
	var vars []Var
	for _, root := range []string{OIDLocal, OIDRemote} {
		err := c.walk.Walk(ctx, host, port, root, func(v Var) error {
			if len(vars) >= maxVars {
				return errTooMany
			}
			vars = append(vars, v)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	v, warnings := Decode(vars)
	if v.ChassisID == "" {
		return nil, fmt.Errorf("%s: %w: no lldpLocChassisId", host, ErrMIB)
	}
	for _, w := range warnings {
		c.log.Warn("lldp: switch row left out", "switch", cmp.Or(t.name, t.chassis), "address", host, "problem", w)
	}
	if v.ChassisID != t.chassis {
		return nil, fmt.Errorf("%s answers as chassis %s, not %s: left out", host, v.ChassisID, t.chassis)
	}
	return v, nil
}

// address is where to walk t: the operator's address for its name, else
// its first management address inside networks.
func (c *crawler) address(t target) (string, int, error) {
	if a, ok := c.s.Addresses[t.name]; ok && t.name != "" {
		return splitAddress(a, c.s.Port)
	}
	for _, a := range t.addrs {
		for _, n := range c.nets {
			if n.Contains(a.Unmap()) {
				return a.Unmap().String(), c.s.Port, nil
			}
		}
	}
	if len(t.addrs) == 0 {
		return "", 0, errors.New("sends no management address and has none in snmp.addresses")
	}
	return "", 0, fmt.Errorf("management addresses %v are outside snmp.networks and it has none in snmp.addresses", t.addrs)
}
