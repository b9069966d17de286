package placement

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Standing is one account's fair-share position.
type Standing struct {
	// Account is the name; "" for the root.
	Account string `json:"account"`
	// Parent is the parent's name.
	Parent string `json:"parent,omitempty"`
	// Leaf is true for accounts without children.
	Leaf bool `json:"leaf"`
	// Shares, LevelShares and NormShares are the raw, sibling-normalized
	// and tree-normalized (S) shares.
	Shares      float64 `json:"shares"`
	LevelShares float64 `json:"levelShares"`
	NormShares  float64 `json:"normShares"`
	// UsageRaw is the allocated GPU-seconds of the subtree in the window.
	UsageRaw float64 `json:"usageRawGPUSeconds"`
	// UsageDecayed is the decayed GPU-seconds of the subtree.
	UsageDecayed float64 `json:"usageDecayedGPUSeconds"`
	// UsageNorm is U': UsageRaw over the window's capacity.
	UsageNorm float64 `json:"usageNorm"`
	// Rho is U_raw / (S · capacity · window); below 1 is under-served.
	Rho float64 `json:"rho"`
	// LevelFS is Fair Tree's LF; nil (JSON null) for +Inf.
	LevelFS *float64 `json:"levelFS"`
	// EffectiveUsage and Factor are classic U_E and F (on decayed usage).
	EffectiveUsage float64 `json:"effectiveUsage"`
	Factor         float64 `json:"factor"`
	// Rank and FairShare are Fair Tree's rank and rank/#leaves.
	Rank      int     `json:"rank"`
	FairShare float64 `json:"fairShare"`
	// LevelPath is what decided the Fair Tree rank: the level fairshare
	// of each account from the first tier down to this one, as Fair Tree
	// compares siblings (a useParent account with children is skipped:
	// its children are compared with its parent's).
	LevelPath []LevelStep `json:"levelPath,omitempty"`
	// Key is the mode's sort value: higher is served first.
	Key float64 `json:"key"`
	// OwedGPUHours and DeliveredGPUHours are Ai2's owed/delivered.
	OwedGPUHours      float64 `json:"owedGPUHours"`
	DeliveredGPUHours float64 `json:"deliveredGPUHours"`
}

// Standings is the standings of every account at one instant.
type Standings struct {
	// Now, Mode, Window and CapacityGPUs are the inputs.
	Now          time.Time     `json:"now"`
	Mode         Mode          `json:"mode"`
	Window       time.Duration `json:"window"`
	CapacityGPUs int           `json:"capacityGPUs"`
	// Accounts are in tree order, root first.
	Accounts []Standing `json:"accounts"`

	tree    *Tree
	own     []float64 // own window usage per account
	decayed []float64 // own decayed usage per account
	cfg     Config
}

// Compute returns the standings of every account of t from records at now
// on a cluster of capacity GPUs. Records of unknown accounts are skipped.
func Compute(t *Tree, records []Record, now time.Time, capacity int, cfg Config) (*Standings, error) {
	return ComputeIndexed(t, records, t.Index(records), now, capacity, cfg)
}

// Index resolves each record's account to its tree index (-1: unknown),
// so that a ledger indexed once at ingest is not looked up again.
func (t *Tree) Index(records []Record) []int32 {
	idx := make([]int32, len(records))
	last, lastIdx := "", int32(-1)
	for i := range records {
		if a := records[i].Account; a != last || i == 0 {
			last, lastIdx = a, -1
			if j, ok := t.index[a]; ok {
				lastIdx = int32(j)
			}
		}
		idx[i] = lastIdx
	}
	return idx
}

// ComputeIndexed is Compute with accounts already resolved by t.Index.
func ComputeIndexed(t *Tree, records []Record, idx []int32, now time.Time, capacity int, cfg Config) (*Standings, error) {
	if len(idx) != len(records) {
		return nil, fmt.Errorf("%w: %d indexes for %d records", ErrInvalid, len(idx), len(records))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if capacity < 0 {
		return nil, fmt.Errorf("%w: capacity must not be negative", ErrInvalid)
	}
	s := &Standings{Now: now, Mode: cfg.Mode, Window: cfg.Window, CapacityGPUs: capacity, tree: t, cfg: cfg}
	halfLife := time.Duration(0)
	if cfg.Mode == ModeClassic {
		halfLife = cfg.HalfLife
	}
	u := accumulate(t, records, idx, now, cfg.Window, capacity, halfLife)
	s.own, s.decayed = u.own, u.decayed
	s.Accounts = s.evaluate(s.own, s.decayed)
	for i := range s.Accounts {
		s.Accounts[i].OwedGPUHours, s.Accounts[i].DeliveredGPUHours = u.owed[i], u.delivered[i]
	}
	return s, nil
}

// ComputeOwn returns the standings from each account's own allocated
// GPU-seconds in the window, indexed as t.Accounts(), for a caller that
// keeps that usage itself rather than as records. Classic mode needs the
// decayed usage of records and is refused; owed and delivered GPU-hours
// are left zero.
func ComputeOwn(t *Tree, own []float64, now time.Time, capacity int, cfg Config) (*Standings, error) {
	if len(own) != len(t.accounts) {
		return nil, fmt.Errorf("%w: %d usages for %d accounts", ErrInvalid, len(own), len(t.accounts))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode == ModeClassic {
		return nil, fmt.Errorf("%w: classic mode needs the records' decayed usage", ErrInvalid)
	}
	if capacity < 0 {
		return nil, fmt.Errorf("%w: capacity must not be negative", ErrInvalid)
	}
	s := &Standings{Now: now, Mode: cfg.Mode, Window: cfg.Window, CapacityGPUs: capacity, tree: t, cfg: cfg,
		own: slices.Clone(own), decayed: make([]float64, len(own))}
	s.Accounts = s.evaluate(s.own, s.decayed)
	return s, nil
}

// evaluate computes every mode's values from own usages.
func (s *Standings) evaluate(own, decayed []float64) []Standing {
	t := s.tree
	u := subtreeUsage(t, own)
	lf := LevelFairShare(t, u)
	rank, fs := FairTreeRanks(t, lf)
	var ue, f, ud []float64
	if s.cfg.Mode == ModeClassic {
		ud = subtreeUsage(t, decayed)
		ue, f = Classic(t, ud, ud[0])
	}
	entitled := float64(s.CapacityGPUs) * s.cfg.Window.Seconds()
	out := make([]Standing, len(t.accounts))
	for i := range t.accounts {
		a := &t.accounts[i]
		st := Standing{Account: a.Name, Leaf: len(a.Children) == 0 && i > 0, Shares: a.Shares,
			LevelShares: a.Level, NormShares: a.Norm, UsageRaw: u[i], Rank: rank[i], FairShare: fs[i]}
		if a.Parent >= 0 {
			st.Parent = t.accounts[a.Parent].Name
			st.LevelPath = levelPath(t, lf, i)
		}
		if !math.IsInf(lf[i], 1) {
			v := lf[i]
			st.LevelFS = &v
		}
		if entitled > 0 {
			st.UsageNorm = u[i] / entitled
			if a.Norm > 0 {
				st.Rho = u[i] / (a.Norm * entitled)
			} else if u[i] > 0 {
				st.Rho = math.Inf(1)
			}
		}
		if ue != nil {
			st.UsageDecayed, st.EffectiveUsage, st.Factor = ud[i], ue[i], f[i]
		}
		switch s.cfg.Mode {
		case ModeClassic:
			st.Key = st.Factor
		case ModeWindow:
			st.Key = -st.Rho
		default:
			st.Key = st.FairShare
		}
		out[i] = st
	}
	return out
}

// LevelStep is one account of a LevelPath and its level fairshare.
type LevelStep struct {
	Account string `json:"account"`
	// LevelFS is nil (JSON null) for +Inf: no usage, or useParent.
	LevelFS *float64 `json:"levelFS"`
}

// levelPath returns the LevelPath of account i.
func levelPath(t *Tree, lf []float64, i int) []LevelStep {
	var path []LevelStep
	for a := i; a > 0; a = t.accounts[a].Parent {
		if t.accounts[a].UseParent && len(t.accounts[a].Children) > 0 {
			continue
		}
		step := LevelStep{Account: t.accounts[a].Name}
		if !math.IsInf(lf[a], 1) {
			v := lf[a]
			step.LevelFS = &v
		}
		path = append(path, step)
	}
	slices.Reverse(path)
	return path
}

// Of returns the standing of the named account.
func (s *Standings) Of(name string) (Standing, error) {
	i, ok := s.tree.index[name]
	if !ok {
		return Standing{}, fmt.Errorf("%w: %q", ErrUnknownAccount, name)
	}
	return s.Accounts[i], nil
}

// With returns the account's standing after adding gpus for d (clipped to
// the window), and after removing the given GPU-seconds from other
// accounts (victims): fairshare.md §9.2 "projected standing".
func (s *Standings) With(name string, gpus int, d time.Duration, removed map[string]float64) (Standing, error) {
	i, ok := s.tree.index[name]
	if !ok {
		return Standing{}, fmt.Errorf("%w: %q", ErrUnknownAccount, name)
	}
	own := append([]float64(nil), s.own...)
	dec := append([]float64(nil), s.decayed...)
	add := float64(gpus) * min(d, s.cfg.Window).Seconds()
	own[i] += add
	dec[i] += add
	for acct, v := range removed {
		if j, ok := s.tree.index[acct]; ok {
			own[j] = max(0, own[j]-v)
			dec[j] = max(0, dec[j]-v)
		}
	}
	st := s.evaluate(own, dec)[i]
	st.OwedGPUHours, st.DeliveredGPUHours = s.Accounts[i].OwedGPUHours, s.Accounts[i].DeliveredGPUHours
	return st, nil
}

// Tree returns the account tree the standings were computed on.
func (s *Standings) Tree() *Tree { return s.tree }
