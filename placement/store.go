package placement

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Store holds the service's budgets and ledger in memory and, with a
// Persister, writes every change through before it takes effect. It is
// safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	budgets *Budgets // nil: equal shares for every account seen
	records []Record
	persist Persister
}

// Persister keeps the budgets and the ledger across restarts.
type Persister interface {
	// SavePlacementBudgets replaces the stored budgets.
	SavePlacementBudgets(b *Budgets) error
	// AppendPlacementRecords adds records to the stored ledger, all or
	// none.
	AppendPlacementRecords(recs []Record) error
	// LoadPlacement returns the stored budgets (nil when none were set)
	// and records, in the order appended.
	LoadPlacement() (*Budgets, []Record, error)
}

// NewStore returns an empty store kept in memory only: equal shares, no
// records.
func NewStore() *Store { return &Store{} }

// OpenStore returns a store holding what p kept, writing every change
// to p.
func OpenStore(p Persister) (*Store, error) {
	b, recs, err := p.LoadPlacement()
	if err != nil {
		return nil, fmt.Errorf("load budgets and ledger: %w", err)
	}
	if b != nil {
		defaultShares(b.Accounts)
	}
	return &Store{budgets: b, records: recs, persist: p}, nil
}

// SetBudgets validates and replaces the budgets.
func (s *Store) SetBudgets(b *Budgets) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	defaultShares(b.Accounts)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.persist != nil {
		if err := s.persist.SavePlacementBudgets(b); err != nil {
			return fmt.Errorf("save budgets: %w", err)
		}
	}
	s.budgets = b
	return nil
}

// Append validates and adds records; it adds none if one is invalid.
func (s *Store) Append(recs []Record) error {
	l := Ledger{Records: recs}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.persist != nil {
		if err := s.persist.AppendPlacementRecords(recs); err != nil {
			return fmt.Errorf("save ledger records: %w", err)
		}
	}
	s.records = append(s.records, recs...)
	return nil
}

// Snapshot returns the tree (equal shares over the recorded accounts and
// extra when no budgets are set) and a copy of the records.
func (s *Store) Snapshot(extra ...string) (*Tree, []Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	recs := slices.Clone(s.records)
	if s.budgets == nil {
		return EqualTree(append((&Ledger{Records: recs}).Accounts(), extra...)), recs, nil
	}
	t, err := NewTree(s.budgets)
	return t, recs, err
}

// Capacity is the free and reclaimable GPUs of one switch or domain.
type Capacity struct {
	ID    string `json:"id"`
	Level int    `json:"level"`
	GPUs  int    `json:"gpus"`
	Free  int    `json:"free"`
	// Reclaimable is held by unallocated work or work past its protection.
	Reclaimable int `json:"reclaimable"`
}

// CapacityReport is GET /v1/capacity.
type CapacityReport struct {
	Now      time.Time  `json:"now"`
	GPUs     int        `json:"gpus"`
	Free     int        `json:"free"`
	Switches []Capacity `json:"switches"`
	Domains  []Capacity `json:"domains"`
	// LargestFree is the most free GPUs under one switch, per level.
	LargestFree map[int]int `json:"largestFreePerLevel"`
	// LargestFreeDomain is the most free GPUs in one domain.
	LargestFreeDomain int `json:"largestFreeDomain"`
}

// Capacity reports free and reclaimable GPUs per switch and domain.
func (c *Cluster) Capacity(cfg Config) CapacityReport {
	now := c.now
	free := make([]int, len(c.nodes))
	recl := make([]int, len(c.nodes))
	for i := range c.nodes {
		n := &c.nodes[i]
		free[i] = n.gpus - n.used
		for _, h := range n.hold {
			if !c.records[h.rec].ProtectedUntil(cfg.MinRuntimeCap).After(now) {
				recl[i] += h.gpus
			}
		}
	}
	rep := CapacityReport{Now: now, GPUs: c.gpus, LargestFree: map[int]int{}}
	rep.Switches = make([]Capacity, len(c.switches))
	for i := range c.switches {
		rep.Switches[i] = Capacity{ID: c.switches[i].id, Level: c.switches[i].level, GPUs: c.swTotal[i]}
	}
	for i := range c.nodes {
		rep.Free += free[i]
		if l := c.nodes[i].leaf; l >= 0 {
			rep.Switches[l].Free += free[i]
			rep.Switches[l].Reclaimable += recl[i]
		}
	}
	for i := range c.switches {
		if p := c.switches[i].parent; p >= 0 {
			rep.Switches[p].Free += rep.Switches[i].Free
			rep.Switches[p].Reclaimable += rep.Switches[i].Reclaimable
		}
		s := rep.Switches[i]
		rep.LargestFree[s.Level] = max(rep.LargestFree[s.Level], s.Free)
	}
	for d, nodes := range c.domains {
		dc := Capacity{ID: c.domainID[d], Level: -1}
		for _, ni := range nodes {
			dc.GPUs += c.nodes[ni].gpus
			dc.Free += free[ni]
			dc.Reclaimable += recl[ni]
		}
		rep.LargestFreeDomain = max(rep.LargestFreeDomain, dc.Free)
		rep.Domains = append(rep.Domains, dc)
	}
	return rep
}
