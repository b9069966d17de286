package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
)

// Record is one workload's occupancy in the usage ledger.
type Record struct {
	// Account is the budget charged (a leaf of the tree).
	Account string `yaml:"account" json:"account"`
	// Workload identifies the job.
	Workload string `yaml:"workload" json:"workload"`
	// GPUs is the number of GPUs held.
	GPUs int `yaml:"gpus" json:"gpus"`
	// Nodes are the nodes the GPUs are on (hostlist expressions in YAML),
	// spread evenly (the first nodes take the remainder). Optional for usage, needed for placement.
	Nodes []string `yaml:"nodes" json:"nodes,omitempty"`
	// Submit is when the work was requested (demand starts); Start if zero.
	Submit time.Time `yaml:"submit" json:"submit,omitzero"`
	// Start is when the GPUs were bound.
	Start time.Time `yaml:"start" json:"start"`
	// End is when they were released; zero while running.
	End time.Time `yaml:"end" json:"end,omitzero"`
	// MinRuntime is the declared protected runtime (before the cap).
	MinRuntime time.Duration `yaml:"minRuntime" json:"minRuntime"`
	// Allocated is true when the work is charged to its budget.
	Allocated bool `yaml:"allocated" json:"allocated"`
	// Resumable is true when the work can be re-queued after preemption.
	Resumable bool `yaml:"resumable" json:"resumable"`
	// Priority orders work within one account (higher survives longer).
	Priority int `yaml:"priority" json:"priority,omitempty"`
	// Source names the ledger source that reported the record
	// ("kubernetes", "slurm"); empty for records ingested over REST or
	// from a file.
	Source string `yaml:"source" json:"source,omitempty"`
	// Held marks GPUs promised to work that is not bound yet (a gang the
	// scheduler extender holds nodes for): they occupy the nodes, but
	// are never a victim. Never read from or written to a ledger file.
	Held bool `yaml:"-" json:"-"`
}

// Running reports whether r holds its GPUs at now.
func (r *Record) Running(now time.Time) bool {
	return !r.Start.After(now) && (r.End.IsZero() || r.End.After(now))
}

// ProtectedUntil returns when r stops being protected from preemption:
// Start + min(MinRuntime, limit) for allocated work, Start otherwise.
func (r *Record) ProtectedUntil(limit time.Duration) time.Time {
	if !r.Allocated || r.MinRuntime <= 0 {
		return r.Start
	}
	return r.Start.Add(ClampMinRuntime(r.MinRuntime, limit))
}

// ClampMinRuntime caps a minimum runtime at limit (8 h by default).
func ClampMinRuntime(d, limit time.Duration) time.Duration {
	return max(0, min(d, limit))
}

// Ledger is the ledger file: a list of records.
type Ledger struct {
	// Records are the occupancy records.
	Records []Record `yaml:"records" json:"records"`
}

// Validate reports records without an account, with no GPUs, or ending
// before they start.
func (l *Ledger) Validate() error {
	var errs []error
	for i := range l.Records {
		r := &l.Records[i]
		f := fmt.Sprintf("records[%d]", i)
		if r.Account == "" {
			errs = append(errs, config.Errorf(f+".account", "must not be empty"))
		} else if len(r.Account) > MaxNameLen {
			errs = append(errs, config.Errorf(f+".account", "is %d bytes long, at most %d", len(r.Account), MaxNameLen))
		}
		if r.GPUs <= 0 {
			errs = append(errs, config.Errorf(f+".gpus", "must be positive"))
		}
		if r.Start.IsZero() {
			errs = append(errs, config.Errorf(f+".start", "must be set"))
		}
		if !r.End.IsZero() && r.End.Before(r.Start) {
			errs = append(errs, config.Errorf(f+".end", "is before start"))
		}
		if r.MinRuntime < 0 {
			errs = append(errs, config.Errorf(f+".minRuntime", "must not be negative"))
		}
	}
	return errors.Join(errs...)
}

// ParseLedger strictly decodes a ledger YAML document.
func ParseLedger(data []byte) (*Ledger, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: ledger: %w", ErrInvalid, err)
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	l := &Ledger{}
	if err := config.Decode(root, l, "ledger"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i := range l.Records {
		var names []string
		for _, expr := range l.Records[i].Nodes {
			more, err := hostlist.Expand(expr)
			if err != nil {
				return nil, fmt.Errorf("%w: ledger.records[%d].nodes: %w", ErrInvalid, i, err)
			}
			names = append(names, more...)
		}
		l.Records[i].Nodes = names
	}
	return l, nil
}

// Accounts returns the account names of the records (with repeats).
func (l *Ledger) Accounts() []string {
	out := make([]string, 0, len(l.Records))
	for i := range l.Records {
		out = append(out, l.Records[i].Account)
	}
	return out
}

// Source supplies ledger records read from a scheduler (Kubernetes
// pods, Slurm jobs): running work with no End, and finished work with
// its End. Implementations must not call time.Now themselves.
type Source interface {
	// Name names the source in records, logs and metrics.
	Name() string
	// Records returns the work the scheduler knows at now. An error
	// means the answer is incomplete: nothing of it is used.
	Records(ctx context.Context, now time.Time) ([]Record, error)
}
