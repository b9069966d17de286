package kubetest

// Options change how a Cluster's kube-apiserver starts. The zero value is
// the suite's default cluster.
type Options struct {
	// APIServerFlags are added to kube-apiserver's command line (feature
	// gates, runtime config).
	APIServerFlags []string
}

// WorkloadSchedulingFlags are the kube-apiserver flags that serve the
// scheduling.k8s.io/v1beta1 PodGroup API with topology constraints, which
// kube-scheduler's workload-aware topology scheduling reads.
func WorkloadSchedulingFlags() []string {
	return []string{
		"--feature-gates=" + WorkloadSchedulingGates,
		"--runtime-config=scheduling.k8s.io/v1beta1=true",
	}
}

// WorkloadSchedulingGates are the feature gates of workload-aware topology
// scheduling, for kube-apiserver and kube-scheduler alike.
const WorkloadSchedulingGates = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
