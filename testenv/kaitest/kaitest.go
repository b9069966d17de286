// Package kaitest runs the real KAI scheduler (github.com/NVIDIA/KAI-scheduler
// cmd/scheduler, built by hack/install-kai.sh) out of cluster against a
// kubetest apiserver, and creates the objects it schedules: KAI's CRDs,
// Ready Nodes with GPUs (no kubelet), Queues, PodGroups and their pods.
// The scheduler's answer is a BindRequest per pod (spec.selectedNode); no
// binder runs, so pods stay unbound and the BindRequests are the result.
//
// Several schedulers can share one apiserver: each is started for one node
// pool (the value of KAI's node-pool label, NodePoolLabel) and only sees
// the Nodes and PodGroups labelled with it.
package kaitest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// Version is the KAI scheduler release hack/install-kai.sh builds.
const Version = "v0.12.0"

// EnvScheduler overrides the path of the kai-scheduler binary.
const EnvScheduler = "TOPOSCOPE_KAI_SCHEDULER"

// SchedulerName is the schedulerName of the pods KAI schedules (its
// default --scheduler-name).
const SchedulerName = "kai-scheduler"

// NodePoolLabel is KAI's node-pool label key (its default
// --nodepool-label-key): a scheduler started for pool P sees only the
// Nodes and PodGroups whose label has the value P.
const NodePoolLabel = "kai.scheduler/node-pool"

// ErrNotInstalled is wrapped when the scheduler or its CRDs are missing.
var ErrNotInstalled = errors.New("KAI scheduler not installed (run hack/install-kai.sh)")

// Install is where hack/install-kai.sh put the scheduler and its CRDs.
type Install struct {
	// Scheduler is the kai-scheduler binary, an absolute path.
	Scheduler string
	// CRDs are KAI's CustomResourceDefinition files.
	CRDs []string
}

// Find locates the scheduler ($TOPOSCOPE_KAI_SCHEDULER, else the cache's
// bin/kai-scheduler-v0.12.0, else kai-scheduler on $PATH) and the CRDs
// (the cache's kai-crds-v0.12.0/*.yaml).
func Find() (Install, error) {
	var in Install
	var errs []error
	cached := filepath.Join(kubetest.CacheDir(), "bin", "kai-scheduler-"+Version)
	for _, p := range []string{os.Getenv(EnvScheduler), cached} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			in.Scheduler = p
			break
		}
	}
	if in.Scheduler == "" {
		if p, err := exec.LookPath(SchedulerName); err == nil {
			in.Scheduler = p
		}
	}
	if in.Scheduler == "" {
		errs = append(errs, fmt.Errorf("kai-scheduler %s: not in $%s, %s or $PATH", Version, EnvScheduler, cached))
	}
	dir := filepath.Join(kubetest.CacheDir(), "kai-crds-"+Version)
	crds, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(crds) == 0 {
		errs = append(errs, fmt.Errorf("KAI CRDs: none in %s", dir))
	}
	in.CRDs = crds
	if len(errs) > 0 {
		return Install{}, fmt.Errorf("%w: %w", ErrNotInstalled, errors.Join(errs...))
	}
	return in, nil
}

// Require returns the installed scheduler. Without it the test is
// skipped, except with CI=true, where it fails.
func Require(t testing.TB) Install {
	t.Helper()
	in, err := Find()
	switch {
	case err != nil && kubetest.InCI():
		t.Fatalf("CI=true and %v", err)
	case err != nil:
		t.Skipf("%v", err)
	}
	return in
}
