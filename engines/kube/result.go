package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// ErrRefused is wrapped when a guard refused a publish; nothing was written.
var ErrRefused = errors.New("publish refused")

// ErrWrite is wrapped when the apiserver rejected or failed a write.
var ErrWrite = errors.New("kubernetes write failed")

// Values of Mode, the `mode` parameter of every Kubernetes engine.
const (
	// ModeApply reads the cluster and writes what differs (the default).
	ModeApply = "apply"
	// ModeDryRun reads the cluster and prints what apply would write,
	// writing nothing.
	ModeDryRun = "dry-run"
	// ModePrint contacts no cluster: Publish prints the desired objects as
	// YAML (the engine's Render).
	ModePrint = "print"
)

// CheckMode validates a mode parameter.
func CheckMode(field, mode string) error {
	switch mode {
	case ModeApply, ModeDryRun, ModePrint:
		return nil
	}
	return config.Errorf(field, "unknown mode %q (want %s, %s or %s)", mode, ModeApply, ModeDryRun, ModePrint)
}

// Change is one object write, made or (in a dry run or plan) intended.
type Change struct {
	// Kind, Namespace and Name identify the object.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Op is "create", "update", "patch", "delete" or "recreate" (deleted
	// and created again under the same name: a kueue ResourceFlavor whose
	// spec cannot be changed).
	Op string `json:"op"`
	// Set are the labels or annotations (prefixed "label " or
	// "annotation ") set to a new value; Remove are those removed.
	Set    map[string]string `json:"set,omitempty"`
	Remove []string          `json:"remove,omitempty"`
	// Note says anything else about the change.
	Note string `json:"note,omitempty"`
}

// Result summarizes one publish by a Kubernetes engine.
type Result struct {
	// Engine is the engine's name.
	Engine string `json:"engine"`
	// DryRun is true when nothing was written.
	DryRun bool `json:"dryRun"`
	// Changed counts the objects written (or, in a dry run, that would
	// be); Unchanged those already as desired.
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	// Refused are the Kubernetes nodes left alone because the graph does
	// not place them (not in the graph, or unplaced by the provider), in
	// natural order. Their managed labels are kept, never stripped.
	Refused []string `json:"refused,omitempty"`
	// Changes lists every write, in the order they were planned.
	Changes []Change `json:"changes,omitempty"`
	// Shrink is set by engines whose objects form a tree of their own
	// rather than follow nodes (kueue-budgets): ShrinkGuard then weighs
	// the objects the plan deletes against those it found.
	Shrink *Shrink `json:"shrink,omitempty"`
	// Warnings are problems that did not stop the publish.
	Warnings []string `json:"warnings,omitempty"`
}

// Shrink counts, for a plan, the engine's own objects it found in the
// cluster (Had) and how many of them it deletes (Removed).
type Shrink struct {
	Had     int `json:"had"`
	Removed int `json:"removed"`
	// Kind names what is counted in messages ("accounts").
	Kind string `json:"kind"`
	// Accept says how an operator lets a refused plan through.
	Accept string `json:"accept,omitempty"`
}

// Summary is the one-line report printed by the CLI: objects changed,
// unchanged and refused.
func (r *Result) Summary() string {
	verb := "changed"
	if r.DryRun {
		verb = "to change"
	}
	s := fmt.Sprintf("%s: %d %s, %d unchanged, %d refused", r.Engine, r.Changed, verb, r.Unchanged, len(r.Refused))
	if len(r.Refused) > 0 {
		s += " (not placed by the graph, left as they are: " + shortList(r.Refused) + ")"
	}
	return s
}

// WriteTo prints the summary, the warnings and, with changes set, every
// change, one per line.
func (r *Result) WriteTo(w io.Writer, changes bool) error {
	var b strings.Builder
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	for _, warn := range r.Warnings {
		b.WriteString("warning: " + warn + "\n")
	}
	if changes {
		for _, c := range r.Changes {
			b.WriteString(c.String())
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String renders a change as `patch Node/gpu001: set label k=v; remove label k2`.
func (c Change) String() string {
	obj := c.Kind + "/" + c.Name
	if c.Namespace != "" {
		obj = c.Kind + "/" + c.Namespace + "/" + c.Name
	}
	var parts []string
	for _, k := range sortedKeys(c.Set) {
		parts = append(parts, "set "+k+"="+c.Set[k])
	}
	for _, k := range c.Remove {
		parts = append(parts, "remove "+k)
	}
	if c.Note != "" {
		parts = append(parts, c.Note)
	}
	return c.Op + " " + obj + ": " + strings.Join(parts, "; ")
}

// shortList compresses node names into a hostlist of at most ~120 bytes.
func shortList(names []string) string {
	s := hostlist.Compress(names)
	if len(s) <= 120 {
		return s
	}
	cut := strings.LastIndexByte(s[:120], ',')
	if cut < 0 {
		cut = 120
	}
	return s[:cut] + ",…"
}

// Guard inspects the plan of a publish before anything is written and
// returns an error to refuse it. The plan is a dry-run Result. The service
// passes its shrink guard here so that a partial discovery cannot strip
// labels; the CLI passes none.
type Guard func(ctx context.Context, g *topology.Graph, plan *Result) error

// ApplyOptions are the per-call options of Applier.Apply.
type ApplyOptions struct {
	// DryRun computes the changes without writing.
	DryRun bool
	// Guard, when set, may refuse the plan.
	Guard Guard
	// Snapshot identifies the discovery that produced the graph, for
	// engines that record their source (slinky's ConfigMap annotation);
	// empty records a hash of the graph instead.
	Snapshot string
}

// Applier is implemented by every Kubernetes engine, on top of
// engines.Engine: Apply publishes g (or, with DryRun, plans it) and
// returns what changed.
type Applier interface {
	Apply(ctx context.Context, g *topology.Graph, opts ApplyOptions) (*Result, error)
}

// CheckGuard runs opts.Guard, if any, on plan and wraps a refusal in
// ErrRefused.
func CheckGuard(ctx context.Context, g *topology.Graph, plan *Result, opts ApplyOptions) error {
	if opts.Guard == nil {
		return nil
	}
	if err := opts.Guard(ctx, g, plan); err != nil {
		if errors.Is(err, ErrRefused) {
			return err
		}
		return fmt.Errorf("%s: %w: %w", plan.Engine, ErrRefused, err)
	}
	return nil
}

// sortedKeys returns the keys of m in byte order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// PrefixFields puts prefix in front of the field of every config.FieldError
// in err (a nested configuration's errors, such as the embedded Slurm
// settings of the slinky engine).
func PrefixFields(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	list := []error{err}
	if j, ok := config.Join(err).(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	for _, e := range list {
		var fe *config.FieldError
		if errors.As(e, &fe) {
			c := *fe
			c.Field = prefix + "." + c.Field
			out = append(out, &c)
			continue
		}
		out = append(out, &config.FieldError{Field: prefix, Err: e})
	}
	return errors.Join(out...)
}
