package config

import (
	"errors"
	"fmt"
	"time"
)

// Placement is the `placement:` section: where the service's ledger
// comes from besides POST /v1/ledger.
type Placement struct {
	// SyncInterval is the time between two reads of the sources
	// (default 30s).
	SyncInterval time.Duration `yaml:"syncInterval"`
	// Sources are the ledger sources (kubernetes, slurm), each with its
	// own params; a name appears at most once.
	Sources []Plugin `yaml:"sources"`
	// Extender configures the kube-scheduler extender routes.
	Extender Extender `yaml:"extender"`
}

// DefaultPlacement returns the defaults: no sources, a 30 s interval,
// the extender off.
func DefaultPlacement() Placement {
	return Placement{SyncInterval: 30 * time.Second, Extender: DefaultExtender()}
}

// Validate reports every invalid key of the section.
func (p *Placement) Validate() error {
	var errs []error
	if p.SyncInterval <= 0 {
		errs = append(errs, Errorf("syncInterval", "must be a positive duration, got %s", p.SyncInterval))
	}
	seen := map[string]bool{}
	for i, s := range p.Sources {
		field := fmt.Sprintf("sources[%d].name", i)
		switch {
		case s.Name == "":
			errs = append(errs, Errorf(field, "is required"))
		case seen[s.Name]:
			errs = append(errs, Errorf(field, "%q is listed twice", s.Name))
		}
		seen[s.Name] = true
	}
	errs = append(errs, PrefixFields("extender", p.Extender.Validate()))
	return errors.Join(errs...)
}
