package placement

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Candidate classes, in rank order.
const (
	ClassFree    = "free"
	ClassReclaim = "free+reclaimable"
	ClassHorizon = "reclaimable-within-horizon"
)

var classNames = [...]string{ClassFree, ClassReclaim, ClassHorizon}

// Victim is a running workload a candidate preempts.
type Victim struct {
	Workload       string    `json:"workload"`
	Account        string    `json:"account"`
	GPUs           int       `json:"gpus"`
	Allocated      bool      `json:"allocated"`
	Resumable      bool      `json:"resumable"`
	ProtectedUntil time.Time `json:"protectedUntil"`
	// LostGPUSeconds is GPUs × time run so far, or since the last
	// checkpoint (at most Config.CheckpointInterval) for resumable work.
	LostGPUSeconds float64 `json:"lostGPUSeconds"`
	// Reason says why the workload may be preempted.
	Reason string `json:"reason"`
}

// NodeTake is the GPUs a candidate uses on one node.
type NodeTake struct {
	Node string `json:"node"`
	GPUs int    `json:"gpus"`
}

// Scores are a candidate's component scores (fairshare.md §9.4).
type Scores struct {
	LCALevel  int    `json:"lcaLevel"`
	LCASwitch string `json:"lcaSwitch,omitempty"`
	Leaves    int    `json:"leavesSpanned"`
	Domains   int    `json:"domainsSpanned"`
	Residual  int    `json:"residualFree"`
	// NodeSlack is, for a one-pod request, the GPUs its node keeps free
	// once the pod is in (0: the pod fills it exactly); 0 otherwise.
	NodeSlack  int `json:"nodeSlack"`
	FreeBefore int `json:"wholeFreeDomainsBefore"`
	FreeAfter  int `json:"wholeFreeDomainsAfter"`
	// FreeSwBefore and FreeSwAfter count the switches, at every level,
	// all of whose nodes are free: the whole free blocks of a fabric
	// without accelerator domains.
	FreeSwBefore int `json:"wholeFreeSwitchesBefore"`
	FreeSwAfter  int `json:"wholeFreeSwitchesAfter"`
	// LargestFreeLeaf is the most free GPUs left under one leaf switch.
	LargestFreeLeaf int     `json:"largestFreeLeafAfter"`
	SLCA            float64 `json:"sLCA"`
	SSpan           float64 `json:"sSpan"`
	SDomains        float64 `json:"sDomains"`
	SFrag           float64 `json:"sFrag"`
	SKeep           float64 `json:"sKeep"`
	Preemption      float64 `json:"preemptionGPUSeconds"`
	WaitSeconds     float64 `json:"waitSeconds"`
	Weighted        float64 `json:"weighted"`
}

// Candidate is one ranked node set with its explanation.
type Candidate struct {
	Rank         int        `json:"rank"`
	Class        string     `json:"class"`
	Group        string     `json:"group"`
	PreferredMet bool       `json:"preferredMet"`
	Nodes        []NodeTake `json:"nodes"`
	Scores       Scores     `json:"scores"`
	RankKey      []float64  `json:"rankKey"`
	Victims      []Victim   `json:"victims"`
}

// Result is the answer to a Request.
type Result struct {
	Request    Request       `json:"request"`
	Allocated  bool          `json:"allocated"`
	MinRuntime time.Duration `json:"minRuntime"`
	Standing   Standing      `json:"standing"`
	After      Standing      `json:"standingAfter"`
	Candidates []Candidate   `json:"candidates"`
}

// Place ranks candidate node sets for req on c, with standings st.
func Place(c *Cluster, st *Standings, req Request, cfg Config) (*Result, error) {
	p, now, after, err := prepare(c, st, &req, &cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{Request: req, MinRuntime: req.protected(&cfg), Standing: now, After: after, Allocated: p.allocated}
	for class := range classNames {
		if class > 0 && !res.Allocated {
			break // unallocated work takes free GPUs only
		}
		if class == 2 && cfg.Horizon == 0 {
			break
		}
		res.Candidates = p.candidates(res.Candidates, class)
	}
	if len(res.Candidates) == 0 {
		return res, fmt.Errorf("%w: %d GPUs for %q", ErrNoCandidate, req.Total(), req.Account)
	}
	p.rank(res.Candidates)
	return res, nil
}

// prepare validates cfg and req and returns the planner of req on c with
// standings st, and the requester's standing now and after the job.
func prepare(c *Cluster, st *Standings, req *Request, cfg *Config) (*planner, Standing, Standing, error) {
	if err := cfg.Validate(); err != nil {
		return nil, Standing{}, Standing{}, err
	}
	if err := req.Validate(); err != nil {
		return nil, Standing{}, Standing{}, err
	}
	now, err := st.Of(req.Account)
	if err != nil {
		return nil, Standing{}, Standing{}, err
	}
	after, _ := st.With(req.Account, req.Total(), req.Duration, nil)
	return newPlanner(c, st, req, cfg, req.protected(cfg) > 0, after.Key), now, after, nil
}

type planner struct {
	// allocated is set for a request with a minimum runtime: only it
	// may preempt.
	allocated bool
	c         *Cluster
	st        *Standings
	req       *Request
	cfg       *Config
	need      int
	avail     []int64 // per record: UnixNano when preemptible; 0 if not eligible
	keyAfter  float64
	keys      map[string]float64
	nodeCap   []int
	// nodeAvail is what each node has for the job before nodeCap's cap
	// at the request's GPUs per node: node-level best fit ranks by it.
	nodeAvail []int
	seen      map[string]bool
	freeDoms  []bool
	freeSw    []bool // switches all of whose nodes are free
	leafFree  map[int]int
	swCap     []int
	total     int
}

func newPlanner(c *Cluster, st *Standings, req *Request, cfg *Config, allocated bool, keyAfter float64) *planner {
	p := &planner{allocated: allocated, c: c, st: st, req: req, cfg: cfg, need: req.Total(), avail: make([]int64, len(c.records)),
		keyAfter: keyAfter, keys: map[string]float64{}, seen: map[string]bool{}, leafFree: map[int]int{}}
	if allocated {
		// A workload reported as several records (a pod per node) is
		// preempted whole: the proportion guard weighs all of it.
		for _, ri := range c.running {
			p.judge(ri, c.size[ri])
		}
	}
	p.freeDoms = make([]bool, len(c.domains))
	for d, nodes := range c.domains {
		p.freeDoms[d] = len(nodes) > 0
		for _, ni := range nodes {
			if c.used[ni] > 0 {
				p.freeDoms[d] = false
				break
			}
		}
	}
	below, busy := make([]int, len(c.switches)), make([]bool, len(c.switches))
	for i := range c.nodes {
		if l := c.nodes[i].leaf; l >= 0 {
			p.leafFree[l] += c.nodes[i].gpus - c.used[i]
			below[l]++
			busy[l] = busy[l] || c.used[i] > 0
		}
	}
	p.freeSw = make([]bool, len(c.switches))
	for i := range c.switches { // leaves first: children are complete before their parent
		if par := c.switches[i].parent; par >= 0 {
			below[par] += below[i]
			busy[par] = busy[par] || busy[i]
		}
		p.freeSw[i] = below[i] > 0 && !busy[i]
	}
	return p
}

// ownerKey returns the standing key of an account (-Inf: no budget).
func (p *planner) ownerKey(acct string) (float64, bool) {
	if k, ok := p.keys[acct]; ok {
		return k, !math.IsInf(k, -1)
	}
	k := math.Inf(-1)
	if s, err := p.st.Of(acct); err == nil {
		k = s.Key
	}
	p.keys[acct] = k
	return k, !math.IsInf(k, -1)
}

// bar is what keeps a running record from being a victim under
// fairshare.md §9.3, apart from its protected minimum runtime.
type bar int

// The bars, in the order they are checked.
const (
	barNone  bar = iota // eligible
	barHeld             // held for a gang being placed
	barOwn              // the requester's own account
	barRatio            // out of proportion to the request
	barOwner            // allocated work of an owner not over-served
)

// barOf applies fairshare.md §9.3 to one running record of a workload of
// gpus GPUs in all: it is eligible (barNone) if it is another account's,
// in proportion to the request, and is unallocated, has no budget, or its
// owner's key is below the requester's key after the job. With barOwner
// it also returns the owner's key.
func (p *planner) barOf(ri, gpus int) (bar, float64) {
	r := &p.c.records[ri]
	switch {
	case r.Held:
		return barHeld, 0
	case r.Account == p.req.Account:
		return barOwn, 0
	case p.cfg.MaxVictimRatio > 0 && float64(gpus) > p.cfg.MaxVictimRatio*float64(p.need):
		return barRatio, 0
	}
	if r.Allocated {
		if k, ok := p.ownerKey(r.Account); ok && !(p.keyAfter > k) {
			return barOwner, k
		}
	}
	return barNone, 0
}

// judge marks record ri (of a workload of gpus GPUs in all) preemptible
// from the end of its protected minimum runtime when nothing bars it.
func (p *planner) judge(ri, gpus int) {
	if b, _ := p.barOf(ri, gpus); b != barNone {
		return
	}
	r := &p.c.records[ri]
	avail := r.ProtectedUntil(p.cfg.MinRuntimeCap)
	if avail.Before(p.c.now) {
		avail = p.c.now
	}
	p.avail[ri] = avail.UnixNano()
}

// lost is the work record r loses when preempted now: all it has run, or
// since its last checkpoint when it is resumable.
func (p *planner) lost(r *Record) time.Duration {
	lost := p.c.now.Sub(r.Start)
	if r.Resumable {
		lost = min(lost, p.cfg.CheckpointInterval) // it resumes from its last checkpoint
	}
	return lost
}

// eligibleBy reports whether record ri may be preempted by limit.
func (p *planner) eligibleBy(ri int, limit int64) bool {
	at := p.avail[ri]
	return at != 0 && at <= limit
}

// reason explains why record ri is a victim.
func (p *planner) reason(ri int) string {
	r := &p.c.records[ri]
	when, extra := "past min runtime", ""
	if at := time.Unix(0, p.avail[ri]); at.After(p.c.now) {
		// The "reclaimable within the horizon" class: not preemptible yet.
		when = "protected until " + at.UTC().Format(time.RFC3339) + ", reclaimable then"
		extra = "; " + when
	}
	res := ""
	if r.Resumable {
		res = fmt.Sprintf("; resumable: loses at most %s since its last checkpoint", p.cfg.CheckpointInterval)
	}
	if !r.Allocated {
		return "unallocated (free, always preemptible)" + extra + res
	}
	k, ok := p.ownerKey(r.Account)
	if !ok {
		return "account has no budget" + extra + res
	}
	return fmt.Sprintf("allocated, %s%s; owner %s %s key %.4g < requester's %.4g after the job",
		when, res, r.Account, p.st.Mode, k, p.keyAfter)
}

// capacities fills nodeCap for class: the GPUs the job may use per node.
func (p *planner) capacities(class int) {
	limit := p.c.now.UnixNano()
	if class == 2 {
		limit += int64(p.cfg.Horizon)
	}
	if p.nodeCap == nil {
		p.nodeCap = make([]int, len(p.c.nodes))
		p.nodeAvail = make([]int, len(p.c.nodes))
	}
	for i := range p.c.nodes {
		n := &p.c.nodes[i]
		v := n.gpus - p.c.used[i]
		if class > 0 {
			for _, h := range p.c.holds(i) {
				if p.eligibleBy(h.rec, limit) {
					v += h.gpus
				}
			}
		}
		if p.c.off != nil && p.c.off[i] {
			v = 0
		}
		p.nodeAvail[i] = v
		if g := p.req.GPUsPerNode; p.req.Nodes > 0 {
			v = (v / g) * g
			if v > g {
				v = g
			}
		}
		p.nodeCap[i] = v
	}
}

// nodeSetKey identifies a node set for de-duplication.
func nodeSetKey(takes []int) string {
	var b strings.Builder
	for i, t := range takes {
		if t > 0 {
			b.WriteString(strconv.Itoa(i))
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(t))
			b.WriteByte(',')
		}
	}
	return b.String()
}

// rank sorts candidates and numbers them.
func (p *planner) rank(cands []Candidate) {
	slices.SortStableFunc(cands, func(a, b Candidate) int {
		if p.cfg.Ranking == RankWeighted {
			if c := cmp.Compare(b.Scores.Weighted, a.Scores.Weighted); c != 0 {
				return c
			}
		}
		return cmp.Or(slices.Compare(a.RankKey, b.RankKey), cmp.Compare(a.Nodes[0].Node, b.Nodes[0].Node))
	})
	for i := range cands {
		cands[i].Rank = i + 1
	}
}
