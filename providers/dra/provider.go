// Package dra is the provider that reads NVLink domains from Dynamic
// Resource Allocation: the ResourceSlices (resource.k8s.io/v1) a DRA
// driver publishes for each node. A node's domain is the value of the
// configured device attributes, joined with "."; every device of the
// node that has them must agree. It gives domains only, no switch tree:
// merge it with a fabric provider, or publish blocks from it alone.
package dra

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "dra"

// ErrConflict is wrapped when a node's devices name different domains.
var ErrConflict = errors.New("devices of one node disagree")

// Provider reads NVLink domains from ResourceSlices.
type Provider struct {
	cfg  Config
	core *kubeclient.Core
	log  *slog.Logger
}

// New validates cfg and returns the provider; core lists the
// ResourceSlices and may be nil when cfg.Slices are given.
func New(cfg Config, core *kubeclient.Core, deps providers.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if core == nil && len(cfg.Slices) == 0 {
		return nil, fmt.Errorf("%s: no Kubernetes client and no slices", Name)
	}
	return &Provider{cfg: cfg, core: core, log: deps.WithDefaults().Logger}, nil
}

// device is one device's attributes, keyed by qualified name.
type device struct {
	name  string
	attrs map[string]string
}

// Discover reads the driver's node-local ResourceSlices and places each
// node (the requested ones, or every node with a slice) in the domain
// its devices name. A requested node without slices, or whose devices
// lack the attributes, is kept unplaced; devices that disagree are an
// error naming the node.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	byNode, err := p.devices(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(byNode))
	if len(req.Nodes) > 0 {
		for _, r := range req.Nodes {
			names = append(names, r.Name)
		}
	} else {
		for n := range byNode {
			names = append(names, n)
		}
	}
	hostlist.Sort(names)
	b := topology.NewBuilder()
	var errs []error
	missing := 0
	for _, name := range names {
		devs := byNode[name]
		b.AddNode(topology.Node{Name: name, GPUs: len(devs)})
		domain, sub, err := p.domainOf(name, devs)
		switch {
		case err != nil:
			errs = append(errs, err)
		case domain == "":
			missing++
		default:
			b.AddToDomain(name, domain, sub)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", Name, errors.Join(errs...))
	}
	if missing > 0 {
		p.log.Warn("dra: nodes without the domain attributes are left unplaced", "nodes", missing, "attributes", p.cfg.DomainAttributes, "driver", p.cfg.Driver)
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("%s: build graph: %w", Name, err)
	}
	return g, nil
}

// domainOf returns the domain and sub-domain the node's devices name.
func (p *Provider) domainOf(node string, devs []device) (string, string, error) {
	var domain, sub, from string
	for _, d := range devs {
		parts := make([]string, 0, len(p.cfg.DomainAttributes))
		for _, a := range p.cfg.DomainAttributes {
			v, ok := d.attrs[p.qualify(a)]
			if !ok || v == "" {
				break
			}
			parts = append(parts, v)
		}
		if len(parts) < len(p.cfg.DomainAttributes) {
			continue // a device without the attributes (a NIC, a MIG profile...)
		}
		dom := strings.Join(parts, ".")
		if domain != "" && dom != domain {
			return "", "", fmt.Errorf("node %q: device %s is in domain %q, device %s in %q: %w", node, from, domain, d.name, dom, ErrConflict)
		}
		domain, from = dom, d.name
		if p.cfg.SubDomainAttribute != "" && sub == "" {
			sub = d.attrs[p.qualify(p.cfg.SubDomainAttribute)]
		}
	}
	return domain, sub, nil
}

// qualify makes an attribute name qualified by the driver's domain.
func (p *Provider) qualify(a string) string {
	if strings.Contains(a, "/") {
		return a
	}
	return p.cfg.Driver + "/" + a
}

// devices returns the devices of every node, from the static slices or
// from the cluster's ResourceSlices of the driver.
func (p *Provider) devices(ctx context.Context) (map[string][]device, error) {
	out := map[string][]device{}
	if len(p.cfg.Slices) > 0 {
		for _, s := range p.cfg.Slices {
			for _, d := range s.Devices {
				attrs := make(map[string]string, len(d.Attributes))
				for k, v := range d.Attributes {
					attrs[p.qualify(k)] = v
				}
				out[s.Node] = append(out[s.Node], device{name: d.Name, attrs: attrs})
			}
		}
		return out, nil
	}
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.driver", p.cfg.Driver).String(), Limit: p.cfg.PageSize}
	for {
		list, err := p.core.ResourceSlices().List(ctx, opts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: list ResourceSlices: %w", Name, ctx.Err())
			}
			return nil, fmt.Errorf("%s: list ResourceSlices: %w", Name, providers.ClassifyKube(err))
		}
		for i := range list.Items {
			s := &list.Items[i]
			if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
				continue // a slice of several nodes says nothing of one
			}
			for _, d := range s.Spec.Devices {
				out[*s.Spec.NodeName] = append(out[*s.Spec.NodeName], device{name: d.Name, attrs: p.attributes(d.Attributes)})
			}
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// attributes renders a device's attributes as strings, keyed by
// qualified name.
func (p *Provider) attributes(in map[resourcev1.QualifiedName]resourcev1.DeviceAttribute) map[string]string {
	out := make(map[string]string, len(in))
	for k, a := range in {
		var v string
		switch {
		case a.StringValue != nil:
			v = *a.StringValue
		case a.IntValue != nil:
			v = strconv.FormatInt(*a.IntValue, 10)
		case a.BoolValue != nil:
			v = strconv.FormatBool(*a.BoolValue)
		case a.VersionValue != nil:
			v = *a.VersionValue
		}
		out[p.qualify(string(k))] = v
	}
	return out
}

// NewFactory describes the dra provider to the registry.
func NewFactory() providers.Factory {
	return providers.NewFactory(Name, "NVLink domains from DRA ResourceSlices (resource.k8s.io/v1): the configured device attributes of each node's devices",
		exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) {
			var core *kubeclient.Core
			if len(c.Slices) == 0 {
				clients, err := c.Clients()
				if err != nil {
					return nil, fmt.Errorf("%s: %w", Name, err)
				}
				core = clients.Core
			}
			return New(c, core, d)
		})
}
