package agents

import (
	"cmp"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/topology"
)

// Reasons a node's facts are dropped at discovery.
const (
	// DropInvalid is a report that CheckFacts refuses (stored before the
	// server checked as much, or given inline).
	DropInvalid = "invalid"
	// DropFabricConflict is a fabric path that disagrees with most other
	// nodes' about where a switch sits (a reversed path, a node under a
	// spine).
	DropFabricConflict = "fabric_conflict"
	// DropRackConflict is a rack (NVLink sub-domain) that most nodes
	// reporting it place in another NVLink domain.
	DropRackConflict = "rack_conflict"
	// DropHCAConflict is an HCA node GUID that more than one node
	// reports: it is dropped from each of them.
	DropHCAConflict = "hca_conflict"
)

// drops are the nodes whose facts a discovery dropped, by reason, and
// what was wrong, for the log (at most maxListed lines).
type drops struct {
	nodes   map[string][]string
	details []string
	more    int
}

func newDrops() drops { return drops{nodes: map[string][]string{}} }

// drop records that node's facts were dropped for reason; err, when not
// nil, says what was wrong.
func (d *drops) drop(reason, node string, err error) {
	d.nodes[reason] = append(d.nodes[reason], node)
	if err != nil {
		d.detail(err.Error())
	}
}

// detail records one line of what was wrong.
func (d *drops) detail(line string) {
	if len(d.details) < maxListed {
		d.details = append(d.details, line)
		return
	}
	d.more++
}

// vet drops from fresh the reports that cannot be used, so that one bad
// report never fails the whole discovery: a report CheckFacts refuses is
// removed; a report whose fabric path disagrees with the majority is kept
// without its path; an HCA GUID that two nodes report is dropped from
// both. It records what it dropped in d.
func vet(fresh map[string]providers.AgentReport, d *drops) {
	for name, r := range fresh {
		if CheckFacts(r.Facts) != nil || r.Facts.Node != name {
			d.drop(DropInvalid, name, nil)
			delete(fresh, name)
		}
	}
	for _, name := range conflictingPaths(fresh) {
		r := fresh[name]
		r.Facts.Fabric = nil
		fresh[name] = r
		d.drop(DropFabricConflict, name, nil)
	}
	for _, name := range conflictingRacks(fresh) {
		r := fresh[name]
		r.Facts.Rack = ""
		fresh[name] = r
		d.drop(DropRackConflict, name, nil)
	}
	sharedHCAs(fresh, d)
}

// sharedHCAs drops every HCA whose node GUID more than one node reports
// from each of those nodes (a GUID is one adapter's: at most one of them
// tells the truth, and nothing says which), naming the GUID and nodes.
func sharedHCAs(fresh map[string]providers.AgentReport, d *drops) {
	owners := map[string][]string{}
	for name, r := range fresh {
		for _, h := range r.Facts.HCAs {
			if h.NodeGUID != "" {
				owners[h.NodeGUID] = append(owners[h.NodeGUID], name)
			}
		}
	}
	shared := map[string]bool{}
	for _, guid := range slices.Sorted(maps.Keys(owners)) {
		if nodes := owners[guid]; len(nodes) > 1 {
			hostlist.Sort(nodes)
			shared[guid] = true
			d.detail("HCA node GUID " + guid + " is reported by " + strconv.Itoa(len(nodes)) + " nodes: " + listNodes(nodes) + "; dropped from each")
		}
	}
	if len(shared) == 0 {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(fresh)) {
		r := fresh[name]
		kept := slices.DeleteFunc(slices.Clone(r.Facts.HCAs), func(h providers.HCA) bool { return shared[h.NodeGUID] })
		if len(kept) < len(r.Facts.HCAs) {
			r.Facts.HCAs = kept
			fresh[name] = r
			d.drop(DropHCAConflict, name, nil)
		}
	}
}

// conflictingRacks returns the nodes whose rack most other nodes with
// that rack place in another NVLink domain (a rack is a sub-domain, in
// one domain only). Ties go to the smaller domain.
func conflictingRacks(fresh map[string]providers.AgentReport) []string {
	domainOf := func(f providers.NodeFacts) string {
		c, err := nvlink.ParseCliqueLabel(f.Clique)
		if f.Clique == "" || f.Rack == "" || err != nil {
			return ""
		}
		return c.String()
	}
	votes := map[string]map[string]int{}
	for _, r := range fresh {
		if dom := domainOf(r.Facts); dom != "" {
			if votes[r.Facts.Rack] == nil {
				votes[r.Facts.Rack] = map[string]int{}
			}
			votes[r.Facts.Rack][dom]++
		}
	}
	var out []string
	for name, r := range fresh {
		dom := domainOf(r.Facts)
		if dom == "" {
			continue
		}
		v := votes[r.Facts.Rack]
		for other, n := range v {
			if n > v[dom] || (n == v[dom] && other < dom) {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// place is where one path puts a switch: its parent (the next ID, "" at
// the top) and its level (0 for the switch the node hangs from).
type place struct {
	parent string
	level  int
}

// conflictingPaths returns the nodes whose fabric path puts some switch
// elsewhere than most paths through it do. The paths left agree on every
// switch's parent and level, so they build a tree. Ties go to the
// smaller parent, then the lower level, whatever the report order.
func conflictingPaths(fresh map[string]providers.AgentReport) []string {
	votes := map[string]map[place]int{}
	for _, r := range fresh {
		for i, id := range r.Facts.Fabric {
			if votes[id] == nil {
				votes[id] = map[place]int{}
			}
			votes[id][placeOf(r.Facts.Fabric, i)]++
		}
	}
	winner := make(map[string]place, len(votes))
	for id, v := range votes {
		winner[id] = slices.MaxFunc(slices.Collect(maps.Keys(v)), func(a, b place) int {
			if c := cmp.Compare(v[a], v[b]); c != 0 {
				return c
			}
			if c := cmp.Compare(b.parent, a.parent); c != 0 {
				return c
			}
			return cmp.Compare(b.level, a.level)
		})
	}
	var out []string
	for name, r := range fresh {
		for i, id := range r.Facts.Fabric {
			if placeOf(r.Facts.Fabric, i) != winner[id] {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

func placeOf(path []string, i int) place {
	p := place{level: i}
	if i+1 < len(path) {
		p.parent = path[i+1]
	}
	return p
}

// report logs what d dropped, one warning per reason listing the nodes
// and one per line of what was wrong, and counts it on obs when it
// counts drops.
func (d *drops) report(log *slog.Logger, obs providers.Observer) {
	counter, _ := obs.(providers.DropObserver)
	for _, reason := range slices.Sorted(maps.Keys(d.nodes)) {
		nodes := d.nodes[reason]
		if len(nodes) == 0 {
			continue
		}
		log.Warn("agents: dropped the facts of nodes whose reports cannot be used", "reason", reason,
			"count", len(nodes), "nodes", listNodes(nodes))
		if counter != nil {
			counter.Dropped(Name, reason, len(nodes))
		}
	}
	for _, line := range d.details {
		log.Warn("agents: dropped a reported fact", "problem", line)
	}
	if d.more > 0 {
		log.Warn("agents: dropped more reported facts", "more", d.more)
	}
}

// maxListed caps the names listNodes quotes one by one.
const maxListed = 20

// listNodes lists node names for a log line: the valid host names as a
// hostlist, the others (a report's garbage) quoted, at most maxListed of
// them and each cut to 64 bytes.
func listNodes(nodes []string) string {
	var ok, odd []string
	for _, n := range nodes {
		if topology.CheckHostName(n) == nil && hostlist.ValidName(n) == nil {
			ok = append(ok, n)
			continue
		}
		if len(odd) < maxListed {
			odd = append(odd, strconv.QuoteToASCII(n[:min(len(n), 64)]))
		}
	}
	var parts []string
	if len(ok) > 0 {
		hostlist.Sort(ok)
		parts = append(parts, hostlist.Compress(ok))
	}
	if skipped := len(nodes) - len(ok) - len(odd); skipped > 0 {
		odd = append(odd, "and "+strconv.Itoa(skipped)+" more")
	}
	return strings.Join(append(parts, odd...), " ")
}
