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
// the default profile.
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
`

// StartScheduler runs a real kube-scheduler out of cluster against c, with
// the given feature gates (e.g. WorkloadSchedulingGates; "" for none). It
// serves no port (--secure-port=0) and is stopped, by its PID, with the
// cluster; its log is in the cluster's folder.
func (c *Cluster) StartScheduler(ctx context.Context, bin, gates string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Join(c.dir, "kube-scheduler")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := WriteKubeconfig(kubeconfig, c.AdminConfig()); err != nil {
		return err
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, schedulerConfig, kubeconfig), 0o600); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	args := []string{"--config=" + cfg, "--secure-port=0", "--leader-elect=false", "--v=2"}
	if gates != "" {
		args = append(args, "--feature-gates="+gates)
	}
	p, err := startProcess(dir, "kube-scheduler", bin, args...)
	if err != nil {
		return err
	}
	c.extra.add(p)
	return nil
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
