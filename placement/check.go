package placement

import (
	"fmt"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// CheckRecords vets a batch of ledger records against the current graph
// before it is stored, so that a bad record can never break the
// capacity, placement and fair-share answers later. Node lists given as
// hostlist expressions are expanded in place. Each problem is a
// config.FieldError naming the record and field: a node the graph does
// not have, a node listed twice, more GPUs than the listed nodes hold,
// and running work that would hold more GPUs on a node than it has,
// together with held (the records already stored).
func CheckRecords(g *topology.Graph, held, batch []Record, now time.Time) error {
	var errs []error
	used := map[string]int{}
	occupy := func(r *Record) (string, int, int) {
		if len(r.Nodes) == 0 || !r.Running(now) {
			return "", 0, 0
		}
		per, extra := r.GPUs/len(r.Nodes), r.GPUs%len(r.Nodes)
		for k, name := range r.Nodes {
			n, ok := g.Node(name)
			if !ok {
				continue
			}
			take := per
			if k < extra {
				take++
			}
			if used[name]+take > n.GPUs {
				return name, n.GPUs, used[name]
			}
			used[name] += take
		}
		return "", 0, 0
	}
	for i := range held {
		occupy(&held[i])
	}
	for i := range batch {
		r := &batch[i]
		f := fmt.Sprintf("records[%d]", i)
		if err := expandNodes(r, f); err != nil {
			errs = append(errs, err)
			continue
		}
		capacity, bad := 0, false
		seen := make(map[string]bool, len(r.Nodes))
		for k, name := range r.Nodes {
			n, ok := g.Node(name)
			switch {
			case !ok:
				errs = append(errs, config.Errorf(fmt.Sprintf("%s.nodes[%d]", f, k), "%q is not a node of the current topology", name))
				bad = true
			case seen[name]:
				errs = append(errs, config.Errorf(fmt.Sprintf("%s.nodes[%d]", f, k), "%q is listed twice", name))
				bad = true
			default:
				capacity += n.GPUs
			}
			seen[name] = true
		}
		if bad {
			continue
		}
		if len(r.Nodes) > 0 && r.GPUs > capacity {
			errs = append(errs, config.Errorf(f+".gpus", "%d GPUs on nodes that have %d", r.GPUs, capacity))
			continue
		}
		if name, gpus, already := occupy(r); name != "" {
			errs = append(errs, config.Errorf(f+".nodes", "node %q has %d GPUs and %d are already held by running work: the records overlap", name, gpus, already))
		}
	}
	return config.Join(errs...)
}

// expandNodes replaces hostlist expressions in r.Nodes by their names.
func expandNodes(r *Record, field string) error {
	if !strings.ContainsAny(strings.Join(r.Nodes, ""), "[,") {
		return nil
	}
	var names []string
	for k, expr := range r.Nodes {
		got, err := hostlist.Expand(expr)
		if err != nil {
			return config.Errorf(fmt.Sprintf("%s.nodes[%d]", field, k), "%v", err)
		}
		names = append(names, got...)
	}
	r.Nodes = names
	return nil
}

// UsableRecords returns the records that occupy g consistently at now,
// in order, and the workloads of those left out (an unknown node, or more
// GPUs than a node has left): a store that already holds a bad record
// still answers with the rest, and says which it ignored.
func UsableRecords(g *topology.Graph, recs []Record, now time.Time) ([]Record, []string) {
	used := map[string]int{}
	keep := make([]Record, 0, len(recs))
	var bad []string
	for i := range recs {
		r := &recs[i]
		if len(r.Nodes) == 0 || !r.Running(now) {
			keep = append(keep, *r)
			continue
		}
		per, extra := r.GPUs/len(r.Nodes), r.GPUs%len(r.Nodes)
		take := make(map[string]int, len(r.Nodes))
		ok := true
		for k, name := range r.Nodes {
			n, found := g.Node(name)
			t := per
			if k < extra {
				t++
			}
			if !found || used[name]+take[name]+t > n.GPUs {
				ok = false
				break
			}
			take[name] += t
		}
		if !ok {
			bad = append(bad, r.Workload)
			continue
		}
		for name, t := range take {
			used[name] += t
		}
		keep = append(keep, *r)
	}
	return keep, bad
}
