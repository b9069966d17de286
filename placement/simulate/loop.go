package simulate

import (
	"container/heap"
	"fmt"
	"math"
)

// running is a started job, ordered by end time in a heap. An entry
// whose gen is not its job's current one was preempted: it is stale and
// skipped.
type running struct {
	end   float64
	job   int
	takes []take
	per   int
	gen   int
}

type runHeap []running

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	return h[i].end < h[j].end || h[i].end == h[j].end && h[i].job < h[j].job
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(running)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// seg is one run of a job, from start to end (+Inf while it runs); a
// preempted job has one per start. lost is how many seconds at its end
// a preemption threw away (run again later): the run is useful from
// start to end-lost.
type seg struct {
	job              int
	start, end, lost float64
}

// replayer is the event loop of one policy's replay.
type replayer struct {
	s      *state
	jobs   []Job
	shapes []shape
	pol    chooser
	tr     tracker   // nil unless the policy follows starts and ends
	pre    preempter // nil unless preempting
	name   string
	depth  int
	fifo   bool
	order  *fairOrder
	usage  *windowUsage // nil unless the order or the policy ranks by usage
	// checkpoint is how often resumable work checkpoints, in seconds.
	checkpoint float64
	// defragAfter, when positive, is how long the head job waits before
	// whole leaves are freed for it (defragment); defrags counts them.
	defragAfter float64
	defrags     int
	// concrete reserves the head job's nodes instead of a GPU count
	// (ReserveNodes).
	concrete bool
	// protectCap caps a job's protected runtime (the planner's
	// MinRuntimeCap), in seconds.
	protectCap float64
	// wake is, with preemption, when the next running job's protection
	// ends while allocated work waits: an event of its own, so that the
	// waiting work may preempt then and not at the next submit or
	// finish. +Inf when there is none.
	wake float64

	h     runHeap
	gen   []int     // per job, the generation of its live heap entry
	runs  []running // per job, its live entry while cur >= 0
	cur   []int     // per job, its running segment; -1 when not running
	left  []float64 // per job, the run time still to go
	segs  []seg
	out   []outcome
	byID  map[int]int // job ID to index
	queue []int
	// sorted is how much of queue is in queue order.
	sorted int
	// requeued are the jobs preempted at this event, queued again after it.
	requeued    []int
	live        int // running jobs
	preemptions int
	lostGPUSec  float64
	idle        idleGPUs
	liveScratch []running
}

func newReplayer(s *state, jobs []Job, shapes []shape, pol chooser, name string, usage *windowUsage) (*replayer, error) {
	r := &replayer{s: s, jobs: jobs, shapes: shapes, pol: pol, name: name, usage: usage,
		gen: make([]int, len(jobs)), runs: make([]running, len(jobs)), cur: make([]int, len(jobs)),
		left: make([]float64, len(jobs)), out: make([]outcome, len(jobs)), byID: make(map[int]int, len(jobs)),
		wake: math.Inf(1)}
	r.tr, _ = pol.(tracker)
	if usage != nil {
		usage.runs = &r.segs
	}
	for i := range jobs {
		r.cur[i], r.left[i] = -1, jobs[i].Duration
		if _, dup := r.byID[jobs[i].ID]; dup {
			return nil, fmt.Errorf("%w: job ID %d appears twice", ErrScenario, jobs[i].ID)
		}
		r.byID[jobs[i].ID] = i
	}
	return r, nil
}

// run replays every job: at each event time the finishes, then the
// submits, then the first depth queued jobs, each started if the policy
// finds it room (with fifo, until one is not).
func (r *replayer) run(progress func(int, int)) error {
	jobs := r.jobs
	next, events := 0, 0
	w0, w1 := 0.0, 0.0
	if len(jobs) > 0 {
		w0, w1 = jobs[0].Submit, jobs[len(jobs)-1].Submit
		r.idle.lastT = w0
	}
	for next < len(jobs) || len(r.queue) > 0 {
		for r.h.Len() > 0 && r.h[0].gen != r.gen[r.h[0].job] {
			heap.Pop(&r.h) // preempted: its GPUs went back then
		}
		t := math.Inf(1)
		if next < len(jobs) {
			t = jobs[next].Submit
		}
		if r.h.Len() > 0 {
			t = min(t, r.h[0].end)
		}
		if r.pre != nil {
			t = min(t, r.wake)
		}
		if math.IsInf(t, 1) {
			j := jobs[r.queue[0]]
			return fmt.Errorf("%w: policy %s cannot place job %d (%d GPUs) on the idle cluster", ErrScenario, r.name, j.ID, j.GPUs)
		}
		if t > maxReplaySeconds {
			return fmt.Errorf("%w: policy %s: the replay reaches %.3g s, past the %.0f s (fifty years) it can count", ErrScenario, r.name, t, maxReplaySeconds)
		}
		r.idle.advance(t, w0, w1)
		n, err := r.finishDue(t)
		if err != nil {
			return err
		}
		events += n
		for next < len(jobs) && jobs[next].Submit <= t {
			r.queue = append(r.queue, next)
			next++
			events++
		}
		if r.order != nil {
			r.order.sort(r.queue, r.sorted, t)
		}
		if err := r.schedule(t); err != nil {
			return err
		}
		if r.pre != nil {
			r.wake = r.protectionEnd(t)
		}
		r.idle.lastPart, r.idle.lastBlock = r.s.partFree, 0
		if len(r.queue) > 0 && jobs[r.queue[0]].GPUs <= r.s.free {
			r.idle.lastBlock = r.s.free // the head fits by count, yet waits
		}
		if progress != nil {
			progress(next-len(r.queue), len(jobs))
		}
	}
	r.idle.advance(w1, w0, w1)
	r.idle.events = events + r.live // the finishes still to come change nothing more
	for ji, si := range r.cur {
		if si >= 0 {
			r.segs[si].end = r.runs[ji].end
		}
	}
	return nil
}

// finishDue ends the jobs due by t and returns how many ended.
func (r *replayer) finishDue(t float64) (int, error) {
	n := 0
	for r.h.Len() > 0 && r.h[0].end <= t {
		e := heap.Pop(&r.h).(running)
		if e.gen != r.gen[e.job] {
			continue
		}
		if err := r.s.apply(e.takes, e.per, -1); err != nil {
			return n, err
		}
		if r.tr != nil {
			r.tr.finished(&r.jobs[e.job])
		}
		r.segs[r.cur[e.job]].end = e.end
		r.cur[e.job] = -1
		r.live--
		n++
	}
	return n, nil
}

// start runs job ji on takes from t.
func (r *replayer) start(ji int, takes []take, t float64) error {
	j, sh := &r.jobs[ji], r.shapes[ji]
	if err := r.s.check(takes, sh, r.name, j.ID); err != nil {
		return err
	}
	if err := r.s.apply(takes, sh.per, 1); err != nil {
		return err
	}
	if r.tr != nil {
		r.tr.started(r.s, j, takes, sh.per, t)
	}
	o := &r.out[ji]
	if !o.started {
		o.started, o.start = true, t
	}
	o.nodes = len(takes)
	o.lca, o.leaves = r.s.lca(takes)
	r.cur[ji] = len(r.segs)
	if r.usage != nil {
		r.usage.start(len(r.segs), j)
	}
	r.segs = append(r.segs, seg{job: ji, start: t, end: math.Inf(1)})
	e := running{end: t + r.left[ji], job: ji, takes: takes, per: sh.per, gen: r.gen[ji]}
	r.runs[ji] = e
	heap.Push(&r.h, e)
	r.live++
	return nil
}

// preemptJob stops running job v at t and queues it again: resumable
// work keeps what it ran up to its last checkpoint, other work starts
// over.
func (r *replayer) preemptJob(v int, t float64) error {
	j := &r.jobs[v]
	if r.cur[v] < 0 {
		return fmt.Errorf("simulate: policy %s preempts job %d, which is not running", r.name, j.ID)
	}
	e := r.runs[v]
	if err := r.s.apply(e.takes, e.per, -1); err != nil {
		return err
	}
	if r.tr != nil {
		r.tr.finished(j)
	}
	sg := &r.segs[r.cur[v]]
	sg.end = t
	ran, lost := t-sg.start, t-sg.start
	if j.Resumable && r.checkpoint > 0 {
		lost = math.Mod(ran, r.checkpoint)
		r.left[v] -= ran - lost
	} else {
		r.left[v] = j.Duration
	}
	r.gen[v]++
	r.cur[v] = -1
	r.live--
	r.out[v].preempted++
	r.preemptions++
	r.lostGPUSec += float64(j.GPUs) * lost
	sg.lost = lost
	r.requeued = append(r.requeued, v)
	return nil
}

// liveRuns returns the running jobs' entries.
func (r *replayer) liveRuns() []running {
	out := r.liveScratch[:0]
	for _, e := range r.h {
		if e.gen == r.gen[e.job] {
			out = append(out, e)
		}
	}
	r.liveScratch = out
	return out
}
