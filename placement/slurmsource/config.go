// Package slurmsource is the Slurm ledger source: the jobs that `squeue
// --json` reports as holding (or having held) GPUs become placement
// ledger records. A job's declared minimum run time (--time-min) makes it
// allocated work protected for that long; --requeue makes it resumable.
package slurmsource

import (
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

// Name is the source's registered name.
const Name = "slurm"

// The job fields an account can come from.
const (
	AccountField   = "account"
	WCKeyField     = "wckey"
	QOSField       = "qos"
	PartitionField = "partition"
	UserField      = "user"
)

// Config is the slurm ledger source's configuration.
type Config struct {
	// Squeue is the command that runs squeue (default ["squeue"]); it
	// may be a wrapper such as ["ssh", "login1", "squeue"]. The source
	// adds --json --states=all.
	Squeue []string `yaml:"squeue"`
	// SlurmConf, when set, is passed as SLURM_CONF.
	SlurmConf string `yaml:"slurmConf,omitempty"`
	// Cluster names the cluster in workload IDs (default: the job's
	// cluster field).
	Cluster string `yaml:"cluster,omitempty"`
	// AccountFrom is the job field charged: account (default), wckey,
	// qos, partition or user. Jobs where it is empty are left out.
	AccountFrom string `yaml:"accountFrom"`
	// Timeout bounds one squeue run (default 60s).
	Timeout time.Duration `yaml:"timeout"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Squeue: []string{"squeue"}, AccountFrom: AccountField, Timeout: time.Minute}
}

// Validate reports every invalid field as a config.FieldError.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Squeue) == 0 || c.Squeue[0] == "" {
		errs = append(errs, config.Errorf("squeue", "must name a command"))
	}
	switch c.AccountFrom {
	case AccountField, WCKeyField, QOSField, PartitionField, UserField:
	default:
		errs = append(errs, config.Errorf("accountFrom", "must be account, wckey, qos, partition or user, got %q", c.AccountFrom))
	}
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be a positive duration, got %s", c.Timeout))
	}
	return config.Join(errs...)
}
