package podsource

import (
	corev1 "k8s.io/api/core/v1"
)

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
