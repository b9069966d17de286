package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
)

// Known keys of each mapping of the model format, as listed in errors.
const (
	modelKeys    = "defaults, description, domains, name, nodes, switches"
	defaultKeys  = "gpus, region, zone"
	switchKeys   = "children, displayName, id, linkSpeedGbps, nodes"
	domainKeys   = "id, nodes, subDomains"
	subKeys      = "id, nodes"
	groupKeys    = "attributes, gpus, instanceIDs, names, region, zone"
	maxErrors    = 20
	maxTreeDepth = 32
	// maxNames caps the names all hostlists of a model expand to (each
	// node is usually listed two or three times), against memory blow-up.
	maxNames = 10 * MaxGenerateNodes
)

// errList collects model errors as config.FieldErrors, up to maxErrors.
type errList struct {
	errs  []error
	extra int
}

func (e *errList) add(field string, line int, format string, args ...any) {
	if len(e.errs) >= maxErrors {
		e.extra++
		return
	}
	e.errs = append(e.errs, &config.FieldError{Field: field, Line: line, Err: fmt.Errorf(format, args...)})
}

func (e *errList) failed() bool { return len(e.errs) > 0 }

func (e *errList) err() error {
	if len(e.errs) == 0 {
		return nil
	}
	errs := e.errs
	if e.extra > 0 {
		errs = append(errs[:len(errs):len(errs)], &config.MoreProblems{N: e.extra})
	}
	return errors.Join(errs...)
}

// hostExpr is a hostlist expression found at key of the mapping at path.
type hostExpr struct {
	expr string
	path string
	key  string
	line int
}

func (h *hostExpr) set() bool     { return h.expr != "" }
func (h *hostExpr) field() string { return join(h.path, h.key) }

// rawSwitch, rawDomain, rawSub and rawGroup are the decoded but not yet
// resolved items of a model. path is the item's field path, line the line
// where it starts.
type rawSwitch struct {
	info   rawID
	parent int32
	nodes  hostExpr
	speed  uint32
	disp   string
}

type rawID struct {
	id   string
	path string
	line int // of the id key, else of the item
}

type rawDomain struct {
	rawID
	nodes hostExpr
	subs  []rawSub
}

type rawSub struct {
	rawID
	nodes hostExpr
}

type rawGroup struct {
	path        string
	line        int
	names       hostExpr
	instanceIDs hostExpr
	facts       facts
}

// decoder turns the YAML tree of a model into raw items.
type decoder struct {
	errList
	name, description string
	defaults          facts
	switches          []rawSwitch
	domains           []rawDomain
	groups            []rawGroup
	expanded          int               // names expanded so far
	expander          hostlist.Expander // expands them, reusing its buffers
	// budget caps the YAML elements the decoder visits, aliases followed:
	// a few aliases are fine, an alias bomb is not (spend).
	budget, spent int
	overBudget    bool
}

// minBudget is the least element budget of a model; larger documents get
// budgetFactor elements per element they hold.
const (
	minBudget    = 1_000_000
	budgetFactor = 4
)

// spend charges n visited elements; past the budget it records one error
// (at line) and returns false, and the caller stops.
func (d *decoder) spend(n, line int) bool {
	if d.overBudget {
		return false
	}
	if d.spent += n; d.spent > d.budget {
		d.overBudget = true
		d.add("(document)", line, "YAML aliases expand to more than %d elements: refusing to expand further", d.budget)
		return false
	}
	return true
}

// countNodes counts the elements of the document as written (aliases not
// followed).
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

// decodeDocument parses data as one YAML document whose root is a mapping.
func decodeDocument(data []byte) (*yaml.Node, error) {
	if root, ok := readBlockYAML(data); ok {
		return root, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &config.FieldError{Field: "(document)", Err: errors.New("empty model")}
		}
		return nil, &config.FieldError{Field: "(document)", Line: yamlErrorLine(err), Err: fmt.Errorf("invalid YAML: %w", err)}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, &config.FieldError{Field: "(document)", Line: next.Line, Err: errors.New("more than one YAML document")}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return root, nil
}

// yamlErrorLine returns N from the "line N:" of a yaml.v3 syntax error,
// or 0.
func yamlErrorLine(err error) int {
	msg := err.Error()
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	n := 0
	for _, c := range []byte(msg[i+len("line "):]) {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func (d *decoder) model(root *yaml.Node) {
	var switches, domains, groups *yaml.Node
	d.mapping(root, "", modelKeys, func(key string, _, v *yaml.Node) bool {
		switch key {
		case "name":
			d.name = d.str(v, "", key)
		case "description":
			d.description = strings.TrimSpace(d.str(v, "", key))
		case "defaults":
			d.mapping(v, key, defaultKeys, func(k string, _, v *yaml.Node) bool {
				return d.fact(&d.defaults, k, v, key)
			})
		case "switches":
			switches = v
		case "domains":
			domains = v
		case "nodes":
			groups = v
		default:
			return false
		}
		return true
	})
	if d.name == "" && root.Kind == yaml.MappingNode {
		d.add("name", root.Line, "is required")
	}
	if switches != nil {
		d.switchList(switches, "switches", -1, 0)
	}
	if domains != nil {
		d.domainList(domains)
	}
	if groups != nil {
		d.groupList(groups)
	}
}

// fact decodes one of the keys shared by defaults and node groups.
func (d *decoder) fact(f *facts, key string, v *yaml.Node, path string) bool {
	switch key {
	case "gpus":
		if n := d.integer(v, path, key, math.MaxInt32); n >= 0 {
			f.gpus = n
		}
	case "region":
		f.region = d.str(v, path, key)
	case "zone":
		f.zone = d.str(v, path, key)
	default:
		return false
	}
	return true
}

func (d *decoder) switchList(seq *yaml.Node, path string, parent int32, depth int) {
	if !d.sequence(seq, path) {
		return
	}
	if depth >= maxTreeDepth {
		d.add(path, seq.Line, "switch tree is deeper than %d levels", maxTreeDepth)
		return
	}
	for i, item := range seq.Content {
		p := index(path, i)
		idx := int32(len(d.switches))
		d.switches = append(d.switches, rawSwitch{info: rawID{path: p, line: item.Line}, parent: parent})
		var children *yaml.Node
		d.mapping(item, p, switchKeys, func(key string, k, v *yaml.Node) bool {
			s := &d.switches[idx]
			switch key {
			case "id":
				s.info.id, s.info.line = d.str(v, p, key), k.Line
			case "displayName":
				s.disp = d.str(v, p, key)
			case "linkSpeedGbps":
				if n := d.integer(v, p, key, math.MaxUint32); n >= 0 {
					s.speed = uint32(n)
				}
			case "children":
				children = v
			case "nodes":
				s.nodes = d.hostlist(v, p, key, k.Line)
			default:
				return false
			}
			return true
		})
		s := &d.switches[idx]
		if s.info.id == "" && item.Kind == yaml.MappingNode {
			d.add(join(p, "id"), item.Line, "is required")
		}
		switch {
		case children != nil && s.nodes.set():
			d.add(p, item.Line, "has both children and nodes: a switch holds either child switches or nodes")
		case children != nil:
			if children.Kind == yaml.SequenceNode && len(children.Content) == 0 {
				d.add(join(p, "children"), children.Line, "is empty")
			}
			d.switchList(children, join(p, "children"), idx, depth+1)
		case !s.nodes.set() && item.Kind == yaml.MappingNode:
			d.add(p, item.Line, "needs either children or nodes")
		}
	}
}

func (d *decoder) domainList(seq *yaml.Node) {
	if !d.sequence(seq, "domains") {
		return
	}
	d.domains = make([]rawDomain, len(seq.Content))
	for i, item := range seq.Content {
		p := index("domains", i)
		dom := &d.domains[i]
		dom.rawID = rawID{path: p, line: item.Line}
		d.mapping(item, p, domainKeys, func(key string, k, v *yaml.Node) bool {
			switch key {
			case "id":
				dom.id, dom.line = d.str(v, p, key), k.Line
			case "nodes":
				dom.nodes = d.hostlist(v, p, key, k.Line)
			case "subDomains":
				dom.subs = d.subList(v, join(p, key))
			default:
				return false
			}
			return true
		})
		if dom.id == "" && item.Kind == yaml.MappingNode {
			d.add(join(p, "id"), item.Line, "is required")
		}
		if !dom.nodes.set() && len(dom.subs) == 0 && item.Kind == yaml.MappingNode {
			d.add(p, item.Line, "needs nodes or subDomains")
		}
	}
}

func (d *decoder) subList(seq *yaml.Node, path string) []rawSub {
	if !d.sequence(seq, path) {
		return nil
	}
	subs := make([]rawSub, len(seq.Content))
	for i, item := range seq.Content {
		p := index(path, i)
		sub := &subs[i]
		sub.rawID = rawID{path: p, line: item.Line}
		d.mapping(item, p, subKeys, func(key string, k, v *yaml.Node) bool {
			switch key {
			case "id":
				sub.id, sub.line = d.str(v, p, key), k.Line
			case "nodes":
				sub.nodes = d.hostlist(v, p, key, k.Line)
			default:
				return false
			}
			return true
		})
		if item.Kind != yaml.MappingNode {
			continue
		}
		if sub.id == "" {
			d.add(join(p, "id"), item.Line, "is required")
		}
		if !sub.nodes.set() {
			d.add(join(p, "nodes"), item.Line, "is required")
		}
	}
	return subs
}

func (d *decoder) groupList(seq *yaml.Node) {
	if !d.sequence(seq, "nodes") {
		return
	}
	d.groups = make([]rawGroup, len(seq.Content))
	for i, item := range seq.Content {
		p := index("nodes", i)
		g := &d.groups[i]
		g.path, g.line, g.facts = p, item.Line, d.defaults
		d.mapping(item, p, groupKeys, func(key string, k, v *yaml.Node) bool {
			switch key {
			case "names":
				g.names = d.hostlist(v, p, key, k.Line)
			case "instanceIDs":
				g.instanceIDs = d.hostlist(v, p, key, k.Line)
			case "attributes":
				g.facts.attrs = d.attributes(v, join(p, key))
			default:
				return d.fact(&g.facts, key, v, p)
			}
			return true
		})
		if !g.names.set() && item.Kind == yaml.MappingNode {
			d.add(join(p, "names"), item.Line, "is required")
		}
	}
}

func (d *decoder) attributes(v *yaml.Node, path string) map[string]string {
	if v.Kind != yaml.MappingNode {
		d.add(path, v.Line, "must be a mapping of names to values")
		return nil
	}
	out := make(map[string]string, len(v.Content)/2)
	d.mapping(v, path, "", func(key string, k, val *yaml.Node) bool {
		if key == "" {
			d.add(path, k.Line, "attribute name is empty")
		}
		out[key] = d.str(val, path, key)
		return true
	})
	return out
}
