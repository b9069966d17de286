package simulate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

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
