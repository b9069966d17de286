package agents

import (
	"cmp"
	"errors"
	"slices"

	"github.com/toposcope/toposcope/topology"
)

// Reasons a node's placement is dropped at discovery, besides those of
// vet: the placement would make the graph unbuildable.
const (
	// DropNameCollision is a switch or domain whose safe name is another
	// switch's, domain's or node's (a switch reported as "gpu001", a
	// domain "dom/1" beside "dom-1-<hash>").
	DropNameCollision = "name_collision"
	// DropDomainConflict is a domain or rack that cannot join the
	// domains placed before it.
	DropDomainConflict = "domain_conflict"
)

// placed is one node's reported placement: its fabric path, or its
// domain and rack.
type placed struct {
	node    string
	path    []topology.SwitchInfo
	domain  string
	sub     string
	support int
}

// bySupport orders placements as they are tried: the best supported
// first (a path by its least reported switch, a domain by its nodes),
// then by node name. A placement that one report alone makes up is tried
// after every placement many nodes agree on, so it cannot take the name
// of theirs.
func bySupport(a, b placed) int {
	return cmp.Or(cmp.Compare(b.support, a.support), cmp.Compare(a.domain, b.domain), cmp.Compare(a.node, b.node))
}

// placePaths tries each node's fabric path on b (whose nodes are all
// declared) in order of support, and drops with a reason the paths that
// would make the graph unbuildable.
func placePaths(b *topology.Builder, paths map[string][]string, d *drops) {
	count := map[string]int{}
	for _, path := range paths {
		for _, id := range path {
			count[id]++
		}
	}
	list := make([]placed, 0, len(paths))
	for node, ids := range paths {
		p := placed{node: node, path: make([]topology.SwitchInfo, len(ids)), support: len(paths) + 1}
		for i, id := range ids {
			p.path[i] = topology.SwitchInfo{ID: id}
			p.support = min(p.support, count[id])
		}
		list = append(list, p)
	}
	slices.SortFunc(list, bySupport)
	for _, p := range list {
		if err := b.TryAddPath(p.node, p.path); err != nil {
			d.drop(reasonOf(err, DropFabricConflict), p.node, err)
		}
	}
}

// placeDomains tries each node's domain and rack on b in order of
// support. A rack that cannot join keeps the node in its domain without
// the rack; a domain that cannot join is dropped.
func placeDomains(b *topology.Builder, list []placed, d *drops) {
	count := map[string]int{}
	for _, p := range list {
		count[p.domain]++
	}
	for i := range list {
		list[i].support = count[list[i].domain]
	}
	slices.SortFunc(list, bySupport)
	for _, p := range list {
		err := b.TryAddToDomain(p.node, p.domain, p.sub)
		if errors.Is(err, topology.ErrSubDomain) {
			d.drop(DropRackConflict, p.node, err)
			err = b.TryAddToDomain(p.node, p.domain, "")
		}
		if err != nil {
			d.drop(reasonOf(err, DropDomainConflict), p.node, err)
		}
	}
}

// reasonOf is DropNameCollision for a name collision, else otherwise.
func reasonOf(err error, otherwise string) string {
	if errors.Is(err, topology.ErrNameCollision) {
		return DropNameCollision
	}
	return otherwise
}
