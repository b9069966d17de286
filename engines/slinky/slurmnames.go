package slinky

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// Pod labels that carry a slurmd pod's Slurm node name.
const (
	// LabelSlurmNodeName is Topograph's: when present it is the name.
	LabelSlurmNodeName = "slurm.node.name"
	// LabelPodHostname is slurm-operator's copy of the NodeSet pod's
	// hostname, which is its Slurm node name.
	LabelPodHostname = "nodeset.slinky.slurm.net/pod-hostname"
)

// SlurmName returns the Slurm node name of a slurmd pod: its
// slurm.node.name label if it has one, else its
// nodeset.slinky.slurm.net/pod-hostname label, else its hostname, which
// is spec.hostname, or the pod's name when that is empty (as Kubernetes
// sets it), or the node's name for a pod on the host network.
func SlurmName(p *corev1.Pod) string {
	if v, ok := p.Labels[LabelSlurmNodeName]; ok {
		return v
	}
	if v, ok := p.Labels[LabelPodHostname]; ok {
		return v
	}
	switch {
	case p.Spec.HostNetwork:
		return p.Spec.NodeName
	case p.Spec.Hostname != "":
		return p.Spec.Hostname
	}
	return p.Name
}

// slurmdPod is one slurmd pod bound to a node.
type slurmdPod struct {
	pod, name string
}

// slurmdPods lists the pods of the namespace that the pod selector takes,
// page by page, and returns those bound to a node (spec.nodeName) and not
// finished, by Kubernetes node name, each node's in natural order of
// Slurm name. A pod whose Slurm name cannot be a Slurm node name is left
// out with a warning; two pods giving one name is an error.
func (e *Engine) slurmdPods(ctx context.Context, res *kube.Result) (map[string][]slurmdPod, error) {
	out := map[string][]slurmdPod{}
	byName := map[string]string{} // Slurm name -> pod
	var bad []string
	opts := metav1.ListOptions{LabelSelector: e.cfg.PodSelector, Limit: e.cfg.PageSize}
	for {
		list, err := e.core.Pods(e.cfg.Namespace).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list slurmd pods (namespace %s, podSelector %q): %w", e.cfg.Namespace, e.cfg.PodSelector, err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue // not on a node, or no longer running slurmd
			}
			name := SlurmName(p)
			if err := topology.CheckNodeName(name); err != nil {
				bad = append(bad, fmt.Sprintf("%s (%v)", p.Name, err))
				continue
			}
			if other, dup := byName[name]; dup {
				return nil, fmt.Errorf("slurmd pods %s and %s both give Slurm node name %q: narrow podSelector %q to one Slurm cluster", other, p.Name, name, e.cfg.PodSelector)
			}
			byName[name] = p.Name
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], slurmdPod{pod: p.Name, name: name})
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	for _, ps := range out {
		slices.SortFunc(ps, func(a, b slurmdPod) int { return hostlist.Compare(a.name, b.name) })
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d slurmd pods have no usable Slurm node name and are left out: %s", len(bad), strings.Join(bad, "; ")))
	}
	return out, nil
}

// slurmGraph returns g with every node renamed to the Slurm names of the
// slurmd pods on its Kubernetes node (several pods: several Slurm nodes in
// the same place). A graph node with no slurmd pod is left out and listed
// in a warning, and so are slurmd pods on Kubernetes nodes the graph does
// not hold.
func (e *Engine) slurmGraph(ctx context.Context, g *topology.Graph, res *kube.Result) (*topology.Graph, error) {
	pods, err := e.slurmdPods(ctx, res)
	if err != nil {
		return nil, err
	}
	kubeName := map[string]string{} // graph node -> Kubernetes node
	source := map[string]string{}   // graph node -> its domainSourceLabel value
	if _, err := kube.PlacedNodes(ctx, e.core, "", e.cfg.PageSize, g, &kube.Result{}, func(k *corev1.Node, n *topology.Node) bool {
		kubeName[n.Name] = k.Name
		if e.cfg.DomainSourceLabel != "" {
			source[n.Name] = strings.TrimSpace(k.Labels[e.cfg.DomainSourceLabel])
		}
		return true
	}); err != nil {
		return nil, err
	}
	b := topology.NewBuilder()
	used := map[string]bool{}
	var uncovered, noNode, unlabelled []string
	for i := range g.Nodes() {
		n := &g.Nodes()[i]
		k, ok := kubeName[n.Name]
		if !ok {
			noNode = append(noNode, n.Name)
			continue
		}
		ps := pods[k]
		if len(ps) == 0 {
			uncovered = append(uncovered, n.Name)
			continue
		}
		used[k] = true
		path := g.PathInfo(n.Name)
		domain, sub := n.Domain, n.SubDomain
		if e.cfg.DomainSourceLabel != "" {
			domain, sub = source[n.Name], ""
			if domain == "" {
				unlabelled = append(unlabelled, n.Name)
			}
		}
		for _, p := range ps {
			sn := *n
			sn.Name, sn.Leaf, sn.Domain, sn.SubDomain = p.name, "", "", ""
			b.AddNode(sn)
			if len(path) > 0 {
				b.AddPath(p.name, path)
			}
			if domain != "" {
				b.AddToDomain(p.name, domain, sub)
			}
		}
	}
	if len(unlabelled) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d nodes lack the label %s (domainSourceLabel), so their Slurm nodes are in no block: %s",
			len(unlabelled), e.cfg.DomainSourceLabel, hostlist.Compress(unlabelled)))
	}
	if len(noNode) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d graph nodes match no Kubernetes Node, so no slurmd pod, and are left out of the topology file: %s",
			len(noNode), hostlist.Compress(noNode)))
	}
	if len(uncovered) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d nodes have no slurmd pod (namespace %s, podSelector %q) and are left out of the topology file: %s",
			len(uncovered), e.cfg.Namespace, e.cfg.PodSelector, hostlist.Compress(uncovered)))
	}
	var strays []string
	for k, ps := range pods {
		if !used[k] {
			for _, p := range ps {
				strays = append(strays, p.pod+" on "+k)
			}
		}
	}
	if len(strays) > 0 {
		slices.Sort(strays)
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d slurmd pods are on Kubernetes nodes the graph does not hold, so their Slurm nodes are in no switch or block: %s",
			len(strays), strings.Join(strays, ", ")))
	}
	if n := len(uncovered) + len(noNode); n == len(g.Nodes()) && n > 0 {
		return nil, fmt.Errorf("none of the graph's %d nodes has a slurmd pod (namespace %s, podSelector %q), so the topology file would name no Slurm node: %w",
			n, e.cfg.Namespace, e.cfg.PodSelector, engines.ErrInexpressible)
	}
	sg, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("the graph under Slurm node names: %w", err)
	}
	return sg, nil
}
