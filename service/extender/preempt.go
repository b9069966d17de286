package extender

import (
	"context"
	"slices"

	"github.com/toposcope/toposcope/placement"
)

// Preempt answers a preempt call: of the nodes the scheduler proposes,
// with their victims, it keeps those whose every victim our contract
// allows (placement.NarrowPreemption), and lists the others with why.
// A pod the extender leaves to the scheduler (no GPUs or no account)
// keeps every proposal.
func (e *Extender) Preempt(ctx context.Context, a *PreemptionArgs) (*PreemptionResult, error) {
	proposals := a.NodeNameToMetaVictims
	if proposals == nil && a.NodeNameToVictims != nil {
		proposals = make(map[string]*MetaVictims, len(a.NodeNameToVictims))
		for n, v := range a.NodeNameToVictims {
			mv := &MetaVictims{NumPDBViolations: v.NumPDBViolations}
			for _, p := range v.Pods {
				if p != nil {
					mv.Pods = append(mv.Pods, &MetaPod{UID: string(p.UID)})
				}
			}
			proposals[n] = mv
		}
	}
	out := &PreemptionResult{NodeNameToMetaVictims: map[string]*MetaVictims{}, Refused: []Refusal{}}
	j, ours, err := e.readPod(ctx, a.Pod)
	if err != nil {
		return nil, err
	}
	if !ours {
		for n, v := range proposals {
			out.NodeNameToMetaVictims[n] = v
		}
		return out, nil
	}
	o, err := e.occupied(ctx, j.account)
	if err != nil {
		return nil, err
	}
	st, err := e.opts.Planner.Standings(o, e.opts.Placement)
	if err != nil {
		return nil, err
	}
	byUID := boundPods(o.View.Records, o.At)
	nodes := make([]string, 0, len(proposals))
	for n := range proposals {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	props := make([]placement.Proposal, len(nodes))
	for i, n := range nodes {
		props[i].Node = n
		if v := proposals[n]; v != nil {
			for _, p := range v.Pods {
				if p == nil {
					continue
				}
				w := "pod uid " + p.UID
				if r := byUID[p.UID]; r != nil {
					w = r.Workload
				}
				props[i].Workloads = append(props[i].Workloads, w)
			}
		}
	}
	// The preemptor is one pod; its standing after the job counts its
	// whole gang.
	req := placement.Request{Account: j.account, Nodes: j.size, GPUsPerNode: j.gpus, MinRuntime: j.min, Duration: j.duration}
	verdicts, err := placement.NarrowPreemption(o.Cluster, st, req, e.opts.Placement, props)
	if err != nil {
		return nil, err
	}
	for _, v := range verdicts {
		if v.Allowed {
			out.NodeNameToMetaVictims[v.Node] = proposals[v.Node]
			continue
		}
		out.Refused = append(out.Refused, Refusal{Node: v.Node, Reason: v.Reason})
	}
	if len(out.Refused) > 0 {
		e.log.Info("extender: preemption narrowed", "pod", a.Pod.Namespace+"/"+a.Pod.Name, "account", j.account,
			"kept", len(out.NodeNameToMetaVictims), "refused", len(out.Refused), "first", out.Refused[0].Node+": "+out.Refused[0].Reason)
	}
	return out, nil
}
