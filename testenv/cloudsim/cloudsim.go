// Package cloudsim holds HTTP emulators of the cloud topology APIs (EC2
// DescribeInstanceTopology, Lambda and Nscale topology, and the metadata
// services). Each serves a cluster model — a topology.Graph, typically
// from providers/sim — in the cloud's own wire format, paginates, rejects
// query parameters it does not know, and injects faults on demand.
package cloudsim

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toposcope/toposcope/topology"
)

// Instance is one instance an emulator serves.
type Instance struct {
	// ID is the instance ID; Name the host name.
	ID, Name string
	// Zone is its availability zone.
	Zone string
	// Path lists the switch IDs closest first.
	Path []string
	// Domain and SubDomain are its accelerator domain.
	Domain, SubDomain string
	// Type is the instance type.
	Type string
}

// FromGraph lists the nodes of g as instances, in node order. A node
// without an instance ID is served under its name.
func FromGraph(g *topology.Graph) []Instance {
	out := make([]Instance, 0, len(g.Nodes()))
	for _, n := range g.Nodes() {
		in := Instance{ID: n.InstanceID, Name: n.Name, Zone: n.Zone, Domain: n.Domain,
			SubDomain: n.SubDomain, Type: n.Attributes["instanceType"]}
		if in.ID == "" {
			in.ID = n.Name
		}
		for _, s := range g.Path(n.Name) {
			in.Path = append(in.Path, s.ID)
		}
		out = append(out, in)
	}
	return out
}

// Faults say what an emulator does wrong. The zero value is a healthy
// server.
type Faults struct {
	// Throttle answers the first Throttle calls with the cloud's
	// throttling error.
	Throttle int
	// ServerErrorPage answers every request for this page (1-based) with
	// HTTP 500; 0 for none.
	ServerErrorPage int
	// SlowPage delays this page (1-based) by SlowDelay.
	SlowPage  int
	SlowDelay time.Duration
	// RepeatToken makes the second page hand out the page token it was
	// asked with, so a naive client loops forever.
	RepeatToken bool
	// EmptyFinalPage adds an empty page after the last one.
	EmptyFinalPage bool
	// NoTopology lists instance IDs served without topology fields.
	NoTopology []string
	// Omit lists instance IDs the API does not return.
	Omit []string
}

// base is the state shared by every emulator: the instances, the faults
// and the call counter.
type base struct {
	instances []Instance
	faults    Faults
	calls     atomic.Int64
	mu        sync.Mutex
	throttled int
}

func newBase(instances []Instance, f Faults) *base {
	b := &base{faults: f}
	for _, in := range instances {
		if slices.Contains(f.Omit, in.ID) {
			continue
		}
		if slices.Contains(f.NoTopology, in.ID) {
			in.Path, in.Domain, in.SubDomain = nil, "", ""
		}
		b.instances = append(b.instances, in)
	}
	return b
}

// Calls returns the number of API requests received.
func (b *base) Calls() int { return int(b.calls.Load()) }

// throttle counts a call and reports whether it must be throttled.
func (b *base) throttle() bool {
	b.calls.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.throttled < b.faults.Throttle {
		b.throttled++
		return true
	}
	return false
}

// page returns the instances of the page starting at offset, the next
// offset (-1 at the end) and the page number (1-based), applying
// EmptyFinalPage. It sleeps for a slow page.
func (b *base) page(offset, size int) ([]Instance, int, int) {
	num := offset/size + 1
	if num == b.faults.SlowPage {
		time.Sleep(b.faults.SlowDelay)
	}
	if offset >= len(b.instances) {
		return nil, -1, num
	}
	end := min(offset+size, len(b.instances))
	next := end
	if end == len(b.instances) && !b.faults.EmptyFinalPage {
		next = -1
	}
	return b.instances[offset:end], next, num
}

// tokenPage serves the page a token asks for. Tokens are prefix + the
// offset ("" asks for the first page). It returns the page's instances,
// the next page's token ("" after the last; with RepeatToken, page 2
// hands back tok), the page number, and false for a malformed token.
func (b *base) tokenPage(prefix, tok string, size int) ([]Instance, string, int, bool) {
	offset := 0
	if tok != "" {
		rest, found := strings.CutPrefix(tok, prefix)
		n, err := strconv.Atoi(rest)
		if !found || err != nil || n < 0 {
			return nil, "", 0, false
		}
		offset = n
	}
	items, nextOffset, num := b.page(offset, size)
	next := ""
	switch {
	case b.faults.RepeatToken && num == 2:
		next = tok
	case nextOffset >= 0:
		next = prefix + strconv.Itoa(nextOffset)
	}
	return items, next, num, true
}

// inZone returns the instances of one zone, with the same faults.
func (b *base) inZone(zone string) *base {
	out := &base{faults: b.faults}
	for _, in := range b.instances {
		if in.Zone == zone {
			out.instances = append(out.instances, in)
		}
	}
	return out
}

// byID returns the served instances among ids, in the order given.
func (b *base) byID(ids []string) []Instance {
	idx := make(map[string]int, len(b.instances))
	for i, in := range b.instances {
		idx[in.ID] = i
	}
	var out []Instance
	for _, id := range ids {
		if i, ok := idx[id]; ok {
			out = append(out, b.instances[i])
		}
	}
	return out
}

// reversed returns a root-first copy of a closest-first path.
func reversed(p []string) []string {
	out := slices.Clone(p)
	slices.Reverse(out)
	return out
}

// unknownParam returns the first key of q not in known, or "".
func unknownParam(q map[string][]string, known func(string) bool) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !known(k) {
			return k
		}
	}
	return ""
}
