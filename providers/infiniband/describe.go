package infiniband

import (
	"path"
	"regexp"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// describer reads host and HCA names from CA node descriptions.
type describer struct {
	pattern      *regexp.Regexp
	host, hcaIdx int
	ignore       []*regexp.Regexp
}

// caKind says what a CA is, judging by its node description.
type caKind uint8

const (
	caHost    caKind = iota // "<host> <hca>": an end point of a host
	caUnnamed               // no host name (no rdma-ndd, or not a valid host name)
	caIgnored               // matched Config.Ignore (SHARP aggregation nodes…)
)

func newDescriber(c NamingRules) (describer, error) {
	re, err := compileHostPattern(c.HostPattern)
	if err != nil {
		return describer{}, err
	}
	d := describer{pattern: re, host: re.SubexpIndex("host"), hcaIdx: re.SubexpIndex("hca")}
	for _, s := range c.Ignore {
		r, err := regexp.Compile(s)
		if err != nil {
			return describer{}, err
		}
		d.ignore = append(d.ignore, r)
	}
	return d, nil
}

// parse classifies a CA description and returns its host and HCA names.
func (d describer) parse(desc string) (kind caKind, host, hca string) {
	for _, r := range d.ignore {
		if r.MatchString(desc) {
			return caIgnored, "", ""
		}
	}
	m := d.pattern.FindStringSubmatch(desc)
	if m == nil || m[d.host] == "" || topology.CheckNodeName(m[d.host]) != nil {
		return caUnnamed, "", ""
	}
	if d.hcaIdx >= 0 {
		hca = m[d.hcaIdx]
	}
	return caHost, m[d.host], hca
}

// selector picks the HCAs (rails) the tree is built from.
type selector struct {
	globs []string
	guids map[uint64]bool
}

func newSelector(c NamingRules) selector {
	s := selector{globs: c.HCAs}
	for _, g := range c.HCAGUIDs {
		v, _ := parseHex([]byte(g), 64) // validated
		if s.guids == nil {
			s.guids = map[uint64]bool{}
		}
		s.guids[v] = true
	}
	return s
}

// all reports whether every HCA is selected.
func (s selector) all() bool { return len(s.globs) == 0 && len(s.guids) == 0 }

// selects reports whether the CA named hca, with these node and port
// GUIDs, is selected: by name or by one of its GUIDs.
func (s selector) selects(hca string, guids []uint64) bool {
	if s.all() {
		return true
	}
	for _, g := range s.globs {
		if ok, _ := path.Match(g, hca); ok {
			return true
		}
	}
	for _, g := range guids {
		if g != 0 && s.guids[g] {
			return true
		}
	}
	return false
}

// switchName returns the human name of a switch from its description:
// <switch-name> for a managed NVIDIA switch ("MF0;<switch-name>:<model>/U1"),
// else the whole description.
func switchName(desc string) string {
	if rest, ok := strings.CutPrefix(desc, "MF0;"); ok {
		if name, _, ok := strings.Cut(rest, ":"); ok && strings.TrimSpace(name) != "" {
			return strings.TrimSpace(name)
		}
	}
	return strings.TrimSpace(desc)
}

// clusterSet expands Config.Nodes; nil means every host.
func clusterSet(nodes string) (map[string]bool, []string) {
	if nodes == "" {
		return nil, nil
	}
	names, _ := hostlist.Expand(nodes) // validated
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set, names
}
