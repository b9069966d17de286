package fabric

import "github.com/toposcope/toposcope/internal/hostlist"

// HostSet is the set of cluster hosts that a fabric provider keeps. The
// zero value keeps every host.
type HostSet struct {
	names []string
	in    map[string]bool
}

// NewHostSet returns the set of names; with no names it keeps every host.
func NewHostSet(names []string) HostSet {
	if len(names) == 0 {
		return HostSet{}
	}
	in := make(map[string]bool, len(names))
	for _, n := range names {
		in[n] = true
	}
	return HostSet{names: names, in: in}
}

// Has reports whether name is kept.
func (s HostSet) Has(name string) bool { return s.in == nil || s.in[name] }

// Names returns the names the set was made of, nil for "every host".
func (s HostSet) Names() []string { return s.names }

// HostSetOf is NewHostSet of a hostlist expression that the provider's
// Validate already accepted (an invalid one keeps every host).
func HostSetOf(hosts string) HostSet {
	names, _ := hostlist.Expand(hosts)
	return NewHostSet(names)
}
