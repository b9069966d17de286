package slurmsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/placement"
)

// ErrSqueue is wrapped when squeue cannot be run or fails.
var ErrSqueue = errors.New("squeue failed")

// Source reads Slurm jobs through squeue.
type Source struct {
	cfg Config
	log *slog.Logger
}

// New returns the source.
func New(cfg Config, log *slog.Logger) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Source{cfg: cfg, log: log}, nil
}

// NewFactory returns the source's registry entry.
func NewFactory() placement.SourceFactory {
	return placement.SourceFactory{
		Name:    Name,
		Summary: "Slurm jobs from squeue --json; --time-min is the min runtime, --requeue resumable",
		New: func(params *yaml.Node, prefix string, deps placement.SourceDeps) (placement.Source, error) {
			cfg := DefaultConfig()
			if err := config.Decode(params, &cfg, prefix); err != nil {
				return nil, err
			}
			return New(cfg, deps.Logger)
		},
		Example: "squeue: [printf, '{\"jobs\": []}']\n",
		Params:  config.SpecOf(DefaultConfig()),
	}
}

// Name implements placement.Source.
func (s *Source) Name() string { return Name }

// Records implements placement.Source: one `squeue --json
// --states=all`. Pending jobs, and jobs that never ran on a node or hold
// no GPU, are left out. Running and suspended jobs are live; finished
// ones (squeue keeps them for MinJobAge, 300 s by default) carry their
// end time.
func (s *Source) Records(ctx context.Context, now time.Time) ([]placement.Record, error) {
	out, err := s.run(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := parse(out)
	if err != nil {
		return nil, err
	}
	var recs []placement.Record
	var errs []error
	skipped := 0
	for i := range resp.Jobs {
		r, ok, err := s.record(&resp.Jobs[i], now)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%w: job %d: %w", ErrOutput, resp.Jobs[i].JobID, err))
		case ok && r.Account == "":
			skipped++
		case ok:
			recs = append(recs, r)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if skipped > 0 {
		s.log.Warn("slurm jobs with GPUs but no account were left out of the ledger", "jobs", skipped, "accountFrom", s.cfg.AccountFrom)
	}
	return recs, nil
}

// run runs squeue and returns its stdout; stderr goes into the error.
func (s *Source) run(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	argv := append(append([]string(nil), s.cfg.Squeue...), "--json", "--states=all")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if s.cfg.SlurmConf != "" {
		cmd.Env = append(os.Environ(), "SLURM_CONF="+s.cfg.SlurmConf)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w: %s", ErrSqueue, strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// record converts one job; ok is false for jobs left out.
func (s *Source) record(j *job, now time.Time) (placement.Record, bool, error) {
	if j.State.has("PENDING") || j.Nodes == "" || j.StartTime <= 0 {
		return placement.Record{}, false, nil
	}
	gpus, err := j.gpus()
	if err != nil || gpus == 0 {
		return placement.Record{}, false, err
	}
	nodes, err := hostlist.Expand(j.Nodes)
	if err != nil {
		return placement.Record{}, false, fmt.Errorf("nodes %q: %w", j.Nodes, err)
	}
	cluster := s.cfg.Cluster
	if cluster == "" {
		cluster = j.Cluster
	}
	r := placement.Record{Account: s.account(j), Workload: cluster + "/" + strconv.FormatInt(int64(j.JobID), 10), GPUs: gpus,
		Nodes: nodes, Start: time.Unix(int64(j.StartTime), 0).UTC(), Resumable: j.Requeue,
		MinRuntime: time.Duration(j.TimeMinimum) * time.Minute, Priority: int(min(int64(j.Priority), 1<<31-1))}
	r.Allocated = r.MinRuntime > 0
	if j.SubmitTime > 0 {
		r.Submit = time.Unix(int64(j.SubmitTime), 0).UTC()
	}
	live := j.State.has("RUNNING") || j.State.has("SUSPENDED") || j.State.has("CONFIGURING")
	if !live {
		r.End = r.Start
		if j.EndTime > j.StartTime {
			r.End = time.Unix(int64(j.EndTime), 0).UTC()
		}
	}
	if r.Start.After(now) {
		return placement.Record{}, false, nil
	}
	return r, true, nil
}

func (s *Source) account(j *job) string {
	switch s.cfg.AccountFrom {
	case WCKeyField:
		return j.WCKey
	case QOSField:
		return j.QOS
	case PartitionField:
		return j.Partition
	case UserField:
		return j.User
	default:
		return j.Account
	}
}
