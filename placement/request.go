package placement

import (
	"errors"
	"fmt"
	"time"
)

// Scope is a compactness constraint.
type Scope string

// The scopes.
const (
	// ScopeNone asks for no particular compactness.
	ScopeNone Scope = ""
	// ScopeDomain is one NVLink (accelerator) domain.
	ScopeDomain Scope = "domain"
	// ScopeLeaf is one leaf switch.
	ScopeLeaf Scope = "leaf"
)

// Request is a job to place.
type Request struct {
	// Account is the budget (a tree account).
	Account string `json:"account"`
	// GPUs is the total GPUs; set either it or Nodes×GPUsPerNode.
	GPUs int `json:"gpus,omitempty"`
	// Nodes and GPUsPerNode ask for whole-node shaped work.
	Nodes       int `json:"nodes,omitempty"`
	GPUsPerNode int `json:"gpusPerNode,omitempty"`
	// Duration is the expected runtime (for the projected standing).
	Duration time.Duration `json:"duration"`
	// MinRuntime is the protected runtime; 0 makes the job unallocated.
	MinRuntime time.Duration `json:"minRuntime"`
	// Debug caps MinRuntime at Config.DebugMinRuntime.
	Debug bool `json:"debug,omitempty"`
	// Within is the compactness scope; Required makes it a hard constraint.
	Within   Scope `json:"within,omitempty"`
	Required bool  `json:"required,omitempty"`
}

// Total returns the GPUs requested.
func (r *Request) Total() int {
	if r.Nodes > 0 {
		return r.Nodes * r.GPUsPerNode
	}
	return r.GPUs
}

// Bounds of a request: beyond them a request names no real cluster, and
// Nodes×GPUsPerNode stays far from overflowing.
const (
	MaxRequestNodes = 1 << 20
	MaxGPUsPerNode  = 1 << 10
	// MaxNameLen bounds an account's name, in bytes (a Kubernetes
	// ClusterQueue's is at most 253): answers and explanations repeat
	// it.
	MaxNameLen = 256
)

// Validate reports an inconsistent request.
func (r *Request) Validate() error {
	var errs []error
	bad := func(f string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+f, append([]any{ErrInvalid}, a...)...))
	}
	if r.Account == "" {
		bad("account must be set")
	} else if len(r.Account) > MaxNameLen {
		bad("account is %d bytes long, at most %d", len(r.Account), MaxNameLen)
	}
	switch {
	case r.Nodes > 0 && r.GPUs > 0:
		bad("set gpus or nodes×gpusPerNode, not both")
	case r.Nodes > 0 && r.GPUsPerNode <= 0:
		bad("nodes needs gpusPerNode")
	case r.Nodes < 0 || r.GPUs < 0 || r.GPUsPerNode < 0:
		bad("gpus, nodes and gpusPerNode must not be negative")
	case r.Nodes > MaxRequestNodes || r.GPUsPerNode > MaxGPUsPerNode || r.GPUs > MaxRequestNodes*MaxGPUsPerNode:
		bad("nodes (at most %d), gpusPerNode (at most %d) and gpus (at most %d) are beyond any cluster",
			MaxRequestNodes, MaxGPUsPerNode, MaxRequestNodes*MaxGPUsPerNode)
	case r.Total() == 0:
		bad("request no GPUs")
	}
	if r.Duration < 0 || r.MinRuntime < 0 {
		bad("duration and minRuntime must not be negative")
	}
	switch r.Within {
	case ScopeNone, ScopeDomain, ScopeLeaf:
	default:
		bad("within %q is not domain or leaf", r.Within)
	}
	if r.Required && r.Within == ScopeNone {
		bad("required needs within")
	}
	return errors.Join(errs...)
}

// protected returns the clamped min runtime.
func (r *Request) protected(cfg *Config) time.Duration {
	limit := cfg.MinRuntimeCap
	if r.Debug {
		limit = min(limit, cfg.DebugMinRuntime)
	}
	return ClampMinRuntime(r.MinRuntime, limit)
}
