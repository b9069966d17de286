// Package extender is toposcope's kube-scheduler HTTP extender: it
// places a gang of GPU pods once, with the planner of POST
// /v1/placements, holds the chosen node set for the gang and steers
// every pod of it there (filter, prioritize); it scores a lone pod by
// node fit; and it narrows the scheduler's preemption victims by the
// fair-share contract (preempt). Occupancy is the live placement ledger
// (the kubernetes ledger source's pods) plus what is held.
package extender

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/service"
)

// Planner is what the extender asks of the service: placements and
// occupancy with held records (service.Placer).
type Planner interface {
	PlaceWith(ctx context.Context, req placement.Request, cfg placement.Config, opts service.PlaceOptions) (*placement.Result, service.Occupancy, error)
	OccupiedHeld(ctx context.Context, held service.Held, extra ...string) (service.Occupancy, error)
	Standings(o service.Occupancy, cfg placement.Config) (*placement.Standings, error)
	NodeCount() int
	Repeated(names []string) (string, bool)
}

// ErrPod is wrapped when a pod's gang or duration cannot be read.
var ErrPod = errors.New("invalid pod")

// Options are an Extender's dependencies.
type Options struct {
	// Planner places and occupies (required).
	Planner Planner
	// Config is the placement.extender section.
	Config config.Extender
	// Pods says how a pod maps to an account, GPUs and a minimum
	// runtime: the kubernetes ledger source's configuration.
	Pods podsource.Config
	// Placement is the planner's configuration.
	Placement placement.Config
	// Gangs tells the size of a PodGroup gang whose pods carry no size
	// annotation; without it such pods need the annotation.
	Gangs GangSizes
	// Now is the clock; time.Now if nil.
	Now func() time.Time
	// Logger receives decisions; discarded if nil.
	Logger *slog.Logger
	// Shared, when set, keeps the holds where every replica reads them
	// (the service's shared store), so that the filter calls of one
	// gang's pods get one node set whichever replica answers; nil keeps
	// them in this process.
	Shared HoldStore
}

// HoldStore keeps the held gangs of all replicas (store.Store with a
// database): fn gets every hold, encoded, and returns them as they are
// to be, in one transaction.
type HoldStore interface {
	UpdateHolds(ctx context.Context, fn func(map[string][]byte) (map[string][]byte, error)) error
}

// Extender answers kube-scheduler's extender calls. Safe for concurrent
// use.
type Extender struct {
	opts Options
	log  *slog.Logger
	mu   sync.Mutex
	held *holds
}

// New returns an Extender.
func New(o Options) (*Extender, error) {
	if o.Planner == nil {
		return nil, errors.New("extender: a Planner is required")
	}
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("extender: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Extender{opts: o, log: log, held: newHolds(o.Config.HoldTTL, o.Config.MaxHeld)}, nil
}

// job is what the extender reads from a pod.
type job struct {
	account  string
	gpus     int
	gang     string // namespace/name; "" for a lone pod
	size     int
	uid      string
	min      time.Duration
	duration time.Duration
}

// readPod reads the job of a pod; ok is false for a pod the extender
// leaves to the scheduler (no GPUs or no account).
func (e *Extender) readPod(ctx context.Context, p *Pod) (job, bool, error) {
	if p == nil {
		return job{}, false, fmt.Errorf("%w: the call names no pod", ErrPod)
	}
	pod := &p.Pod
	j := job{account: e.opts.Pods.Account(pod), gpus: e.opts.Pods.GPUs(&pod.Spec), uid: string(pod.UID), size: 1}
	if j.gpus == 0 || j.account == "" {
		return j, false, nil
	}
	cfg := e.opts.Config
	name, group := pod.Labels[cfg.GangLabel], ""
	if sg := pod.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
		group = *sg.PodGroupName
		name = cmp.Or(name, group)
	}
	if name != "" {
		j.gang = pod.Namespace + "/" + name
		v, ok := pod.Annotations[cfg.GangSizeAnnotation]
		switch n, err := strconv.Atoi(v); {
		case ok && (err != nil || n < 1 || n > placement.MaxRequestNodes):
			return j, false, fmt.Errorf("%w: pod %s/%s is in gang %q but its annotation %s is %q: want the gang's pod count, 1 to %d",
				ErrPod, pod.Namespace, pod.Name, name, cfg.GangSizeAnnotation, v, placement.MaxRequestNodes)
		case ok:
			j.size = n
		case group != "" && e.opts.Gangs != nil:
			if j.size, err = e.heldSize(ctx, j.gang); err != nil || j.size > 0 {
				if err != nil {
					return j, false, err
				}
				break // known since its first pod
			}
			if j.size, err = e.opts.Gangs.Size(ctx, pod.Namespace, group); err != nil {
				return j, false, err
			}
		default:
			return j, false, fmt.Errorf("%w: pod %s/%s is in gang %q but has no annotation %s with the gang's pod count",
				ErrPod, pod.Namespace, pod.Name, name, cfg.GangSizeAnnotation)
		}
	}
	var err error
	if j.min, err = podsource.DurationAnnotation(pod, e.opts.Pods.MinRuntimeAnnotation); err != nil {
		return j, false, fmt.Errorf("%w: %w", ErrPod, err)
	}
	if j.duration, err = podsource.DurationAnnotation(pod, cfg.DurationAnnotation); err != nil {
		return j, false, fmt.Errorf("%w: %w", ErrPod, err)
	}
	return j, true, nil
}

// heldSize is the pod count of a held gang; 0 if it is not held.
func (e *Extender) heldSize(ctx context.Context, gang string) (int, error) {
	n := 0
	err := e.withHolds(ctx, func(hs *holds) error {
		if h := hs.byKey[gang]; h != nil {
			n = h.size
		}
		return nil
	})
	return n, err
}

// request is the placement request of a job: its whole gang, a pod per
// node (or any split, for 1-GPU pods).
func (j *job) request() placement.Request {
	r := placement.Request{Account: j.account, MinRuntime: j.min, Duration: j.duration}
	if j.gpus == 1 {
		r.GPUs = j.size
	} else {
		r.Nodes, r.GPUsPerNode = j.size, j.gpus
	}
	return r
}

// Filter answers a filter call: a gang's pods keep the nodes held for
// the gang (chosen at its first pod); other pods keep every node.
func (e *Extender) Filter(ctx context.Context, a *Args) (*FilterResult, error) {
	names, err := e.nodeNames(a)
	if err != nil {
		return nil, err
	}
	j, ours, err := e.readPod(ctx, a.Pod)
	if err != nil {
		return &FilterResult{Error: err.Error()}, nil
	}
	if !ours || j.gang == "" {
		return &FilterResult{NodeNames: &names}, nil
	}
	h, err := e.holdFor(ctx, j, names)
	if err != nil {
		failed := make(map[string]string, len(names))
		msg := clip(err.Error(), 300)
		for _, n := range names {
			failed[n] = msg
		}
		return &FilterResult{NodeNames: &[]string{}, FailedNodes: failed}, nil
	}
	// The other nodes are out for good for this pod (preempting there
	// cannot help it: its gang is held elsewhere), with one short reason
	// that names no gang: the answer repeats it for every node, and the
	// scheduler knows the pod.
	keep := make([]string, 0, len(h.nodes))
	for _, n := range names {
		if h.nodes[n] > 0 {
			keep = append(keep, n)
		}
	}
	res := &FilterResult{NodeNames: &keep}
	if len(keep) < len(names) {
		res.OthersUnresolvable = "toposcope holds this pod's gang on other nodes"
	}
	return res, nil
}

// Prioritize answers a prioritize call: a gang's held nodes score the
// most, others nothing; a lone GPU pod scores the nodes by fit, a node
// that it fills exactly the most.
func (e *Extender) Prioritize(ctx context.Context, a *Args) ([]HostPriority, error) {
	names, err := e.nodeNames(a)
	if err != nil {
		return nil, err
	}
	out := make([]HostPriority, len(names))
	for i, n := range names {
		out[i].Host = n
	}
	j, ours, err := e.readPod(ctx, a.Pod)
	if err != nil || !ours {
		return out, err
	}
	if j.gang != "" {
		h, err := e.holdFor(ctx, j, names)
		if err != nil {
			return out, nil // filter has said why; nothing to prefer
		}
		for i := range out {
			if h.nodes[out[i].Host] > 0 {
				out[i].Score = MaxScore
			}
		}
		return out, nil
	}
	o, err := e.occupied(ctx, j.account)
	if err != nil {
		return out, err
	}
	for i := range out {
		occ, ok := o.Cluster.NodeOccupancy(out[i].Host, e.opts.Placement)
		out[i].Score = fitScore(occ, ok, j.gpus)
	}
	return out, nil
}

// fitScore scores a node for a lone pod of gpus GPUs: MaxScore when the
// pod fills the node's free GPUs exactly, less as more are left over,
// at least 1 when it fits; 0 when it does not fit or is unknown.
func fitScore(occ placement.Occupancy, known bool, gpus int) int64 {
	if !known || occ.Free < gpus || occ.GPUs == 0 {
		return 0
	}
	slack := occ.Free - gpus
	return max(1, MaxScore-int64((slack*MaxScore+occ.GPUs-1)/occ.GPUs))
}

// occupied is the ledger's occupancy plus every hold, in one pass
// (holds whose pods are all bound in that ledger are released).
func (e *Extender) occupied(ctx context.Context, extra ...string) (service.Occupancy, error) {
	if e.opts.Shared == nil { // the holds are this process's: lock them only to read them
		return e.opts.Planner.OccupiedHeld(ctx, func(ledger []placement.Record, at time.Time) []placement.Record {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.held.records(ledger, "", at)
		}, extra...)
	}
	var o service.Occupancy
	err := e.withHolds(ctx, func(hs *holds) error {
		var err error
		o, err = e.opts.Planner.OccupiedHeld(ctx, func(ledger []placement.Record, at time.Time) []placement.Record {
			return hs.records(ledger, "", at)
		}, extra...)
		return err
	})
	return o, err
}

// holdFor returns the hold of j's gang, placing the gang on names (the
// nodes the scheduler's own filters left) at its first pod.
func (e *Extender) holdFor(ctx context.Context, j job, names []string) (*hold, error) {
	var out *hold
	err := e.withHolds(ctx, func(hs *holds) error {
		var err error
		out, err = e.holdIn(ctx, hs, j, names)
		return err
	})
	return out, err
}

// holdIn is holdFor on the holds hs.
func (e *Extender) holdIn(ctx context.Context, hs *holds, j job, names []string) (*hold, error) {
	now := e.opts.Now()
	if h := hs.get(j.gang, now); h != nil {
		if j.uid != "" {
			h.members[j.uid] = true
		}
		return h, nil
	}
	held := func(ledger []placement.Record, at time.Time) []placement.Record {
		return hs.records(ledger, j.gang, at)
	}
	req := j.request()
	res, _, err := e.opts.Planner.PlaceWith(ctx, req, e.opts.Placement, service.PlaceOptions{Held: held, Only: names})
	if err != nil {
		return nil, fmt.Errorf("gang %s (%d pods × %d GPUs, account %s): %w", j.gang, j.size, j.gpus, j.account, err)
	}
	best := res.Candidates[0]
	h := &hold{key: j.gang, account: j.account, size: j.size, podGPUs: j.gpus, nodes: make(map[string]int, len(best.Nodes)),
		members: map[string]bool{}, group: best.Group}
	for _, t := range best.Nodes {
		h.nodes[t.Node] = t.GPUs
	}
	if j.uid != "" {
		h.members[j.uid] = true
	}
	if dropped := hs.put(h, now); dropped != "" {
		e.log.Warn("extender: too many gangs held; dropped the least recently used", "dropped", dropped, "maxHeld", e.opts.Config.MaxHeld)
	}
	e.log.Info("extender: gang placed and held", "gang", j.gang, "account", j.account, "pods", j.size, "gpusPerPod", j.gpus,
		"group", best.Group, "class", best.Class, "leaves", best.Scores.Leaves, "nodes", len(best.Nodes))
	return h, nil
}

// ErrNodeNames is wrapped when a call's node names cannot come from a
// scheduler: one named twice, or more than the topology could hold.
var ErrNodeNames = errors.New("invalid NodeNames")

// nodeNames returns the node names of a call. A scheduler passes each
// feasible node once, and its nodes are the topology's (newer ones until
// the next discovery): twice the topology's nodes and 1,024 more are
// refused, so that an answer, which repeats each name, stays within a
// bound set by the cluster, not by the caller.
func (e *Extender) nodeNames(a *Args) ([]string, error) {
	if a.NodeNames == nil {
		if a.Nodes != nil && a.Nodes.present {
			return nil, ErrNodeObjects
		}
		return []string{}, nil
	}
	names := *a.NodeNames
	if limit := 2*e.opts.Planner.NodeCount() + 1024; len(names) > limit {
		return nil, fmt.Errorf("%w: %d nodes, more than %d (twice the topology's nodes and 1,024)", ErrNodeNames, len(names), limit)
	}
	if n, dup := e.opts.Planner.Repeated(names); dup {
		return nil, fmt.Errorf("%w: node %q is named twice", ErrNodeNames, clip(n, 64))
	}
	return names, nil
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
