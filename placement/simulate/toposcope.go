package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/toposcope/toposcope/placement"
)

// toposcope ranks candidates with placement.Place on the cluster as it
// is and takes the best of free GPUs. Without preemption its standings
// are fixed: they do not change which free GPUs rank best. With it, the
// standings come from the allocated work run in the window (recomputed
// every priorityCalcPeriod), and a job that finds no free room takes the
// best candidate that frees GPUs by preemption ("free+reclaimable").
type toposcope struct {
	cfg     placement.Config
	tree    *placement.Tree
	gpus    int
	st      *placement.Standings
	base    *placement.Cluster // the empty cluster, occupied per decision
	index   map[string]int     // node name to index
	records []placement.Record // of the running jobs
	owner   []int              // per record, its job ID
	size    []int              // per record, its job's GPUs
	// occupied is base occupied by records at occupiedAt; nil after a
	// start or finish.
	occupied   *placement.Cluster
	occupiedAt float64
	// hidden holds one record per node whose free GPUs are hidden from
	// the choices while hiding (hide); hiddenCl is the cluster occupied
	// by the running jobs and them, kept while hidden, the jobs and the
	// time are the same.
	hiding     bool
	hidden     []placement.Record
	hiddenCl   *placement.Cluster
	hiddenAt   float64
	hiddenJobs int // jobs when hiddenCl was built
	jobs       int // bumped by every start and finish

	// usage is the replay's usage in the window; nil when not
	// preempting.
	usage *windowUsage
	// failed holds, per account and shape, the shortest job that found
	// no room by preemption on the cluster of failedVersion at failedAt.
	failed        map[failKey]float64
	failedAt      float64
	failedVersion int
	// stAt is when st was computed; it is recomputed every
	// priorityCalcPeriod.
	stAt    float64
	stFresh bool
}

func newToposcope(s *state, tree *placement.Tree, usage *windowUsage) (*toposcope, error) {
	cfg := placement.DefaultConfig()
	cfg.MaxCandidates = 1
	st, err := placement.Compute(tree, nil, epoch(0), s.gpus, cfg)
	if err != nil {
		return nil, err
	}
	base, err := placement.NewCluster(s.graph, nil, epoch(0))
	if err != nil {
		return nil, err
	}
	p := &toposcope{cfg: cfg, tree: tree, gpus: s.gpus, st: st, base: base, index: make(map[string]int, len(s.nodes)),
		usage: usage, failed: map[failKey]float64{}}
	for i, n := range s.nodes {
		p.index[n.name] = i
	}
	return p, nil
}

// started records a job's GPUs as running: one record for all its
// nodes when its takes are even (as the ledger spreads a record's GPUs),
// else one per node under the same workload name.
func (p *toposcope) started(s *state, j *Job, takes []take, per int, now float64) {
	rec := placement.Record{Account: j.Account, Workload: strconv.Itoa(j.ID), Start: epoch(now),
		Allocated: j.MinRuntime > 0, MinRuntime: secs(j.MinRuntime), Resumable: j.Resumable}
	sorted := slices.SortedStableFunc(slices.Values(takes), func(a, b take) int { return cmp.Compare(b.pods, a.pods) })
	if (sorted[0].pods-sorted[len(sorted)-1].pods)*per <= 1 { // GPUs per node differ by at most one
		r := rec
		for _, t := range sorted {
			r.Nodes = append(r.Nodes, s.nodes[t.node].name)
			r.GPUs += t.pods * per
		}
		p.records, p.owner, p.size = append(p.records, r), append(p.owner, j.ID), append(p.size, j.GPUs)
	} else {
		for _, t := range takes {
			r := rec
			r.Nodes, r.GPUs = []string{s.nodes[t.node].name}, t.pods*per
			p.records, p.owner, p.size = append(p.records, r), append(p.owner, j.ID), append(p.size, j.GPUs)
		}
	}
	p.occupied = nil
	p.jobs++
}

// finished drops a job's records: it ended or was preempted.
func (p *toposcope) finished(j *Job) {
	k := 0
	for i := range p.records {
		if p.owner[i] != j.ID {
			p.records[k], p.owner[k], p.size[k] = p.records[i], p.owner[i], p.size[i]
			k++
		}
	}
	p.records, p.owner, p.size = p.records[:k], p.owner[:k], p.size[:k]
	p.occupied = nil
	p.jobs++
}

// hide shows the free GPUs of hidden as used in the next choices, as
// records of no account; nil shows them again. Only free candidates are
// chosen, so what such a record would lose is never weighed.
func (p *toposcope) hide(s *state, hidden []take) {
	p.hiding = len(hidden) > 0
	same := len(hidden) == len(p.hidden)
	for i := 0; same && i < len(hidden); i++ {
		same = p.hidden[i].GPUs == hidden[i].pods && p.hidden[i].Nodes[0] == s.nodes[hidden[i].node].name
	}
	if same || !p.hiding {
		return // hiddenCl stays for the same nodes next time
	}
	p.hidden = p.hidden[:0]
	for _, h := range hidden {
		name := s.nodes[h.node].name
		p.hidden = append(p.hidden, placement.Record{Workload: "reserved " + name, GPUs: h.pods, Nodes: []string{name},
			Start: epoch(0)})
	}
	p.hiddenCl = nil
}

// request is the placement request of a job.
func (p *toposcope) request(s *state, j *Job, sh shape) placement.Request {
	req := placement.Request{Account: j.Account, Duration: secs(j.Duration), Debug: j.Debug}
	switch {
	case sh.wholeNodes || sh.pods == 1:
		req.Nodes, req.GPUsPerNode = sh.pods, sh.per
	default:
		req.GPUs = sh.pods * sh.per
	}
	if sh.constrained {
		req.Within, req.Required = s.within, true
	}
	return req
}

// cluster returns the cluster occupied by the running jobs at now.
func (p *toposcope) cluster(now float64) (*placement.Cluster, error) {
	if p.hiding {
		if p.hiddenCl == nil || p.hiddenAt != now || p.hiddenJobs != p.jobs {
			cl, err := p.base.Occupy(append(slices.Clip(p.records), p.hidden...), epoch(now))
			if err != nil {
				return nil, err
			}
			p.hiddenCl, p.hiddenAt, p.hiddenJobs = cl, now, p.jobs
		}
		return p.hiddenCl, nil
	}
	if p.occupied == nil || p.occupiedAt != now {
		cl, err := p.base.Occupy(p.records, epoch(now))
		if err != nil {
			return nil, err
		}
		p.occupied, p.occupiedAt = cl, now
	}
	return p.occupied, nil
}

func (p *toposcope) choose(s *state, j *Job, sh shape, now float64) ([]take, error) {
	takes, _, err := p.place(s, j, p.request(s, j, sh), sh, p.st, now, false)
	return takes, err
}

// preempt is choose allowed to preempt, with standings from the usage
// so far (as of the last priorityCalcPeriod boundary).
func (p *toposcope) preempt(s *state, j *Job, sh shape, now float64) ([]take, []int, error) {
	st, err := p.standings(now)
	if err != nil {
		return nil, nil, err
	}
	if p.failedAt != now || p.failedVersion != s.version {
		clear(p.failed)
		p.failedAt, p.failedVersion = now, s.version
	}
	key := failKey{j.Account, sh}
	if d, ok := p.failed[key]; ok && j.Duration >= d {
		// A job of the same account and shape, no longer than this one,
		// found no victim on this cluster: a longer job ranks lower after
		// it and finds none either.
		return nil, nil, nil
	}
	if !p.mayPreempt(s, j, now) {
		return nil, nil, nil
	}
	req := p.request(s, j, sh)
	req.MinRuntime = secs(j.MinRuntime)
	takes, victims, err := p.place(s, j, req, sh, st, now, true)
	if err == nil && takes == nil {
		if d, ok := p.failed[key]; !ok || j.Duration < d {
			p.failed[key] = j.Duration
		}
	}
	return takes, victims, err
}

// mayPreempt reports whether the free GPUs and those of other
// accounts' work past its protection and in proportion to j could hold
// j: a bound the planner's victims never exceed, checked before building
// the cluster for it.
func (p *toposcope) mayPreempt(s *state, j *Job, now float64) bool {
	have := s.free
	at := epoch(now)
	for i := range p.records {
		r := &p.records[i]
		if r.Account == j.Account || p.cfg.MaxVictimRatio > 0 && float64(p.size[i]) > p.cfg.MaxVictimRatio*float64(j.GPUs) {
			continue
		}
		if !r.ProtectedUntil(p.cfg.MinRuntimeCap).After(at) {
			if have += r.GPUs; have >= j.GPUs {
				return true
			}
		}
	}
	return false
}

// failKey is an account and a shape that found no room by preemption.
type failKey struct {
	account string
	sh      shape
}

// place ranks candidates for req and returns the first free one, or
// with reclaim the first that preempts, and its victims' job IDs.
func (p *toposcope) place(s *state, j *Job, req placement.Request, sh shape, st *placement.Standings, now float64,
	reclaim bool) ([]take, []int, error) {
	cl, err := p.cluster(now)
	if err != nil {
		return nil, nil, err
	}
	res, err := placement.Place(cl, st, req, p.cfg)
	if errors.Is(err, placement.ErrNoCandidate) {
		return nil, nil, nil // no room now: the job waits
	}
	if err != nil {
		return nil, nil, fmt.Errorf("job %d: %w", j.ID, err)
	}
	for _, c := range res.Candidates {
		usable := c.Class == placement.ClassFree || reclaim && c.Class == placement.ClassReclaim
		if !usable {
			continue
		}
		out := make([]take, 0, len(c.Nodes))
		for _, nt := range c.Nodes {
			if nt.GPUs%sh.per != 0 {
				return nil, nil, fmt.Errorf("job %d: candidate takes %d GPUs on %s, not a multiple of %d", j.ID, nt.GPUs, nt.Node, sh.per)
			}
			out = append(out, take{p.index[nt.Node], nt.GPUs / sh.per})
		}
		slices.SortFunc(out, func(a, b take) int { return cmp.Compare(a.node, b.node) })
		var victims []int
		for _, v := range c.Victims {
			id, err := strconv.Atoi(v.Workload)
			if err != nil {
				return nil, nil, fmt.Errorf("job %d: victim %q is no job", j.ID, v.Workload)
			}
			if !slices.Contains(victims, id) {
				victims = append(victims, id)
			}
		}
		return out, victims, nil
	}
	return nil, nil, nil
}

// standings returns the standings from the allocated work run in the
// window, recomputed every priorityCalcPeriod.
func (p *toposcope) standings(now float64) (*placement.Standings, error) {
	if p.stFresh && now < p.stAt+priorityCalcPeriod {
		return p.st, nil
	}
	st, err := placement.ComputeOwn(p.tree, p.usage.at(now), epoch(now), p.gpus, p.cfg)
	if err != nil {
		return nil, err
	}
	p.st, p.stAt, p.stFresh = st, now, true
	return st, nil
}
