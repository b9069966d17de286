package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// EnvScheduler is the path of a kube-scheduler binary.
const EnvScheduler = "TOPOSCOPE_KUBE_SCHEDULER"

// FindScheduler locates kube-scheduler ($TOPOSCOPE_KUBE_SCHEDULER, the
// cache's bin/kube-scheduler-v1.37.2, then $PATH), which
// hack/install-kube.sh builds beside kube-apiserver.
func FindScheduler() (string, error) {
	paths := []string{os.Getenv(EnvScheduler), filepath.Join(CacheDir(), "bin", "kube-scheduler-"+KubeVersion)}
	if p := firstExecutable(paths, "kube-scheduler"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%w: kube-scheduler %s: not in $%s, %s or $PATH", ErrNoBinaries, KubeVersion, EnvScheduler, paths[1])
}

// schedulerConfig is a KubeSchedulerConfiguration: the admin kubeconfig
// (with --config, the --kubeconfig flag is ignored), no leader election,
// one profile named %q, and the extenders given.
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
%s`

// SchedulerOptions configure a kube-scheduler run by the suite.
type SchedulerOptions struct {
	// Name is its profile's schedulerName, which pods name in
	// spec.schedulerName (default-scheduler if empty).
	Name string
	// Gates are its feature gates (e.g. WorkloadSchedulingGates).
	Gates string
	// Extenders is the configuration's extenders list in YAML, starting
	// with "extenders:"; none if empty.
	Extenders string
}

// Scheduler is a kube-scheduler the suite started.
type Scheduler struct{ p *process }

// Stop stops it (it is also stopped with its cluster).
func (s *Scheduler) Stop() { s.p.stop() }

// Log returns the tail of its log, for a failure message.
func (s *Scheduler) Log() string { return s.p.tail() }

// StartScheduler runs a real kube-scheduler out of cluster against c, with
// the given feature gates (e.g. WorkloadSchedulingGates; "" for none), as
// the default-scheduler. It serves no port (--secure-port=0) and is
// stopped, by its PID, with the cluster; its log is in the cluster's
// folder.
func (c *Cluster) StartScheduler(ctx context.Context, bin, gates string) error {
	_, err := c.StartSchedulerWith(ctx, bin, SchedulerOptions{Gates: gates})
	return err
}

// StartSchedulerWith is StartScheduler with a profile name and
// extenders: a second scheduler beside the default one, which schedules
// the pods that name it.
func (c *Cluster) StartSchedulerWith(ctx context.Context, bin string, o SchedulerOptions) (*Scheduler, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := "kube-scheduler"
	if o.Name == "" {
		o.Name = "default-scheduler"
	} else {
		name += "-" + o.Name
	}
	dir := filepath.Join(c.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := WriteKubeconfig(kubeconfig, c.AdminConfig()); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, schedulerConfig, kubeconfig, o.Name, o.Extenders), 0o600); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	args := []string{"--config=" + cfg, "--secure-port=0", "--leader-elect=false", "--v=2"}
	if o.Gates != "" {
		args = append(args, "--feature-gates="+o.Gates)
	}
	p, err := startProcess(dir, name, bin, args...)
	if err != nil {
		return nil, err
	}
	c.extra.add(p)
	return &Scheduler{p: p}, nil
}

// SchedulerLog returns the tail of the kube-scheduler's log, for a
// failure message.
func (c *Cluster) SchedulerLog() string { return c.extra.tail("kube-scheduler") }

// processes are the extra processes a cluster owns.
type processes struct {
	mu   sync.Mutex
	list []*process
}

func (ps *processes) add(p *process) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.list = append(ps.list, p)
}

// stopAll stops them, newest first.
func (ps *processes) stopAll() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i := len(ps.list) - 1; i >= 0; i-- {
		ps.list[i].stop()
	}
	ps.list = nil
}

// tail is the log tail of the newest process called name.
func (ps *processes) tail(name string) string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i := len(ps.list) - 1; i >= 0; i-- {
		if ps.list[i].name == name {
			return ps.list[i].tail()
		}
	}
	return ""
}
