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

// Header is the first line of a CSV trace; HeaderV1, without the
// resumable column (every job then restarts when preempted), is read too.
const (
	Header   = "submit_seconds,account,gpus,duration_seconds,min_runtime_seconds,resumable"
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
}

// ParseTrace reads a CSV trace (see Header). Submit times must not
// decrease; gpus and duration_seconds must be positive; min_runtime_seconds
// must be in [0, duration_seconds]. Errors name the line and column.
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
			case HeaderV1:
				cols = cols[:5]
			default:
				return nil, fmt.Errorf("%w: line 1: header must be %q (or, without resumable, %q)", ErrTrace, Header, HeaderV1)
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
		if len(cols) == 6 {
			switch strings.TrimSpace(rec[5]) {
			case "1", "true":
				j.Resumable = true
			case "0", "false", "":
			default:
				return nil, bad(5, "%q: want 1 or 0", rec[5])
			}
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 && cr.InputOffset() == 0 {
		return nil, fmt.Errorf("%w: line 1: missing header %q", ErrTrace, Header)
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
	for _, j := range jobs {
		res := "0"
		if j.Resumable {
			res = "1"
		}
		if err := cw.Write([]string{f(j.Submit), j.Account, strconv.Itoa(j.GPUs), f(j.Duration), f(j.MinRuntime), res}); err != nil {
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
// every second job is resumable.
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
		o.MeanInterarrival = meanGPUs * o.MeanDuration / (o.Load * float64(o.CapacityGPUs))
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
