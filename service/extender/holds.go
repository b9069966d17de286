package extender

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
)

// hold is the node set chosen for a gang, held until its pods are bound
// (as the ledger shows) or it has not been asked about for the TTL.
type hold struct {
	key     string // namespace/gang
	account string
	size    int // pods in the gang
	podGPUs int
	// nodes are the GPUs the gang takes on each chosen node.
	nodes map[string]int
	// members are the UIDs of the gang's pods seen so far.
	members map[string]bool
	// group and rank explain the choice (the planner's candidate).
	group   string
	used    time.Time
	expires time.Time
}

// holds are the gangs held, by key; not safe for concurrent use (the
// Extender locks).
type holds struct {
	ttl   time.Duration
	max   int
	byKey map[string]*hold
}

func newHolds(ttl time.Duration, maxHeld int) *holds {
	return &holds{ttl: ttl, max: maxHeld, byKey: map[string]*hold{}}
}

// get returns the live hold of key, refreshed at now.
func (hs *holds) get(key string, now time.Time) *hold {
	h := hs.byKey[key]
	if h == nil {
		return nil
	}
	if now.After(h.expires) {
		delete(hs.byKey, key)
		return nil
	}
	h.used, h.expires = now, now.Add(hs.ttl)
	return h
}

// put stores h, dropping expired holds and, at the cap, the least
// recently used one; it returns the key dropped for room ("" if none).
func (hs *holds) put(h *hold, now time.Time) string {
	h.used, h.expires = now, now.Add(hs.ttl)
	dropped := ""
	for k, o := range hs.byKey {
		if now.After(o.expires) {
			delete(hs.byKey, k)
		}
	}
	if len(hs.byKey) >= hs.max {
		var oldest *hold
		for _, o := range hs.byKey {
			if oldest == nil || o.used.Before(oldest.used) || (o.used.Equal(oldest.used) && o.key < oldest.key) {
				oldest = o
			}
		}
		delete(hs.byKey, oldest.key)
		dropped = oldest.key
	}
	hs.byKey[h.key] = h
	return dropped
}

// records returns the GPUs the holds (but except) still promise, as held
// ledger records: for each hold, its GPUs on each node less those its
// members are seen holding there in the ledger. A hold whose members are
// all bound is released. The ledger is read only when something is held.
func (hs *holds) records(ledger []placement.Record, except string, now time.Time) []placement.Record {
	if len(hs.byKey) == 0 {
		return nil
	}
	bound := boundPods(ledger, now)
	var out []placement.Record
	for k, h := range hs.byKey {
		if now.After(h.expires) {
			delete(hs.byKey, k)
			continue
		}
		left := make(map[string]int, len(h.nodes))
		for n, g := range h.nodes {
			left[n] = g
		}
		seen := 0
		for uid := range h.members {
			r := bound[uid]
			if r == nil {
				continue
			}
			seen++
			for _, n := range r.Nodes {
				left[n] = max(0, left[n]-r.GPUs/len(r.Nodes))
			}
		}
		if seen >= h.size {
			delete(hs.byKey, k)
			continue
		}
		if k == except {
			continue
		}
		for n, g := range left {
			if g > 0 {
				out = append(out, placement.Record{Account: h.account, Workload: "held:" + k + ":" + n, GPUs: g,
					Nodes: []string{n}, Start: now, Held: true})
			}
		}
	}
	return out
}

// boundPods maps the UID of every running ledger record read from a pod
// (workload "namespace/name@uid") to the record.
func boundPods(recs []placement.Record, now time.Time) map[string]*placement.Record {
	out := make(map[string]*placement.Record)
	for i := range recs {
		r := &recs[i]
		if len(r.Nodes) == 0 || !r.Running(now) {
			continue
		}
		if uid, ok := podsource.PodUID(r.Workload); ok {
			out[uid] = r
		}
	}
	return out
}

// withHolds runs fn on the holds: this process's own, or, with a shared
// store, all replicas' read and written back in one transaction. Calls
// of this process take turns (e.mu), so that a call holds at most one
// of the store's connections.
func (e *Extender) withHolds(ctx context.Context, fn func(*holds) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opts.Shared == nil {
		return fn(e.held)
	}
	return e.opts.Shared.UpdateHolds(ctx, func(cur map[string][]byte) (map[string][]byte, error) {
		hs := newHolds(e.held.ttl, e.held.max)
		for k, data := range cur {
			h, err := decodeHold(k, data)
			if err != nil {
				e.log.Warn("extender: a stored hold cannot be read; dropped", "gang", k, "err", err)
				continue
			}
			hs.byKey[k] = h
		}
		if err := fn(hs); err != nil {
			return nil, err
		}
		next := make(map[string][]byte, len(hs.byKey))
		for k, h := range hs.byKey {
			data, err := json.Marshal(storedHold{Account: h.account, Size: h.size, PodGPUs: h.podGPUs, Nodes: h.nodes,
				Members: h.members, Group: h.group, Used: h.used, Expires: h.expires})
			if err != nil {
				return nil, fmt.Errorf("encode hold %s: %w", k, err)
			}
			next[k] = data
		}
		return next, nil
	})
}

// storedHold is a hold as the shared store keeps it.
type storedHold struct {
	Account string          `json:"account"`
	Size    int             `json:"size"`
	PodGPUs int             `json:"podGPUs"`
	Nodes   map[string]int  `json:"nodes"`
	Members map[string]bool `json:"members,omitempty"`
	Group   string          `json:"group,omitempty"`
	Used    time.Time       `json:"used"`
	Expires time.Time       `json:"expires"`
}

func decodeHold(key string, data []byte) (*hold, error) {
	var s storedHold
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Size < 1 || len(s.Nodes) == 0 {
		return nil, fmt.Errorf("hold of %d pods on %d nodes", s.Size, len(s.Nodes))
	}
	if s.Members == nil {
		s.Members = map[string]bool{}
	}
	return &hold{key: key, account: s.Account, size: s.Size, podGPUs: s.PodGPUs, nodes: s.Nodes, members: s.Members,
		group: s.Group, used: s.Used, expires: s.Expires}, nil
}
