package charts_test

import (
	"fmt"
	"net/netip"
	"strconv"
	"testing"

	"github.com/toposcope/toposcope/testenv/helmtest"
)

// peer is one end of a connection that a NetworkPolicy rule may admit: a
// pod (namespace and labels) or an address.
type peer struct {
	ns     string
	labels map[string]string
	ip     string
}

// admits evaluates rules (a NetworkPolicy's ingress or egress, dir "from"
// or "to") as the NetworkPolicy API defines them, for a connection with
// p on port/proto; named ports resolve through ports. It knows the parts
// the chart renders (matchLabels, ipBlock without except) and fails on
// others.
func admits(t *testing.T, rules any, dir, policyNS string, p peer, port int64, proto string, ports map[string]int64) bool {
	t.Helper()
	list, _ := rules.([]any)
	for _, r := range list {
		rule := r.(map[string]any)
		portOK := rule["ports"] == nil
		for _, rp := range asList(rule["ports"]) {
			m := rp.(map[string]any)
			pr, _ := m["protocol"].(string)
			if pr == "" {
				pr = "TCP"
			}
			var n int64
			switch v := m["port"].(type) {
			case string:
				n = ports[v]
			default:
				n, _ = strconv.ParseInt(fmt.Sprint(v), 10, 64)
			}
			if pr == proto && n == port {
				portOK = true
			}
		}
		if !portOK {
			continue
		}
		peers := asList(rule[dir])
		if rule[dir] == nil {
			return true
		}
		for _, pe := range peers {
			m := pe.(map[string]any)
			if ib, ok := m["ipBlock"].(map[string]any); ok {
				if _, ok := ib["except"]; ok {
					t.Fatal("admits: ipBlock.except is not evaluated")
				}
				pfx, err := netip.ParsePrefix(ib["cidr"].(string))
				if err != nil {
					t.Fatalf("ipBlock %v: %v", ib, err)
				}
				if p.ip != "" && pfx.Contains(netip.MustParseAddr(p.ip)) {
					return true
				}
				continue
			}
			if p.ip != "" {
				continue
			}
			nsOK := p.ns == policyNS
			if sel, ok := m["namespaceSelector"]; ok {
				nsOK = matches(t, sel, map[string]string{"kubernetes.io/metadata.name": p.ns})
			}
			podOK := true
			if sel, ok := m["podSelector"]; ok {
				podOK = matches(t, sel, p.labels)
			}
			if nsOK && podOK {
				return true
			}
		}
	}
	return false
}

func asList(v any) []any { l, _ := v.([]any); return l }

// matches evaluates a label selector of matchLabels only.
func matches(t *testing.T, sel any, labels map[string]string) bool {
	t.Helper()
	m, _ := sel.(map[string]any)
	if _, ok := m["matchExpressions"]; ok {
		t.Fatal("matches: matchExpressions are not evaluated")
	}
	want, _ := m["matchLabels"].(map[string]any)
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestNetworkPolicy evaluates the rendered policy's rules: ingress from
// the given peers, the metrics namespace, the test pod and the replicas;
// with egress, DNS, the API server, the provider's endpoints (derived
// from config.provider) and the replicas, and nothing else.
func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	serveLabels := map[string]string{"app.kubernetes.io/name": "toposcope", "app.kubernetes.io/instance": "toposcope", "app.kubernetes.io/component": "serve"}
	testLabels := map[string]string{"app.kubernetes.io/name": "toposcope", "app.kubernetes.io/instance": "toposcope", "app.kubernetes.io/component": "test"}
	ports := map[string]int64{"http": 49021}
	const ns = "toposcope"

	np := mustKind(t, renderObjects(t, h, "--set", "networkPolicy.enabled=true"), "NetworkPolicy", "")
	eq(t, "policyTypes without egress", at(np.Object, "spec", "policyTypes"), []any{"Ingress"})

	np = mustKind(t, renderObjects(t, h, "--set", "networkPolicy.enabled=true",
		"--set", "networkPolicy.from[0].podSelector.matchLabels.app=client",
		"--set", "networkPolicy.metricsNamespace=monitoring",
		"--set", "networkPolicy.egress.enabled=true",
		"--set", "config.provider.name=merge",
		"--set", "config.provider.params.sources[0].provider=aws",
		"--set", "config.provider.params.sources[1].provider=netq",
		"--set", "config.provider.params.sources[1].params.url=https://10.1.2.3:8443",
		"--set", "config.provider.params.sources[2].provider=ufm",
		"--set", "config.provider.params.sources[2].params.url=https://ufm.example:9443",
	), "NetworkPolicy", "")
	eq(t, "policyTypes", at(np.Object, "spec", "policyTypes"), []any{"Ingress", "Egress"})
	in, out := at(np.Object, "spec", "ingress"), at(np.Object, "spec", "egress")
	for _, c := range []struct {
		what  string
		rules any
		dir   string
		p     peer
		port  int64
		proto string
		want  bool
	}{
		{"the given client", in, "from", peer{ns: ns, labels: map[string]string{"app": "client"}}, 49021, "TCP", true},
		{"another pod of the namespace", in, "from", peer{ns: ns, labels: map[string]string{"app": "other"}}, 49021, "TCP", false},
		{"the client on another port", in, "from", peer{ns: ns, labels: map[string]string{"app": "client"}}, 22, "TCP", false},
		{"Prometheus in the metrics namespace", in, "from", peer{ns: "monitoring", labels: map[string]string{"app": "prometheus"}}, 49021, "TCP", true},
		{"a pod of another namespace", in, "from", peer{ns: "default", labels: map[string]string{"app": "client"}}, 49021, "TCP", false},
		{"the helm test pod", in, "from", peer{ns: ns, labels: testLabels}, 49021, "TCP", true},
		{"another replica", in, "from", peer{ns: ns, labels: serveLabels}, 49021, "TCP", true},

		{"DNS over UDP", out, "to", peer{ns: "kube-system", labels: map[string]string{"k8s-app": "kube-dns"}}, 53, "UDP", true},
		{"DNS over TCP", out, "to", peer{ns: "kube-system", labels: map[string]string{"k8s-app": "kube-dns"}}, 53, "TCP", true},
		{"port 53 of a pod outside kube-system", out, "to", peer{ns: "default", labels: map[string]string{"k8s-app": "kube-dns"}}, 53, "UDP", false},
		{"the API server on 443", out, "to", peer{ip: "172.16.0.10"}, 443, "TCP", true},
		{"the API server on 6443", out, "to", peer{ip: "172.16.0.10"}, 6443, "TCP", true},
		{"ssh anywhere", out, "to", peer{ip: "172.16.0.10"}, 22, "TCP", false},
		{"the EC2 API (aws, default endpoint)", out, "to", peer{ip: "52.94.1.1"}, 443, "TCP", true},
		{"plain http anywhere", out, "to", peer{ip: "52.94.1.1"}, 80, "TCP", false},
		{"NetQ at its address", out, "to", peer{ip: "10.1.2.3"}, 8443, "TCP", true},
		{"NetQ's port elsewhere", out, "to", peer{ip: "10.1.2.4"}, 8443, "TCP", false},
		{"UFM by name", out, "to", peer{ip: "192.0.2.7"}, 9443, "TCP", true},
		{"UFM by name over IPv6", out, "to", peer{ip: "2001:db8::7"}, 9443, "TCP", true},
		{"the leader", out, "to", peer{ns: ns, labels: serveLabels}, 49021, "TCP", true},
		{"another pod's API port", out, "to", peer{ns: ns, labels: testLabels}, 49021, "TCP", false},
	} {
		if got := admits(t, c.rules, c.dir, ns, c.p, c.port, c.proto, ports); got != c.want {
			t.Errorf("%s (%s %d): admitted %v, want %v", c.what, c.proto, c.port, got, c.want)
		}
	}

	// Given API server CIDRs and a provider with no endpoint: only those.
	np = mustKind(t, renderObjects(t, h, "--set", "networkPolicy.enabled=true", "--set", "networkPolicy.egress.enabled=true",
		"--set", "networkPolicy.egress.apiServerCIDRs[0]=10.0.0.0/28", "--set", "networkPolicy.egress.apiServerPorts[0]=6443"), "NetworkPolicy", "")
	out = at(np.Object, "spec", "egress")
	for _, c := range []struct {
		ip   string
		port int64
		want bool
	}{{"10.0.0.5", 6443, true}, {"10.0.0.5", 443, false}, {"10.0.1.5", 6443, false}, {"52.94.1.1", 443, false}} {
		if got := admits(t, out, "to", ns, peer{ip: c.ip}, c.port, "TCP", ports); got != c.want {
			t.Errorf("sim provider, API server 10.0.0.0/28:6443: %s:%d admitted %v, want %v", c.ip, c.port, got, c.want)
		}
	}
}
