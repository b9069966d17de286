package consumertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// KueueGroup is Kueue's API group; the tests speak v1beta2.
const KueueGroup = "kueue.x-k8s.io"

// KueueResource is the v1beta2 GroupVersionResource of a Kueue kind's
// plural resource name ("workloads", "resourceflavors", ...).
func KueueResource(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: KueueGroup, Version: "v1beta2", Resource: resource}
}

// kueueObject is a v1beta2 object of kind with the given name, namespace
// ("" for cluster-scoped) and spec.
func kueueObject(kind, name, namespace string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": KueueGroup + "/v1beta2",
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

// Queues are the Kueue objects through which a test's Workloads are
// admitted onto its fabric.
type Queues struct {
	// Flavor, ClusterQueue and LocalQueue are the object names; Namespace
	// holds the LocalQueue and the Workloads.
	Flavor, ClusterQueue, LocalQueue, Namespace string
}

// CreateQueues creates a ResourceFlavor that selects the fabric's nodes and
// names the Topology topo, a ClusterQueue (every namespace) with ample
// quota of it, and a LocalQueue in namespace.
func CreateQueues(ctx context.Context, dyn dynamic.Interface, f *Fabric, topo, namespace string) (Queues, error) {
	q := Queues{Flavor: f.Prefix + "-gpu", ClusterQueue: f.Prefix + "-cq", LocalQueue: "lq", Namespace: namespace}
	nodeLabels := map[string]any{}
	for k, v := range f.Selector() {
		nodeLabels[k] = v
	}
	quota := func(name, v string) map[string]any { return map[string]any{"name": name, "nominalQuota": v} }
	objs := []struct {
		resource string
		obj      *unstructured.Unstructured
	}{
		{"resourceflavors", kueueObject("ResourceFlavor", q.Flavor, "", map[string]any{"nodeLabels": nodeLabels, "topologyName": topo})},
		{"clusterqueues", kueueObject("ClusterQueue", q.ClusterQueue, "", map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
				"flavors": []any{map[string]any{"name": q.Flavor, "resources": []any{
					quota("cpu", "10000"), quota("memory", "100Ti"), quota("nvidia.com/gpu", "10000"),
				}}},
			}},
		})},
		{"localqueues", kueueObject("LocalQueue", q.LocalQueue, namespace, map[string]any{"clusterQueue": q.ClusterQueue})},
	}
	for _, o := range objs {
		if _, err := dyn.Resource(KueueResource(o.resource)).Namespace(o.obj.GetNamespace()).Create(ctx, o.obj, metav1.CreateOptions{}); err != nil {
			return q, fmt.Errorf("consumertest: create %s %s: %w", o.obj.GetKind(), o.obj.GetName(), err)
		}
	}
	return q, nil
}

// TopologyRequest asks for a level: Required or Preferred (one is set).
type TopologyRequest struct {
	Required, Preferred string
}

// Workload returns a v1beta2 Workload in q's LocalQueue: one pod set
// "main" of count pods of one whole node's GPUs each, with the topology
// request.
func (q Queues) Workload(name string, count int, req TopologyRequest) (*unstructured.Unstructured, error) {
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "main", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				"cpu": mustQuantity("1"), "memory": mustQuantity("1Gi"), "nvidia.com/gpu": mustQuantity(strconv.Itoa(GPUsPerNode)),
			}},
		}},
	}}
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod)
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	tr := map[string]any{}
	if req.Required != "" {
		tr["required"] = req.Required
	}
	if req.Preferred != "" {
		tr["preferred"] = req.Preferred
	}
	return kueueObject("Workload", name, q.Namespace, map[string]any{
		"queueName": q.LocalQueue,
		"podSets": []any{map[string]any{
			"name": "main", "count": int64(count), "template": tmpl, "topologyRequest": tr,
		}},
	}), nil
}

// Domain is one domain of a decoded topology assignment: its value at
// each level (coarse to fine) and how many pods it holds.
type Domain struct {
	Values []string
	Pods   int
}

// Assignment is a pod set's decoded topology assignment.
type Assignment struct {
	// PodSet is the pod set's name; Levels the node label keys, coarse to
	// fine.
	PodSet  string
	Levels  []string
	Domains []Domain
}

// compact is the v1beta2 TopologyAssignment as stored.
type compact struct {
	Levels []string `json:"levels"`
	Slices []struct {
		DomainCount    int `json:"domainCount"`
		ValuesPerLevel []struct {
			Universal  *string `json:"universal"`
			Individual *struct {
				Prefix *string  `json:"prefix"`
				Suffix *string  `json:"suffix"`
				Roots  []string `json:"roots"`
			} `json:"individual"`
		} `json:"valuesPerLevel"`
		PodCounts struct {
			Universal  *int  `json:"universal"`
			Individual []int `json:"individual"`
		} `json:"podCounts"`
	} `json:"slices"`
}

// DecodeAssignment expands a v1beta2 topologyAssignment (levels and
// slices, each value universal or prefix+root+suffix, each pod count
// universal or per domain) into one Domain per domain. Malformed input is
// an error that names the slice.
func DecodeAssignment(raw []byte) (levels []string, domains []Domain, err error) {
	var c compact
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil, fmt.Errorf("consumertest: topologyAssignment: %w", err)
	}
	for si, s := range c.Slices {
		if len(s.ValuesPerLevel) != len(c.Levels) {
			return nil, nil, fmt.Errorf("consumertest: topologyAssignment slices[%d]: %d valuesPerLevel for %d levels", si, len(s.ValuesPerLevel), len(c.Levels))
		}
		for d := range s.DomainCount {
			dom := Domain{Values: make([]string, len(c.Levels))}
			for li, v := range s.ValuesPerLevel {
				switch {
				case v.Universal != nil:
					dom.Values[li] = *v.Universal
				case v.Individual != nil && d < len(v.Individual.Roots):
					dom.Values[li] = deref(v.Individual.Prefix) + v.Individual.Roots[d] + deref(v.Individual.Suffix)
				default:
					return nil, nil, fmt.Errorf("consumertest: topologyAssignment slices[%d].valuesPerLevel[%d]: no value for domain %d", si, li, d)
				}
			}
			switch {
			case s.PodCounts.Universal != nil:
				dom.Pods = *s.PodCounts.Universal
			case d < len(s.PodCounts.Individual):
				dom.Pods = s.PodCounts.Individual[d]
			default:
				return nil, nil, fmt.Errorf("consumertest: topologyAssignment slices[%d].podCounts: no count for domain %d", si, d)
			}
			domains = append(domains, dom)
		}
	}
	return c.Levels, domains, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Assignments returns the decoded topology assignment of each pod set of
// an admitted Workload, and false when it is not admitted (no
// status.admission).
func Assignments(wl *unstructured.Unstructured) ([]Assignment, bool, error) {
	psas, found, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	if !found {
		return nil, false, nil
	}
	var out []Assignment
	for i, p := range psas {
		m, _ := p.(map[string]any)
		name, _ := m["name"].(string)
		ta, ok := m["topologyAssignment"]
		if !ok {
			return nil, true, fmt.Errorf("consumertest: podSetAssignments[%d] (%s): no topologyAssignment", i, name)
		}
		raw, err := json.Marshal(ta)
		if err != nil {
			return nil, true, fmt.Errorf("consumertest: %w", err)
		}
		levels, doms, err := DecodeAssignment(raw)
		if err != nil {
			return nil, true, err
		}
		out = append(out, Assignment{PodSet: name, Levels: levels, Domains: doms})
	}
	return out, true, nil
}

// Condition returns the status and message of the Workload's condition
// of type typ, and false when it has none.
func Condition(wl *unstructured.Unstructured, typ string) (status, reason, message string, ok bool) {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg, true
		}
	}
	return "", "", "", false
}

// mustQuantity parses a quantity written in this file.
func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// WaitActive polls until the ClusterQueue's Active condition is True:
// Kueue has its ResourceFlavor and that flavor's Topology.
func WaitActive(ctx context.Context, dyn dynamic.Interface, cq string, timeout time.Duration) error {
	ri := dyn.Resource(KueueResource("clusterqueues"))
	last := ""
	err := kubetest.Poll(ctx, timeout, "ClusterQueue "+cq+" to be active", func(ctx context.Context) (bool, error) {
		o, err := ri.Get(ctx, cq, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st, reason, msg, _ := Condition(o, "Active")
		last = reason + ": " + msg
		return st == "True", nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	return nil
}
