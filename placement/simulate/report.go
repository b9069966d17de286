package simulate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toposcope/toposcope/placement"
)

// Report is one policy's replay result.
type Report struct {
	Policy string `json:"policy"`
	// Order is the queue order that ran (Options.Order).
	Order string `json:"order"`
	// Jobs and Events are the jobs replayed and the events processed
	// (submits and finishes).
	Jobs   int `json:"jobs"`
	Events int `json:"events"`
	// MultiNodeJobs ran on more than one node; MeanLeafSpan and
	// MeanLCALevel average their leaf switches and the level of their
	// lowest common switch (0 = one leaf).
	MultiNodeJobs int     `json:"multiNodeJobs"`
	MeanLeafSpan  float64 `json:"meanLeafSpan"`
	MeanLCALevel  float64 `json:"meanLCALevel"`
	// WaitP50, WaitP90 and WaitMean are start minus submit, in seconds.
	WaitP50  float64 `json:"waitP50Seconds"`
	WaitP90  float64 `json:"waitP90Seconds"`
	WaitMean float64 `json:"waitMeanSeconds"`
	// LargestJobGPUs is the largest request of the trace; LargestJobWait
	// the mean wait of the jobs of that size.
	LargestJobGPUs int     `json:"largestJobGPUs"`
	LargestJobWait float64 `json:"largestJobWaitSeconds"`
	// DebugJobs counts the debug jobs (Job.Debug); DebugWaitP90 is the
	// p90 of their waits, in seconds.
	DebugJobs    int     `json:"debugJobs"`
	DebugWaitP90 float64 `json:"debugWaitP90Seconds"`
	// Occupancy is the share of the cluster's GPU-seconds that jobs ran
	// useful work while jobs arrived (first to last submit; the whole
	// span when all arrive at once), so the drain after the last submit
	// does not dilute it; work a preemption threw away is not counted.
	// SpanSeconds runs from the first submit to the last finish.
	Occupancy   float64 `json:"occupancy"`
	SpanSeconds float64 `json:"spanSeconds"`
	// PartNodeFreeGPUs is the time-averaged number of free GPUs on
	// partly used nodes (stranded for whole-node work) while jobs
	// arrive; HeadBlockedFreeGPUs the time-averaged free GPUs while the
	// head of the queue fits by count but has not started (free, yet of
	// no use to it: scattered, or held back by its placement constraint).
	PartNodeFreeGPUs    float64 `json:"partNodeFreeGPUs"`
	HeadBlockedFreeGPUs float64 `json:"headBlockedFreeGPUs"`
	// UsefulGPUHours is the GPU-time the replay ran that counts toward
	// a job's completion: every job's GPUs × duration, once.
	// RedoneGPUHours is the GPU-time preemptions threw away and that ran
	// again (the same figure as LostGPUHours): ran, but not delivered.
	UsefulGPUHours float64 `json:"usefulGPUHours"`
	RedoneGPUHours float64 `json:"redoneGPUHours"`
	// Accounts are owed and delivered GPU-hours (fairshare.md §9.2)
	// over the whole span, by account, delivered counting useful
	// allocated work only; AccountsAtLeast95 counts those delivered at
	// least 95% of what they are owed (or owed nothing).
	Accounts          []AccountReport `json:"accounts"`
	AccountsAtLeast95 int             `json:"accountsAtLeast95"`
	// CappedDeliveredRatio is Σ min(delivered, owed) / Σ owed over the
	// accounts, each with the work charged to it directly (a parent's
	// figures without its children's): what an over-served account got
	// beyond its due does not make up for an under-served one. It is
	// the figure comparable with Ai2's "98% of owed GPU-hours
	// delivered"; 0 when nothing is owed.
	CappedDeliveredRatio float64 `json:"cappedDeliveredRatio"`
	// Preempt says whether the policy preempted (Options.Preempt);
	// Preemptions counts the jobs stopped and queued again, and
	// LostGPUHours the work they lost (since the last checkpoint for
	// resumable work, the whole run for the rest).
	Preempt      bool    `json:"preempt"`
	Preemptions  int     `json:"preemptions"`
	LostGPUHours float64 `json:"lostGPUHours"`
	// DefragAfterSeconds is Options.DefragAfter where the policy
	// defragments (the toposcope policy), else 0; Defragmentations counts
	// the times whole leaves were freed for a waiting job; its
	// preemptions are among Preemptions.
	DefragAfterSeconds float64 `json:"defragAfterSeconds"`
	Defragmentations   int     `json:"defragmentations"`
	// Starts is each job's first start, in seconds, by job ID.
	Starts []float64 `json:"-"`
	// Series are the figures over time for plotting, when
	// Options.Samples asked for them.
	Series *Series `json:"series,omitempty"`
}

// AccountReport is one account's owed and delivered GPU-hours.
type AccountReport struct {
	Account   string  `json:"name"`
	Owed      float64 `json:"owedGPUHours"`
	Delivered float64 `json:"deliveredGPUHours"`
	// Ratio is Delivered/Owed (0 when nothing is owed).
	Ratio float64 `json:"deliveredOverOwed"`
}

func report(s *state, rp *replayer, policy string, tree *placement.Tree) *Report {
	jobs := rp.jobs
	r := &Report{Policy: policy, Jobs: len(jobs), Events: rp.idle.events, Starts: make([]float64, len(jobs)),
		Preemptions: rp.preemptions, LostGPUHours: round2(rp.lostGPUSec / 3600), Defragmentations: rp.defrags}
	if len(jobs) == 0 {
		return r
	}
	waits := r.jobFigures(jobs, rp.out)
	recs := usageRecords(rp)
	var useful, end float64
	for _, sg := range rp.segs {
		end = max(end, sg.end)
		useful += float64(jobs[sg.job].GPUs) * (sg.end - sg.lost - sg.start)
	}
	r.UsefulGPUHours, r.RedoneGPUHours = round2(useful/3600), r.LostGPUHours
	r.waitFigures(jobs, waits)
	r.SpanSeconds = end - jobs[0].Submit
	r.windowFigures(rp, s.gpus, end)
	r.accountFigures(tree, recs, jobs, end, s.gpus)
	return r
}

// jobFigures sets each job's start, the mean wait, the multi-node jobs'
// leaf span and LCA level and the largest job's GPUs from the outcomes,
// and returns each job's wait.
func (r *Report) jobFigures(jobs []Job, out []outcome) []float64 {
	waits := make([]float64, len(jobs))
	var spanSum, lcaSum float64
	for i, j := range jobs {
		o := out[i]
		r.Starts[i] = o.start
		waits[i] = o.start - j.Submit
		r.WaitMean += waits[i]
		if o.nodes > 1 {
			r.MultiNodeJobs++
			spanSum += float64(o.leaves)
			lcaSum += float64(o.lca)
		}
		r.LargestJobGPUs = max(r.LargestJobGPUs, j.GPUs)
	}
	r.WaitMean /= float64(len(jobs))
	if r.MultiNodeJobs > 0 {
		r.MeanLeafSpan = spanSum / float64(r.MultiNodeJobs)
		r.MeanLCALevel = lcaSum / float64(r.MultiNodeJobs)
	}
	return waits
}

// waitFigures sets the largest jobs' mean wait, the debug jobs' and the
// wait percentiles from each job's wait; it sorts waits.
func (r *Report) waitFigures(jobs []Job, waits []float64) {
	n := 0
	for i, j := range jobs {
		if j.GPUs == r.LargestJobGPUs {
			r.LargestJobWait += waits[i]
			n++
		}
	}
	r.LargestJobWait /= float64(n)
	var debug []float64
	for i, j := range jobs {
		if j.Debug {
			debug = append(debug, waits[i])
		}
	}
	if r.DebugJobs = len(debug); r.DebugJobs > 0 {
		slices.Sort(debug)
		r.DebugWaitP90 = percentile(debug, 0.9)
	}
	slices.Sort(waits)
	r.WaitP50, r.WaitP90 = percentile(waits, 0.5), percentile(waits, 0.9)
}

// windowFigures sets the occupancy by useful work over the arrival
// window (first to last submit; to the last end, when they are one) of a
// cluster of gpus GPUs, and the idle GPUs averaged over it.
func (r *Report) windowFigures(rp *replayer, gpus int, end float64) {
	jobs := rp.jobs
	w0, w1 := jobs[0].Submit, jobs[len(jobs)-1].Submit
	if w1 <= w0 {
		w1 = end
	}
	if w1 > w0 {
		var gpuSec float64
		for _, sg := range rp.segs {
			gpuSec += float64(jobs[sg.job].GPUs) * max(0, min(w1, sg.end-sg.lost)-max(w0, sg.start))
		}
		r.Occupancy = gpuSec / (float64(gpus) * (w1 - w0))
	}
	if jw := jobs[len(jobs)-1].Submit - w0; jw > 0 {
		r.PartNodeFreeGPUs = round2(rp.idle.partSec / jw)
		r.HeadBlockedFreeGPUs = round2(rp.idle.blockedSec / jw)
	}
}

// accountFigures sets each account's owed and delivered GPU-hours from
// the usage records recs over the span, ending at end, on gpus GPUs.
func (r *Report) accountFigures(tree *placement.Tree, recs []placement.Record, jobs []Job, end float64, gpus int) {
	window := time.Duration(math.Ceil(r.SpanSeconds/3600)) * time.Hour
	owed, delivered := placement.OwedDelivered(tree, recs, epoch(end), window, gpus)
	for _, a := range accountsOf(jobs) {
		i, _ := tree.Lookup(a)
		ar := AccountReport{Account: a, Owed: round2(owed[i]), Delivered: round2(delivered[i])}
		if owed[i] > 0 {
			ar.Ratio = round2(delivered[i] / owed[i])
		}
		if owed[i] <= 0 || delivered[i] >= 0.95*owed[i] {
			r.AccountsAtLeast95++
		}
		r.Accounts = append(r.Accounts, ar)
	}
	r.CappedDeliveredRatio = cappedRatio(tree, owed, delivered)
}

// cappedRatio is Σ min(delivered, owed) / Σ owed over the tree's
// accounts, each with its own figures: owed and delivered add the
// children's, which are taken off again so that no GPU-hour counts
// twice. It is 0 when nothing is owed.
func cappedRatio(tree *placement.Tree, owed, delivered []float64) float64 {
	var capped, total float64
	for i, a := range tree.Accounts() {
		o, d := owed[i], delivered[i]
		for _, c := range a.Children {
			o, d = o-owed[c], d-delivered[c]
		}
		o, d = max(o, 0), max(d, 0) // rounding of the sums
		capped += min(o, d)
		total += o
	}
	if total <= 0 {
		return 0
	}
	return round4(capped / total)
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// WriteTable prints the reports side by side: one row per policy, then
// delivered/owed per account and policy.
func WriteTable(w io.Writer, reports []*Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	preempt := slices.ContainsFunc(reports, func(r *Report) bool { return r.Preempt || r.DefragAfterSeconds > 0 })
	debug := slices.ContainsFunc(reports, func(r *Report) bool { return r.DebugJobs > 0 })
	head := "policy\tjobs\tmulti-node\tmean leaf span\tmean LCA level\twait p50\twait p90\tlargest-job wait\toccupancy\tuseful GPU-h\tpart-node free\thead-blocked free\taccounts ≥95%\tcapped delivered/owed\t"
	if debug {
		head += "debug p90\t"
	}
	if preempt {
		head += "preempted\tredone GPU-h\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range reports {
		capped := "-" // nothing owed
		if r.CappedDeliveredRatio > 0 || slices.ContainsFunc(r.Accounts, func(a AccountReport) bool { return a.Owed > 0 }) {
			capped = fmt.Sprintf("%.1f%%", 100*r.CappedDeliveredRatio)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%s\t%s\t%s\t%.1f%%\t%.0f\t%.1f\t%.1f\t%d/%d\t%s\t", r.Policy, r.Jobs, r.MultiNodeJobs,
			r.MeanLeafSpan, r.MeanLCALevel, dur(r.WaitP50), dur(r.WaitP90), dur(r.LargestJobWait), 100*r.Occupancy,
			r.UsefulGPUHours, r.PartNodeFreeGPUs, r.HeadBlockedFreeGPUs, r.AccountsAtLeast95, len(r.Accounts), capped)
		if debug {
			fmt.Fprintf(tw, "%s\t", dur(r.DebugWaitP90))
		}
		if preempt {
			fmt.Fprintf(tw, "%d\t%.0f\t", r.Preemptions, r.RedoneGPUHours)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if len(reports) > 0 && len(reports[0].Accounts) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"account", "owed GPU-h (" + reports[0].Policy + ")"}
		for _, r := range reports {
			head = append(head, r.Policy+" delivered/owed")
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for i, a := range reports[0].Accounts {
			row := []string{a.Account, fmt.Sprintf("%.0f", a.Owed)}
			for _, r := range reports {
				row = append(row, fmt.Sprintf("%.2f", r.Accounts[i].Ratio))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// dur prints seconds as a rounded duration.
func dur(sec float64) string {
	d := secs(sec).Round(time.Second)
	if d >= time.Hour {
		d = d.Round(time.Minute)
	}
	return d.String()
}
