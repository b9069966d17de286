package charts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// renderObjects renders the chart with args and decodes the objects.
func renderObjects(t *testing.T, h *helmtest.Helm, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := render(t, h, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.DecodeYAML([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// findKind returns the object of kind whose component label is component
// ("" for any), or nil.
func findKind(objs []*unstructured.Unstructured, kind, component string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && (component == "" || o.GetLabels()["app.kubernetes.io/component"] == component) {
			return o
		}
	}
	return nil
}

// mustKind is findKind that fails the test when there is none.
func mustKind(t *testing.T, objs []*unstructured.Unstructured, kind, component string) *unstructured.Unstructured {
	t.Helper()
	o := findKind(objs, kind, component)
	if o == nil {
		t.Fatalf("no %s %s in the rendering", component, kind)
	}
	return o
}

// at reads a nested field of obj; a number in the path indexes a list.
func at(obj map[string]any, path ...any) any {
	var cur any = obj
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			cur = l[k]
		}
	}
	return cur
}

// podSpec is the pod template's spec of a workload.
func podSpec(o *unstructured.Unstructured) map[string]any {
	m, _ := at(o.Object, "spec", "template", "spec").(map[string]any)
	return m
}

// containerOf is the container called name of a pod spec.
func containerOf(t *testing.T, spec map[string]any, name string) map[string]any {
	t.Helper()
	cs, _ := spec["containers"].([]any)
	for _, c := range cs {
		if m, _ := c.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no container %s", name)
	return nil
}

// eq fails the test unless got and want encode to the same JSON.
func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil || !bytes.Equal(g, w) {
		t.Errorf("%s = %s, want %s", what, g, w)
	}
}

// TestAgentDaemonSet: the agent pods' priority class (system-node-critical
// by default), affinity, labels and annotations, health port and probes,
// and the rolling update's maxUnavailable come from the values.
func TestAgentDaemonSet(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)

	ds := mustKind(t, renderObjects(t, h, "--set", "agent.enabled=true"), "DaemonSet", "agent")
	spec := podSpec(ds)
	eq(t, "priorityClassName", spec["priorityClassName"], "system-node-critical")
	eq(t, "maxUnavailable", at(ds.Object, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), int64(1))
	c := containerOf(t, spec, "agent")
	eq(t, "ports", c["ports"], []any{map[string]any{"name": "health", "containerPort": int64(49022), "protocol": "TCP"}})
	eq(t, "liveness path", at(c, "livenessProbe", "httpGet", "path"), "/healthz")
	eq(t, "liveness port", at(c, "livenessProbe", "httpGet", "port"), "health")
	eq(t, "readiness path", at(c, "readinessProbe", "httpGet", "path"), "/readyz")
	eq(t, "readiness port", at(c, "readinessProbe", "httpGet", "port"), "health")
	if args, _ := c["args"].([]any); !slices.Contains(args, any("--health-listen=:49022")) {
		t.Errorf("args %v lack --health-listen=:49022", args)
	}

	ds = mustKind(t, renderObjects(t, h, "--set", "agent.enabled=true",
		"--set", "agent.priorityClassName=", "--set", "agent.healthPort=0",
		"--set", "agent.updateStrategy.rollingUpdate.maxUnavailable=10%",
		"--set", "agent.podLabels.team=ml", "--set", "agent.podAnnotations.note=gpu",
		"--set", "agent.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=nvidia.com/gpu.present",
		"--set", "agent.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
	), "DaemonSet", "agent")
	spec = podSpec(ds)
	if _, ok := spec["priorityClassName"]; ok {
		t.Errorf("priorityClassName %v rendered with agent.priorityClassName empty", spec["priorityClassName"])
	}
	eq(t, "maxUnavailable", at(ds.Object, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), "10%")
	eq(t, "pod label team", at(ds.Object, "spec", "template", "metadata", "labels", "team"), "ml")
	eq(t, "pod annotation note", at(ds.Object, "spec", "template", "metadata", "annotations", "note"), "gpu")
	eq(t, "affinity key", at(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0, "key"), "nvidia.com/gpu.present")
	eq(t, "selector", at(ds.Object, "spec", "selector", "matchLabels", "team"), nil)
	c = containerOf(t, spec, "agent")
	for _, k := range []string{"ports", "livenessProbe", "readinessProbe"} {
		if _, ok := c[k]; ok {
			t.Errorf("%s rendered with agent.healthPort 0", k)
		}
	}
	for _, a := range c["args"].([]any) {
		if strings.HasPrefix(a.(string), "--health-listen") {
			t.Errorf("%s passed with agent.healthPort 0", a)
		}
	}
}

// TestServeScheduling: with more than one replica and no affinity the
// replicas prefer different nodes; given affinity and spread constraints
// are used (the constraints get the serve selector); the probes come from
// the values, with the HTTPS scheme when the service listens with TLS.
func TestServeScheduling(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)

	dep := mustKind(t, renderObjects(t, h), "Deployment", "serve")
	if a, ok := podSpec(dep)["affinity"]; ok {
		t.Errorf("one replica: affinity %v, want none", a)
	}
	c := containerOf(t, podSpec(dep), "toposcope")
	eq(t, "liveness", c["livenessProbe"], map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": "http"}, "periodSeconds": int64(20), "failureThreshold": int64(3)})
	eq(t, "readiness", c["readinessProbe"], map[string]any{"httpGet": map[string]any{"path": "/readyz", "port": "http"}, "periodSeconds": int64(10)})
	eq(t, "startup", c["startupProbe"], map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": "http"}, "periodSeconds": int64(5), "failureThreshold": int64(60)})

	dep = mustKind(t, renderObjects(t, h, "--set", "replicaCount=2",
		"--set", "topologySpreadConstraints[0].maxSkew=1",
		"--set", "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
		"--set", "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
	), "Deployment", "serve")
	selector := at(dep.Object, "spec", "selector", "matchLabels")
	term, _ := at(podSpec(dep), "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "podAffinityTerm").(map[string]any)
	if term == nil {
		t.Fatalf("two replicas: no preferred pod anti-affinity in %v", podSpec(dep)["affinity"])
	}
	eq(t, "anti-affinity topologyKey", term["topologyKey"], "kubernetes.io/hostname")
	eq(t, "anti-affinity selector", at(term, "labelSelector", "matchLabels"), selector)
	spread, _ := at(podSpec(dep), "topologySpreadConstraints", 0).(map[string]any)
	if spread == nil {
		t.Fatal("no topologySpreadConstraints")
	}
	eq(t, "spread topologyKey", spread["topologyKey"], "topology.kubernetes.io/zone")
	eq(t, "spread selector", at(spread, "labelSelector", "matchLabels"), selector)

	dep = mustKind(t, renderObjects(t, h, "--set", "replicaCount=2",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=role",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
	), "Deployment", "serve")
	if at(podSpec(dep), "affinity", "podAntiAffinity") != nil || at(podSpec(dep), "affinity", "nodeAffinity") == nil {
		t.Errorf("given affinity: rendered %v, want the given one alone", podSpec(dep)["affinity"])
	}

	objs := renderObjects(t, h, "--set", "readinessProbe.periodSeconds=3", "--set", "startupProbe=null",
		"--set", "config.server.tls.cert=/etc/tls/tls.crt", "--set", "config.server.tls.key=/etc/tls/tls.key",
		"--set", "metrics.serviceMonitor.enabled=true")
	c = containerOf(t, podSpec(mustKind(t, objs, "Deployment", "serve")), "toposcope")
	eq(t, "readiness period", at(c, "readinessProbe", "periodSeconds"), int64(3))
	if _, ok := c["startupProbe"]; ok {
		t.Error("startupProbe rendered with startupProbe=null")
	}
	eq(t, "liveness scheme with TLS", at(c, "livenessProbe", "httpGet", "scheme"), "HTTPS")
	eq(t, "readiness scheme with TLS", at(c, "readinessProbe", "httpGet", "scheme"), "HTTPS")
	eq(t, "ServiceMonitor scheme with TLS", at(mustKind(t, objs, "ServiceMonitor", "").Object, "spec", "endpoints", 0, "scheme"), "https")
	if p := findKind(objs, "Pod", "test"); p != nil {
		t.Error("a helm test Pod is rendered with TLS, whose client trusts only the system roots")
	}
}

// TestPodDisruptionBudget: the budget exists only when a pod can be
// spared (replicaCount > 1).
func TestPodDisruptionBudget(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	if pdb := findKind(renderObjects(t, h, "--set", "podDisruptionBudget.enabled=true"), "PodDisruptionBudget", ""); pdb != nil {
		t.Error("one replica: a PodDisruptionBudget is rendered, and it would block every node drain")
	}
	pdb := mustKind(t, renderObjects(t, h, "--set", "podDisruptionBudget.enabled=true", "--set", "replicaCount=3"), "PodDisruptionBudget", "")
	eq(t, "minAvailable", at(pdb.Object, "spec", "minAvailable"), int64(1))
}

// TestServiceMonitor: namespace, scheme and TLS configuration.
func TestServiceMonitor(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	sm := mustKind(t, renderObjects(t, h, "--set", "metrics.serviceMonitor.enabled=true"), "ServiceMonitor", "")
	eq(t, "namespace", sm.GetNamespace(), "")
	eq(t, "namespaceSelector", at(sm.Object, "spec", "namespaceSelector"), nil)
	eq(t, "scheme", at(sm.Object, "spec", "endpoints", 0, "scheme"), "http")

	sm = mustKind(t, renderObjects(t, h, "--set", "metrics.serviceMonitor.enabled=true",
		"--set", "metrics.serviceMonitor.namespace=monitoring", "--set", "metrics.serviceMonitor.scheme=https",
		"--set", "metrics.serviceMonitor.tlsConfig.serverName=toposcope.toposcope.svc",
		"--set", "metrics.serviceMonitor.tlsConfig.ca.secret.name=toposcope-ca",
		"--set", "metrics.serviceMonitor.tlsConfig.ca.secret.key=ca.crt"), "ServiceMonitor", "")
	eq(t, "namespace", sm.GetNamespace(), "monitoring")
	eq(t, "namespaceSelector", at(sm.Object, "spec", "namespaceSelector", "matchNames"), []any{"toposcope"})
	eq(t, "scheme", at(sm.Object, "spec", "endpoints", 0, "scheme"), "https")
	eq(t, "tlsConfig", at(sm.Object, "spec", "endpoints", 0, "tlsConfig"), map[string]any{
		"serverName": "toposcope.toposcope.svc",
		"ca":         map[string]any{"secret": map[string]any{"name": "toposcope-ca", "key": "ca.crt"}},
	})
}

// TestHelmTestPod: the test hook runs the serve image's client against
// the Service, with the read token when the API has tokens.
func TestHelmTestPod(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	pod := mustKind(t, renderObjects(t, h), "Pod", "test")
	eq(t, "hook", pod.GetAnnotations()["helm.sh/hook"], "test")
	spec := pod.Object["spec"].(map[string]any)
	c := containerOf(t, spec, "show")
	eq(t, "args", c["args"], []any{"show", "--server=http://toposcope.toposcope.svc:49021", "--depth=1"})
	eq(t, "image", c["image"], containerOf(t, podSpec(mustKind(t, renderObjects(t, h), "Deployment", "serve")), "toposcope")["image"])

	pod = mustKind(t, renderObjects(t, h, "-f", "toposcope/examples/kueue.yaml"), "Pod", "test")
	spec = pod.Object["spec"].(map[string]any)
	c = containerOf(t, spec, "show")
	if args := fmt.Sprint(c["args"]); !strings.Contains(args, "--token-file=/etc/toposcope/tokens/peer") {
		t.Errorf("with auth.existingSecret: args %s lack the read token's file", args)
	}
	eq(t, "token volume", at(spec, "volumes", 0, "secret", "items"), []any{map[string]any{"key": "peer", "path": "peer"}})

	if p := findKind(renderObjects(t, h, "--set", "tests.enabled=false"), "Pod", "test"); p != nil {
		t.Error("tests.enabled=false still renders the test Pod")
	}
	if p := findKind(renderObjects(t, h, "--set", "auth.existingSecret=tok"), "Pod", "test"); p != nil {
		t.Error("tokens and no read token for the test: a test Pod is rendered, which the API would refuse")
	}
	pod = mustKind(t, renderObjects(t, h, "--set", "auth.existingSecret=tok", "--set", "tests.tokenKey=scrape"), "Pod", "test")
	if args := fmt.Sprint(containerOf(t, pod.Object["spec"].(map[string]any), "show")["args"]); !strings.Contains(args, "--token-file=/etc/toposcope/tokens/scrape") {
		t.Errorf("tests.tokenKey: args %s lack its file", args)
	}
}
