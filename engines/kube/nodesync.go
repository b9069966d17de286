package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// NodeSpec says which node metadata an engine manages and what it should
// be.
type NodeSpec struct {
	// Desired returns the managed labels and annotations graph node n
	// should carry. ok == false leaves the Kubernetes node untouched and
	// counts it refused.
	Desired func(n *topology.Node) (labels, annotations map[string]string, ok bool)
	// ManagedLabel and ManagedAnnotation report whether the engine owns a
	// key; an owned key that Desired does not return is removed. Keys not
	// owned are never touched. Nil owns nothing.
	ManagedLabel, ManagedAnnotation func(key string) bool
	// OmitLabel, when set, reports the desired labels that Kubernetes
	// node k must not carry after all (an owned one it has is removed).
	OmitLabel func(k *corev1.Node, key string) bool
}

// NodeWriter brings Kubernetes Nodes' managed labels and annotations to
// what a graph implies with the fewest requests: one paged LIST, then one
// JSON merge patch per node whose managed metadata differ, and none for
// the others. Only nodes present (and placed) in the graph are written; a
// node the graph lacks keeps its labels, so a partial discovery strips
// nothing.
type NodeWriter struct {
	// Core is the client.
	Core *kubeclient.Core
	// Selector restricts the LIST to matching nodes (a label selector;
	// empty lists all).
	Selector string
	// PageSize is the LIST page size; Concurrency the number of patches in
	// flight.
	PageSize    int64
	Concurrency int
	// Logger receives progress.
	Logger *slog.Logger
}

// nodePatch is one planned write.
type nodePatch struct {
	name string
	body []byte
}

// NodePlan is the set of node patches planned by NodeWriter.Plan.
type NodePlan struct {
	w       NodeWriter
	engine  string
	patches []nodePatch
}

// Len is the number of nodes to patch.
func (p *NodePlan) Len() int { return len(p.patches) }

// Sync plans and (unless opts.DryRun) applies spec to the nodes, filling
// res. A guard refusal or a LIST failure writes nothing.
func (w NodeWriter) Sync(ctx context.Context, g *topology.Graph, spec NodeSpec, opts ApplyOptions, res *Result) error {
	p, err := w.Plan(ctx, g, spec, res)
	if err != nil {
		return err
	}
	res.DryRun = opts.DryRun
	if err := CheckGuard(ctx, g, res, opts); err != nil {
		return err
	}
	if opts.DryRun {
		return nil
	}
	return p.Write(ctx, res)
}

// Write sends the planned patches, Concurrency at a time. On failure
// res.Changed is lowered to the patches that succeeded and the error
// wraps ErrWrite.
func (p *NodePlan) Write(ctx context.Context, res *Result) error {
	if len(p.patches) == 0 {
		return nil
	}
	var done atomic.Int64
	errs := forEach(ctx, len(p.patches), p.w.Concurrency, func(i int) error {
		np := p.patches[i]
		_, err := p.w.Core.Nodes().Patch(ctx, np.name, types.MergePatchType, np.body, metav1.PatchOptions{FieldManager: kubeclient.FieldManager})
		if err != nil {
			return fmt.Errorf("patch node %s: %w", np.name, err)
		}
		done.Add(1)
		return nil
	})
	if len(errs) > 0 {
		failed := len(p.patches) - int(done.Load())
		res.Changed -= failed
		return fmt.Errorf("%s: %d of %d node patches failed or were not sent: %w: %w", p.engine, failed, len(p.patches), ErrWrite, joinFirst(errs, 10))
	}
	return nil
}

// PlacedNodes lists the Kubernetes nodes (label selector, paged) and
// calls placed for each with the graph node it matches; a node that
// matches none, or that placed rejects, is added to res.Refused (sorted).
// It returns the pages read.
func PlacedNodes(ctx context.Context, core *kubeclient.Core, selector string, pageSize int64, g *topology.Graph, res *Result,
	placed func(k *corev1.Node, n *topology.Node) bool,
) (int, error) {
	m := NewMatcher(g)
	opts := metav1.ListOptions{LabelSelector: selector, Limit: pageSize}
	pages := 0
	for {
		list, err := core.Nodes().List(ctx, opts)
		if err != nil {
			return pages, fmt.Errorf("list nodes: %w", err)
		}
		pages++
		for i := range list.Items {
			k := &list.Items[i]
			if n, _ := m.Match(k); n == nil || !placed(k, n) {
				res.Refused = append(res.Refused, k.Name)
			}
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	hostlist.Sort(res.Refused)
	return pages, nil
}

// Plan lists the nodes page by page and computes the patches, adding
// them to res (Changed, Unchanged, Refused, Changes, Warnings). It writes
// nothing.
func (w NodeWriter) Plan(ctx context.Context, g *topology.Graph, spec NodeSpec, res *Result) (*NodePlan, error) {
	seen := make(map[string]bool, len(g.Nodes()))
	var patches []nodePatch
	pages, err := PlacedNodes(ctx, w.Core, w.Selector, w.PageSize, g, res, func(k *corev1.Node, n *topology.Node) bool {
		seen[n.Name] = true
		labels, annotations, ok := spec.Desired(n)
		if !ok {
			return false
		}
		if spec.OmitLabel != nil {
			labels = maps.Clone(labels)
			maps.DeleteFunc(labels, func(key, _ string) bool { return spec.OmitLabel(k, key) })
		}
		p, c := diffNode(k, labels, annotations, spec)
		if p == nil {
			res.Unchanged++
			return true
		}
		patches = append(patches, nodePatch{name: k.Name, body: p})
		res.Changes = append(res.Changes, c)
		res.Changed++
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", res.Engine, err)
	}
	var missing []string
	for _, n := range g.Nodes() {
		if !seen[n.Name] {
			missing = append(missing, n.Name)
		}
	}
	if len(missing) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d graph nodes match no Kubernetes node: %s", len(missing), shortList(missing)))
	}
	if w.Logger != nil {
		w.Logger.DebugContext(ctx, "nodes planned", "engine", res.Engine, "pages", pages, "patches", len(patches), "unchanged", res.Unchanged, "refused", len(res.Refused))
	}
	return &NodePlan{w: w, engine: res.Engine, patches: patches}, nil
}

// diffNode returns the merge patch that brings k's managed metadata to the
// desired values (nil when nothing differs) and its description.
func diffNode(k *corev1.Node, labels, annotations map[string]string, spec NodeSpec) ([]byte, Change) {
	c := Change{Kind: "Node", Name: k.Name, Op: "patch", Set: map[string]string{}}
	lp := diffMap(k.Labels, labels, spec.ManagedLabel, "label ", &c)
	ap := diffMap(k.Annotations, annotations, spec.ManagedAnnotation, "annotation ", &c)
	if lp == nil && ap == nil {
		return nil, Change{}
	}
	meta := map[string]any{}
	if lp != nil {
		meta["labels"] = lp
	}
	if ap != nil {
		meta["annotations"] = ap
	}
	body, _ := json.Marshal(map[string]any{"metadata": meta}) // maps of strings: cannot fail
	return body, c
}

// diffMap returns the merge-patch map (nil value = remove) from have to
// want, or nil when they agree on every managed key.
func diffMap(have, want map[string]string, managed func(string) bool, what string, c *Change) map[string]*string {
	var out map[string]*string
	set := func(k string, v *string) {
		if out == nil {
			out = map[string]*string{}
		}
		out[k] = v
	}
	for _, k := range sortedKeys(want) {
		if v, ok := have[k]; !ok || v != want[k] {
			val := want[k]
			set(k, &val)
			c.Set[what+k] = val
		}
	}
	if managed != nil {
		for _, k := range sortedKeys(have) {
			if _, keep := want[k]; !keep && managed(k) {
				set(k, nil)
				c.Remove = append(c.Remove, what+k)
			}
		}
	}
	return out
}

// forEach runs fn(0..n-1) on up to conc goroutines and returns the errors.
// It stops starting new calls once ctx is done.
func forEach(ctx context.Context, n, conc int, fn func(i int) error) []error {
	conc = max(1, min(conc, n))
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	next := make(chan int)
	for range conc {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("%d writes not attempted: %w", n-i, ctx.Err()))
			mu.Unlock()
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

// joinFirst joins at most k errors and counts the rest.
func joinFirst(errs []error, k int) error {
	if len(errs) <= k {
		return errors.Join(errs...)
	}
	return errors.Join(append(errs[:k:k], fmt.Errorf("and %d more", len(errs)-k))...)
}
