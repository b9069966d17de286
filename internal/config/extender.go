package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/keys"
)

// Extender is the `placement.extender:` section: the kube-scheduler
// extender routes under /v1/extender/ (filter, prioritize, preempt).
type Extender struct {
	// Enabled serves the routes (default false).
	Enabled bool `yaml:"enabled"`
	// GangLabel is the pod label naming a pod's gang within its
	// namespace (default toposcope.io/gang); a pod whose
	// spec.schedulingGroup names a PodGroup is in that gang too.
	GangLabel string `yaml:"gangLabel"`
	// GangSizeAnnotation is the pod annotation holding the gang's pod
	// count (default toposcope.io/gang-size).
	GangSizeAnnotation string `yaml:"gangSizeAnnotation"`
	// DurationAnnotation is the pod annotation holding the expected
	// runtime, a Go duration (default toposcope.io/duration); it weighs
	// the requester's standing after the job.
	DurationAnnotation string `yaml:"durationAnnotation"`
	// HoldTTL is how long a gang's chosen node set is held after the
	// last call for one of its pods (default 2m).
	HoldTTL time.Duration `yaml:"holdTTL"`
	// MaxHeld caps the gangs held at once (default 256); beyond it the
	// least recently used hold is dropped.
	MaxHeld int `yaml:"maxHeld"`
	// MaxConcurrent bounds the extender calls served at once (default
	// 4); beyond it a call is refused with 429 and Retry-After at once,
	// before its body is read, so that the memory of concurrent calls
	// (a gang placed on 100,000 nodes takes about 90 MB) stays bounded.
	// kube-scheduler calls one at a time per scheduler.
	MaxConcurrent int `yaml:"maxConcurrent"`
	// Clients are the client-certificate names (subject common name or a
	// DNS name) let through to these routes without a bearer token:
	// kube-scheduler sends none, and authenticates with the client
	// certificate of its extender tlsConfig (server.tls.clientCA must
	// be set).
	Clients []string `yaml:"clients"`
}

// Defaults of the extender section.
const (
	DefaultGangLabel          = keys.Prefix + "gang"
	DefaultGangSizeAnnotation = keys.Prefix + "gang-size"
	DefaultDurationAnnotation = keys.Prefix + "duration"
	DefaultHoldTTL            = 2 * time.Minute
	DefaultMaxHeld            = 256
	DefaultMaxConcurrent      = 4
	// MaxConcurrentLimit bounds maxConcurrent.
	MaxConcurrentLimit = 1024
	// MaxHeldLimit bounds maxHeld.
	MaxHeldLimit = 100000
)

// DefaultExtender returns the defaults (disabled).
func DefaultExtender() Extender {
	return Extender{GangLabel: DefaultGangLabel, GangSizeAnnotation: DefaultGangSizeAnnotation,
		DurationAnnotation: DefaultDurationAnnotation, HoldTTL: DefaultHoldTTL, MaxHeld: DefaultMaxHeld,
		MaxConcurrent: DefaultMaxConcurrent}
}

// Validate reports every invalid key of the section.
func (e *Extender) Validate() error {
	var errs []error
	for _, k := range []struct{ field, v string }{
		{"gangLabel", e.GangLabel}, {"gangSizeAnnotation", e.GangSizeAnnotation}, {"durationAnnotation", e.DurationAnnotation},
	} {
		if msgs := validation.IsQualifiedName(k.v); len(msgs) > 0 {
			errs = append(errs, Errorf(k.field, "%q is not a label or annotation key: %s", k.v, strings.Join(msgs, "; ")))
		}
	}
	if e.HoldTTL <= 0 {
		errs = append(errs, Errorf("holdTTL", "must be a positive duration, got %s", e.HoldTTL))
	}
	if e.MaxHeld < 1 || e.MaxHeld > MaxHeldLimit {
		errs = append(errs, Errorf("maxHeld", "must be 1 to %d, got %d", MaxHeldLimit, e.MaxHeld))
	}
	if e.MaxConcurrent < 1 || e.MaxConcurrent > MaxConcurrentLimit {
		errs = append(errs, Errorf("maxConcurrent", "must be 1 to %d, got %d", MaxConcurrentLimit, e.MaxConcurrent))
	}
	for i, c := range e.Clients {
		if strings.TrimSpace(c) == "" || c != strings.TrimSpace(c) {
			errs = append(errs, Errorf(fmt.Sprintf("clients[%d]", i), "%q is not a certificate name", c))
		}
	}
	return errors.Join(errs...)
}
