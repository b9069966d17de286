package simulate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// ErrTrace is wrapped by every trace parse error.
var ErrTrace = errors.New("invalid trace")

// Header is the first line of a CSV trace. HeaderV2, without the debug
// column (no job is debug work), and HeaderV1, without resumable either
// (every job then restarts when preempted), are read too.
const (
	Header   = "submit_seconds,account,gpus,duration_seconds,min_runtime_seconds,resumable,debug"
	HeaderV2 = "submit_seconds,account,gpus,duration_seconds,min_runtime_seconds,resumable"
	HeaderV1 = "submit_seconds,account,gpus,duration_seconds,min_runtime_seconds"
)

// Job is one trace line: a job submitted at Submit seconds after the
// trace start by Account, asking for GPUs GPUs for Duration seconds.
// MinRuntime is its protected runtime in seconds (0: unallocated work).
type Job struct {
	ID         int     `json:"id"`
	Submit     float64 `json:"submitSeconds"`
	Account    string  `json:"account"`
	GPUs       int     `json:"gpus"`
	Duration   float64 `json:"durationSeconds"`
	MinRuntime float64 `json:"minRuntimeSeconds"`
	// Resumable work resumes where it stopped when preempted; other
	// work restarts from the beginning.
	Resumable bool `json:"resumable"`
	// Debug work is a short test on few GPUs: allocated work whose
	// protection the replay caps at the planner's DebugMinRuntime (15
	// minutes), as a debug request's is (fairshare.md §1.2).
	Debug bool `json:"debug"`
}

// MaxTraceSeconds bounds every time of a trace (submit_seconds,
// duration_seconds, min_runtime_seconds): ten years. The replay works in
// time.Duration (at most 292 years) and counts owed GPU-hours in whole
// seconds of its span, so far larger times cannot be represented; they
// are refused, not replayed as nothing.
const MaxTraceSeconds = 10 * 365 * 24 * 3600.0

// ParseTrace reads a CSV trace (see Header). Submit times must not
// decrease; gpus and duration_seconds must be positive; min_runtime_seconds
// must be in [0, duration_seconds], and positive for debug work (it is
// allocated); no time may exceed MaxTraceSeconds. A trace needs at least
// one job. Errors name the line and column.
func ParseTrace(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var jobs []Job
	cols := strings.Split(Header, ",")
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTrace, err)
		}
		if line, _ = cr.FieldPos(0); line == 1 {
			switch strings.Join(rec, ",") {
			case Header:
			case HeaderV2:
				cols = cols[:6]
			case HeaderV1:
				cols = cols[:5]
			default:
				return nil, fmt.Errorf("%w: line 1: header must be %q (or, without debug, %q; without resumable, %q)", ErrTrace, Header, HeaderV2, HeaderV1)
			}
			continue
		}
		if len(rec) != len(cols) {
			return nil, fmt.Errorf("%w: line %d: %d fields, want %d", ErrTrace, line, len(rec), len(cols))
		}
		bad := func(col int, format string, a ...any) error {
			return fmt.Errorf("%w: line %d column %d (%s): %s", ErrTrace, line, col+1, cols[col], fmt.Sprintf(format, a...))
		}
		j := Job{ID: len(jobs), Account: strings.TrimSpace(rec[1])}
		nums := [...]*float64{&j.Submit, nil, nil, &j.Duration, &j.MinRuntime}
		for c, p := range nums {
			if p == nil {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[c]), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, bad(c, "%q is not a non-negative number", rec[c])
			}
			if v > MaxTraceSeconds {
				return nil, bad(c, "%s is past the %.0f seconds (ten years) a trace's times may reach", strings.TrimSpace(rec[c]), MaxTraceSeconds)
			}
			*p = v
		}
		g, err := strconv.Atoi(strings.TrimSpace(rec[2]))
		switch {
		case j.Account == "":
			return nil, bad(1, "account is empty")
		case err != nil || g <= 0:
			return nil, bad(2, "%q is not a positive integer", rec[2])
		case j.Duration <= 0:
			return nil, bad(3, "duration must be positive")
		case j.MinRuntime > j.Duration:
			return nil, bad(4, "min runtime %g exceeds duration %g", j.MinRuntime, j.Duration)
		case len(jobs) > 0 && j.Submit < jobs[len(jobs)-1].Submit:
			return nil, bad(0, "submit %g is before the previous line's %g", j.Submit, jobs[len(jobs)-1].Submit)
		}
		j.GPUs = g
		for c, p := range []*bool{&j.Resumable, &j.Debug} {
			if c+5 >= len(cols) {
				break
			}
			switch strings.TrimSpace(rec[c+5]) {
			case "1", "true":
				*p = true
			case "0", "false", "":
			default:
				return nil, bad(c+5, "%q: want 1 or 0", rec[c+5])
			}
		}
		if j.Debug && j.MinRuntime <= 0 {
			return nil, bad(4, "debug work is allocated: its min runtime must be positive")
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 && cr.InputOffset() == 0 {
		return nil, fmt.Errorf("%w: line 1: missing header %q", ErrTrace, Header)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%w: a header and no jobs: nothing to replay", ErrTrace)
	}
	return jobs, nil
}

// WriteTrace writes jobs as a CSV trace that ParseTrace reads back.
func WriteTrace(w io.Writer, jobs []Job) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(strings.Split(Header, ",")); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	for _, j := range jobs {
		if err := cw.Write([]string{f(j.Submit), j.Account, strconv.Itoa(j.GPUs), f(j.Duration), f(j.MinRuntime),
			flag(j.Resumable), flag(j.Debug)}); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

// SyntheticOptions shape a generated trace.
type SyntheticOptions struct {
	// Jobs is the number of jobs (> 0), or, with Horizon, the most jobs
	// (0: no limit).
	Jobs int
	// Horizon, when positive, ends the trace at the first submit past
	// Horizon seconds.
	Horizon float64
	// Seed seeds the PCG generator; equal options give equal traces.
	Seed uint64
	// Accounts is the number of accounts, acct00.. (default 4), drawn
	// with equal chances; ignored when Mix is set.
	Accounts int
	// Mix, when set, names the accounts and the share of the offered
	// GPU-time each submits: a job's account is drawn with chances
	// proportional to Weight.
	Mix []AccountWeight
	// MaxGPUs caps a job's GPUs (default 256); sizes are powers of two.
	MaxGPUs int
	// Alpha is the Zipf exponent over size classes 1,2,4,..: P(2^k) ∝
	// (k+1)^-Alpha (default 1.2; larger means fewer big jobs).
	Alpha float64
	// MeanInterarrival is the mean gap between submits in seconds
	// (exponential; default 300).
	MeanInterarrival float64
	// MeanDuration is the scale of the Pareto(shape 1.5) runtime in
	// seconds (default 3600); runtimes are capped at 48 h.
	MeanDuration float64
	// Load, when positive, is the offered load as a fraction of
	// CapacityGPUs: it sets MeanInterarrival to the mean job size times
	// MeanDuration over Load × CapacityGPUs.
	Load float64
	// CapacityGPUs is the cluster's GPUs (needed with Load).
	CapacityGPUs int
	// DebugShare is the share of jobs that are debug work, in [0, 1):
	// 1, 2, 4 or 8 GPUs (at most MaxGPUs) for 1 to 30 minutes, protected
	// for their whole run up to 15 minutes, never resumable. With Load
	// the gaps are set for the mix.
	DebugShare float64
}

// AccountWeight is one account of a SyntheticOptions.Mix.
type AccountWeight struct {
	Account string
	Weight  float64
}

// Validate reports options Synthetic cannot use (after defaults).
func (o SyntheticOptions) Validate() error {
	var errs []error
	switch {
	case !(o.Horizon >= 0) || math.IsInf(o.Horizon, 1):
		errs = append(errs, errors.New("horizon must be finite and not negative"))
	case o.Horizon == 0 && o.Jobs <= 0:
		errs = append(errs, errors.New("jobs must be positive"))
	case o.Jobs < 0:
		errs = append(errs, errors.New("jobs must not be negative"))
	}
	seen := map[string]bool{}
	for i, a := range o.Mix {
		switch {
		case a.Account == "":
			errs = append(errs, fmt.Errorf("mix[%d]: account name is empty", i))
		case seen[a.Account]:
			errs = append(errs, fmt.Errorf("mix[%d]: account %q is listed twice", i, a.Account))
		case !(a.Weight > 0) || math.IsInf(a.Weight, 1):
			errs = append(errs, fmt.Errorf("mix[%d]: account %q: weight must be positive", i, a.Account))
		}
		seen[a.Account] = true
	}
	if o.Accounts < 0 || o.MaxGPUs < 0 || o.Alpha < 0 || o.MeanInterarrival < 0 || o.MeanDuration < 0 || o.Load < 0 {
		errs = append(errs, errors.New("accounts, max GPUs, alpha, means and load must not be negative"))
	}
	if math.IsInf(o.Load, 1) || math.IsNaN(o.Load) || math.IsInf(o.MeanInterarrival, 1) || math.IsNaN(o.MeanInterarrival) {
		errs = append(errs, errors.New("load and mean interarrival must be finite"))
	}
	if !(o.DebugShare >= 0 && o.DebugShare < 1) {
		errs = append(errs, errors.New("debug share must be at least 0 and below 1"))
	}
	if o.Load > 0 && o.CapacityGPUs <= 0 {
		errs = append(errs, errors.New("a load needs the cluster's GPU capacity"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("synthetic options: %w", err)
	}
	return nil
}

func (o SyntheticOptions) withDefaults() SyntheticOptions {
	if o.Accounts == 0 {
		o.Accounts = 4
	}
	if o.MaxGPUs == 0 {
		o.MaxGPUs = 256
	}
	if o.Alpha == 0 {
		o.Alpha = 1.2
	}
	if o.MeanInterarrival == 0 {
		o.MeanInterarrival = 300
	}
	if o.MeanDuration == 0 {
		o.MeanDuration = 3600
	}
	return o
}

// Synthetic generates a heavy-tailed trace: power-of-two GPU counts with a
// Zipf tail over size classes, Pareto runtimes, exponential gaps. Every
// third job is allocated with a min runtime of a quarter of its duration;
// every second job is resumable. With a DebugShare, that share of the
// jobs (drawn independently) is debug work instead.
func Synthetic(o SyntheticOptions) ([]Job, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x70b05c09e))
	var weights []float64
	sum := 0.0
	for s := 1; s <= o.MaxGPUs; s *= 2 {
		w := math.Pow(float64(len(weights)+1), -o.Alpha)
		weights = append(weights, w)
		sum += w
	}
	if o.Load > 0 {
		meanGPUs := 0.0
		for k, w := range weights {
			meanGPUs += w / sum * float64(int(1)<<k)
		}
		gpuSec := meanGPUs * o.MeanDuration
		if o.DebugShare > 0 {
			gpuSec = (1-o.DebugShare)*gpuSec + o.DebugShare*debugMeanGPUs(o.MaxGPUs)*debugMeanSeconds
		}
		o.MeanInterarrival = gpuSec / (o.Load * float64(o.CapacityGPUs))
	}
	if o.Horizon > 0 && o.Jobs == 0 && o.MeanInterarrival < 1 {
		// Gaps are rounded to whole seconds: under a second on average,
		// time would hardly move and the trace would not end.
		return nil, fmt.Errorf("synthetic options: a mean gap of %.3g s between submits is under a second: lower the load", o.MeanInterarrival)
	}
	pick := accountPicker(o)
	var jobs []Job
	if o.Jobs > 0 {
		jobs = make([]Job, 0, o.Jobs)
	}
	t := 0.0
	for i := 0; o.Jobs == 0 || i < o.Jobs; i++ {
		t += math.Round(rng.ExpFloat64() * o.MeanInterarrival)
		if o.Horizon > 0 && t > o.Horizon {
			break
		}
		if o.DebugShare > 0 && rng.Float64() < o.DebugShare {
			jobs = append(jobs, debugJob(rng, i, t, pick(rng), o.MaxGPUs))
			continue
		}
		u, k := rng.Float64()*sum, 0
		for ; k < len(weights)-1 && u >= weights[k]; k++ {
			u -= weights[k]
		}
		// Pareto with shape 1.5 has mean 3·xm; scale so the mean is MeanDuration.
		d := (o.MeanDuration / 3) / math.Pow(1-rng.Float64(), 1/1.5)
		d = math.Round(min(d, 48*3600))
		j := Job{ID: i, Submit: t, Account: pick(rng), GPUs: 1 << k, Duration: max(d, 1)}
		if i%3 == 0 {
			j.MinRuntime = math.Round(j.Duration / 4)
		}
		j.Resumable = i%2 == 0 // half the jobs checkpoint
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// accountPicker draws a job's account: acct00.. with equal chances, or
// from o.Mix by weight.
func accountPicker(o SyntheticOptions) func(*rand.Rand) string {
	if len(o.Mix) == 0 {
		return func(rng *rand.Rand) string { return fmt.Sprintf("acct%02d", rng.IntN(o.Accounts)) }
	}
	cum := make([]float64, len(o.Mix))
	total := 0.0
	for i, a := range o.Mix {
		total += a.Weight
		cum[i] = total
	}
	return func(rng *rand.Rand) string {
		u := rng.Float64() * total
		i, _ := slices.BinarySearch(cum, u)
		return o.Mix[min(i, len(cum)-1)].Account
	}
}

// Debug work of synthetic traces: 1, 2, 4 or 8 GPUs (at most the
// trace's largest job), 1 to 30 minutes, protected for its whole run up
// to debugProtect seconds.
const (
	debugMinSeconds, debugMaxSeconds = 60.0, 1800.0
	debugMeanSeconds                 = (debugMinSeconds + debugMaxSeconds) / 2
	debugProtect                     = 900.0
)

// debugSizes returns the GPU counts of debug work when jobs take at most
// maxGPUs.
func debugSizes(maxGPUs int) []int {
	var out []int
	for g := 1; g <= min(8, maxGPUs); g *= 2 {
		out = append(out, g)
	}
	return out
}

func debugMeanGPUs(maxGPUs int) float64 {
	sizes, sum := debugSizes(maxGPUs), 0
	for _, g := range sizes {
		sum += g
	}
	return float64(sum) / float64(len(sizes))
}

// debugJob draws one debug job.
func debugJob(rng *rand.Rand, id int, submit float64, account string, maxGPUs int) Job {
	sizes := debugSizes(maxGPUs)
	d := math.Round(debugMinSeconds + rng.Float64()*(debugMaxSeconds-debugMinSeconds))
	return Job{ID: id, Submit: submit, Account: account, GPUs: sizes[rng.IntN(len(sizes))], Duration: d,
		MinRuntime: min(d, debugProtect), Debug: true}
}
