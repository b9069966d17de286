package placement

import (
	"fmt"
	"time"
)

// Proposal is what a scheduler proposes to preempt on one node for a
// request: the workloads (as the ledger names them) that it would evict.
type Proposal struct {
	Node      string
	Workloads []string
}

// VictimVerdict is the judgement of one proposed victim.
type VictimVerdict struct {
	Workload string `json:"workload"`
	// Known is false for a workload the ledger does not hold (no GPUs,
	// no account, or not read yet): the contract does not cover it.
	Known     bool   `json:"known"`
	Account   string `json:"account,omitempty"`
	Allocated bool   `json:"allocated"`
	Allowed   bool   `json:"allowed"`
	// LostGPUSeconds is what preempting it destroys (as in Victim).
	LostGPUSeconds float64 `json:"lostGPUSeconds"`
	Reason         string  `json:"reason"`
}

// ProposalVerdict is the judgement of one node's proposal: allowed only
// when every victim is, and their loss is within the loss guard.
type ProposalVerdict struct {
	Node           string          `json:"node"`
	Allowed        bool            `json:"allowed"`
	Reason         string          `json:"reason"`
	LostGPUSeconds float64         `json:"lostGPUSeconds"`
	Victims        []VictimVerdict `json:"victims"`
}

// NarrowPreemption judges a scheduler's preemption proposals for req by
// the contract of fairshare.md §9.3, on c with standings st: a victim
// must be another account's work, in proportion to the request, past its
// protected minimum runtime, and unallocated, without budget, or owned
// by an account whose standing key is below the requester's after the
// job; the victims of one node lose at most cfg.MaxLossRatio times the
// job's GPU-time; and when some node can be freed by preempting
// unallocated work alone, nodes that need allocated victims are refused.
// Unallocated requests (no minimum runtime) preempt nothing.
func NarrowPreemption(c *Cluster, st *Standings, req Request, cfg Config, proposals []Proposal) ([]ProposalVerdict, error) {
	p, _, _, err := prepare(c, st, &req, &cfg)
	if err != nil {
		return nil, err
	}
	allocated := p.allocated
	byWorkload := make(map[string][]int, len(c.running))
	for _, ri := range c.running {
		w := c.records[ri].Workload
		byWorkload[w] = append(byWorkload[w], ri)
	}
	out := make([]ProposalVerdict, len(proposals))
	onlyFree := false // some allowed node needs unallocated victims only
	for i, prop := range proposals {
		v := ProposalVerdict{Node: prop.Node, Allowed: true, Victims: make([]VictimVerdict, 0, len(prop.Workloads))}
		free := true
		for _, w := range prop.Workloads {
			vv := p.verdict(w, byWorkload[w], allocated)
			v.Victims = append(v.Victims, vv)
			v.LostGPUSeconds += vv.LostGPUSeconds
			free = free && !vv.Allocated
			if !vv.Allowed && v.Allowed {
				v.Allowed, v.Reason = false, fmt.Sprintf("victim %s refused: %s", w, vv.Reason)
			}
		}
		if v.Allowed && cfg.MaxLossRatio > 0 && v.LostGPUSeconds > cfg.MaxLossRatio*p.jobSeconds() {
			v.Allowed = false
			v.Reason = fmt.Sprintf("loss guard: the victims lose %.0f GPU-seconds, more than %g × the job's %.0f",
				v.LostGPUSeconds, cfg.MaxLossRatio, p.jobSeconds())
		}
		if v.Allowed {
			v.Reason = "every victim may be preempted"
			onlyFree = onlyFree || free
		}
		out[i] = v
	}
	if onlyFree {
		for i := range out {
			v := &out[i]
			if !v.Allowed {
				continue
			}
			for _, vv := range v.Victims {
				if vv.Allocated {
					v.Allowed = false
					v.Reason = fmt.Sprintf("victim %s is allocated work, and another node is freed by preempting unallocated work alone", vv.Workload)
					break
				}
			}
		}
	}
	return out, nil
}

// verdict judges one proposed victim, held as records recs.
func (p *planner) verdict(w string, recs []int, allocated bool) VictimVerdict {
	if len(recs) == 0 {
		return VictimVerdict{Workload: w, Allowed: true, Reason: "not in the placement ledger (no GPUs or no account): not covered by the contract"}
	}
	r := &p.c.records[recs[0]]
	v := VictimVerdict{Workload: w, Known: true, Account: r.Account, Allocated: r.Allocated}
	gpus := 0
	for _, ri := range recs {
		gpus += p.c.records[ri].GPUs
	}
	v.LostGPUSeconds = float64(gpus) * max(0, p.lost(r).Seconds())
	now := p.c.now.UnixNano()
	if allocated && p.eligibleBy(recs[0], now) {
		v.Allowed, v.Reason = true, p.reason(recs[0])
		return v
	}
	v.Reason = p.refusal(recs[0], allocated)
	return v
}

// refusal says why record ri may not be preempted now (the negation of
// judge and eligibleBy).
func (p *planner) refusal(ri int, allocated bool) string {
	r := &p.c.records[ri]
	b, k := p.barOf(ri, p.c.size[ri])
	switch {
	case b == barHeld:
		return "held for a gang that is being placed"
	case !allocated:
		return "the preemptor is unallocated work (no minimum runtime): it takes free GPUs only"
	case b == barOwn:
		return "the preemptor's own account"
	case b == barRatio:
		return fmt.Sprintf("out of proportion: %d GPUs, more than %g × the request's %d", p.c.size[ri], p.cfg.MaxVictimRatio, p.need)
	case b == barOwner:
		return fmt.Sprintf("owner %s is not over-served: its %s key %.4g is not below the requester's %.4g after the job",
			r.Account, p.st.Mode, k, p.keyAfter)
	}
	return "protected until " + r.ProtectedUntil(p.cfg.MinRuntimeCap).UTC().Format(time.RFC3339) + " (minimum runtime)"
}
