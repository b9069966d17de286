package placement

import (
	"errors"
	"fmt"
	"time"
)

// Mode selects how standings order accounts.
type Mode string

// The standing modes.
const (
	// ModeFairTree is Slurm's Fair Tree ranking (the default).
	ModeFairTree Mode = "fairtree"
	// ModeClassic is Slurm's classic factor F = 2^(-U_E/S) on decayed usage.
	ModeClassic Mode = "classic"
	// ModeWindow is Ai2's ratio of actual to entitled occupancy in the window.
	ModeWindow Mode = "window"
)

// Ranking selects how candidates are ordered.
type Ranking string

// The ranking modes.
const (
	// RankLexicographic orders by the rank key (the default).
	RankLexicographic Ranking = "lexicographic"
	// RankWeighted orders by the weighted score, then the rank key.
	RankWeighted Ranking = "weighted"
)

// Weights are the weighted-mode coefficients.
type Weights struct {
	// LCA, Span, Domains, Frag and Keep weigh sLCA, sSpan, sDomains,
	// sFrag and sKeep; Preemption and Wait weigh the normalized
	// preemption cost and wait, which are subtracted.
	LCA        float64 `yaml:"lca" json:"lca"`
	Span       float64 `yaml:"span" json:"span"`
	Domains    float64 `yaml:"domains" json:"domains"`
	Frag       float64 `yaml:"frag" json:"frag"`
	Keep       float64 `yaml:"keep" json:"keep"`
	Preemption float64 `yaml:"preemption" json:"preemption"`
	Wait       float64 `yaml:"wait" json:"wait"`
}

// Config holds every knob of the package.
type Config struct {
	// Mode is the standing mode; default fairtree.
	Mode Mode `yaml:"mode" json:"mode"`
	// Window is the look-back window; default 7 days.
	Window time.Duration `yaml:"window" json:"window"`
	// HalfLife is the decay half-life of classic mode; default 7 days.
	HalfLife time.Duration `yaml:"halfLife" json:"halfLife"`
	// MinRuntimeCap caps protected runtime; default 8 h.
	MinRuntimeCap time.Duration `yaml:"minRuntimeCap" json:"minRuntimeCap"`
	// DebugMinRuntime is the largest min runtime of a debug request; default 15 min.
	DebugMinRuntime time.Duration `yaml:"debugMinRuntime" json:"debugMinRuntime"`
	// Horizon bounds the "reclaimable within" candidate class; default 2 h.
	Horizon time.Duration `yaml:"horizon" json:"horizon"`
	// MaxVictimRatio keeps preemption proportionate: a running workload
	// is a victim only when its GPUs are at most this many times the
	// request's; default 4 (an 8-GPU request never preempts a 576-GPU
	// job). 0 turns the guard off.
	MaxVictimRatio float64 `yaml:"maxVictimRatio" json:"maxVictimRatio"`
	// MaxLossRatio bounds what a preempting candidate destroys: the
	// GPU-time its victims lose (run so far, or since the last
	// checkpoint) is at most this many times the request's own
	// (GPUs × duration, at least an hour); default 1. 0 turns the guard
	// off.
	MaxLossRatio float64 `yaml:"maxLossRatio" json:"maxLossRatio"`
	// CheckpointInterval is how often resumable work is taken to
	// checkpoint: preempting it loses at most this much of its run, and
	// it is preempted before work that would restart; default 1 h.
	CheckpointInterval time.Duration `yaml:"checkpointInterval" json:"checkpointInterval"`
	// MaxCandidates is the number of candidates per class; default 4.
	MaxCandidates int `yaml:"maxCandidates" json:"maxCandidates"`
	// Ranking is lexicographic (default) or weighted.
	Ranking Ranking `yaml:"ranking" json:"ranking"`
	// Weights are used in weighted mode.
	Weights Weights `yaml:"weights" json:"weights"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Mode: ModeFairTree, Window: 7 * 24 * time.Hour, HalfLife: 7 * 24 * time.Hour,
		MinRuntimeCap: 8 * time.Hour, DebugMinRuntime: 15 * time.Minute, Horizon: 2 * time.Hour,
		MaxVictimRatio: 4, MaxLossRatio: 1, CheckpointInterval: time.Hour, MaxCandidates: 4, Ranking: RankLexicographic,
		Weights: Weights{LCA: 4, Span: 2, Domains: 1, Frag: 1, Keep: 1, Preemption: 2, Wait: 1},
	}
}

// Validate reports every invalid field.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...)))
	}
	switch c.Mode {
	case ModeFairTree, ModeClassic, ModeWindow:
	default:
		bad("mode", "%q is not fairtree, classic or window", c.Mode)
	}
	switch c.Ranking {
	case RankLexicographic, RankWeighted:
	default:
		bad("ranking", "%q is not lexicographic or weighted", c.Ranking)
	}
	for name, d := range map[string]time.Duration{"window": c.Window, "halfLife": c.HalfLife,
		"minRuntimeCap": c.MinRuntimeCap, "debugMinRuntime": c.DebugMinRuntime, "checkpointInterval": c.CheckpointInterval} {
		if d <= 0 {
			bad(name, "must be positive, got %s", d)
		}
	}
	if c.Horizon < 0 {
		bad("horizon", "must not be negative")
	}
	if c.MaxVictimRatio < 0 {
		bad("maxVictimRatio", "must not be negative (0 turns the guard off)")
	}
	if c.MaxLossRatio < 0 {
		bad("maxLossRatio", "must not be negative (0 turns the guard off)")
	}
	if c.MaxCandidates < 1 {
		bad("maxCandidates", "must be at least 1")
	}
	w := c.Weights
	for _, v := range []float64{w.LCA, w.Span, w.Domains, w.Frag, w.Keep, w.Preemption, w.Wait} {
		if v < 0 {
			bad("weights", "must not be negative")
			break
		}
	}
	return errors.Join(errs...)
}
