package podsource

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Workload is the ledger's name of a pod's work: "namespace/name@uid".
func Workload(p *corev1.Pod) string {
	return p.Namespace + "/" + p.Name + "@" + string(p.UID)
}

// PodUID returns the pod UID in a workload named by Workload; ok is false
// for a name without one.
func PodUID(workload string) (uid string, ok bool) {
	at := strings.LastIndexByte(workload, '@')
	if at < 0 {
		return "", false
	}
	return workload[at+1:], true
}

// DurationAnnotation reads annotation key of pod p as a non-negative
// duration (such as 2h); 0 when the pod has no such annotation. A bad
// value is an error wrapping ErrAnnotation that names the pod, the
// annotation and the value.
func DurationAnnotation(p *corev1.Pod, key string) (time.Duration, error) {
	v, ok := p.Annotations[key]
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: pod %s/%s: %s: %q is not a non-negative duration such as 2h", ErrAnnotation, p.Namespace, p.Name, key, v)
	}
	return d, nil
}

// GPUs is the pod's effective request of the configured resources: the
// larger of the containers' sum and the largest init container (limits
// stand for requests, as Kubernetes defaults them for extended resources).
func (c *Config) GPUs(spec *corev1.PodSpec) int {
	count := func(ct *corev1.Container) int64 {
		var n int64
		for _, name := range c.Resources {
			q, ok := ct.Resources.Requests[corev1.ResourceName(name)]
			if !ok {
				q, ok = ct.Resources.Limits[corev1.ResourceName(name)]
			}
			if ok {
				n += q.Value()
			}
		}
		return n
	}
	var sum, initMax int64
	for i := range spec.Containers {
		sum += count(&spec.Containers[i])
	}
	for i := range spec.InitContainers {
		initMax = max(initMax, count(&spec.InitContainers[i]))
	}
	return int(max(sum, initMax))
}

// Account is the account a pod is charged to: its label, else its
// namespace's mapping, else (with the fallback) the namespace; "" when
// none applies.
func (c *Config) Account(p *corev1.Pod) string {
	if a := p.Labels[c.AccountLabel]; a != "" {
		return a
	}
	if a := c.NamespaceAccounts[p.Namespace]; a != "" {
		return a
	}
	if c.NamespaceFallback {
		return p.Namespace
	}
	return ""
}
