package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service/extender"
)

// extPod is a GPU pod as kube-scheduler sends it; gang "" for a lone pod.
func extPod(name, gang string, size, gpus int, annotations map[string]string) *extender.Pod {
	p := &extender.Pod{Pod: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: types.UID("uid-" + name), Labels: map[string]string{},
			Annotations: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)}}}}},
	}}
	if gang != "" {
		p.Labels["toposcope.io/gang"] = gang
		p.Annotations["toposcope.io/gang-size"] = strconv.Itoa(size)
	}
	for k, v := range annotations {
		p.Annotations[k] = v
	}
	return p
}

// allNodes is every node of the stack's graph, as the scheduler passes
// them.
func allNodes(s *stack) []string {
	var out []string
	for _, n := range s.loop.State().Graph.Nodes() {
		out = append(out, n.Name)
	}
	return out
}

// TestExtenderGang: the first pod of a 4-pod gang places the whole gang
// in one leaf; every later pod of it keeps the same four nodes, scored
// 10; a second gang gets other nodes (the first is held though none of
// its pods is bound); a gang that fits nowhere keeps no node and says why.
func TestExtenderGang(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{extender: true})
	s.discover()
	g := s.loop.State().Graph
	names := allNodes(s)
	filter := func(p *extender.Pod, nodes []string) extender.FilterResult {
		t.Helper()
		w := s.do("POST", "/v1/extender/filter", mustJSON(t, extender.Args{Pod: p, NodeNames: &nodes}))
		if w.Code != http.StatusOK {
			t.Fatalf("filter: %d %s", w.Code, w.Body)
		}
		var res extender.FilterResult
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	var first []string
	for i := range 4 {
		res := filter(extPod(fmt.Sprintf("a-%d", i), "a", 4, 8, nil), names)
		if res.NodeNames == nil || len(*res.NodeNames) != 4 {
			t.Fatalf("pod %d of gang a kept %v, want 4 nodes", i, res.NodeNames)
		}
		got := slices.Sorted(slices.Values(*res.NodeNames))
		if i == 0 {
			first = got
			leaves := map[string]bool{}
			for _, n := range got {
				node, _ := g.Node(n)
				leaves[node.Leaf] = true
			}
			if len(leaves) != 1 {
				t.Errorf("gang a spans leaves %v, want one", leaves)
			}
			out := res.FailedAndUnresolvableNodes
			if len(out) != len(names)-4 || !strings.Contains(out[names[len(names)-1]]+out[names[0]], "toposcope holds this pod's gang on other nodes") {
				t.Errorf("unresolvable nodes: %d, want %d with the reason", len(out), len(names)-4)
			}
		} else if !slices.Equal(got, first) {
			t.Errorf("pod %d of gang a kept %v, want the held %v", i, got, first)
		}
	}
	w := s.do("POST", "/v1/extender/prioritize", mustJSON(t, extender.Args{Pod: extPod("a-1", "a", 4, 8, nil), NodeNames: &names}))
	var prio []extender.HostPriority
	if err := json.Unmarshal(w.Body.Bytes(), &prio); err != nil || w.Code != 200 {
		t.Fatalf("prioritize: %d %s", w.Code, w.Body)
	}
	for _, hp := range prio {
		if want := map[bool]int64{true: 10, false: 0}[slices.Contains(first, hp.Host)]; hp.Score != want {
			t.Errorf("prioritize %s: %d, want %d", hp.Host, hp.Score, want)
		}
	}
	b := filter(extPod("b-0", "b", 4, 8, nil), names)
	for _, n := range *b.NodeNames {
		if slices.Contains(first, n) {
			t.Errorf("gang b was given %s, held for gang a", n)
		}
	}
	// Only the nodes the scheduler passes may be taken.
	few := first[:2]
	c := filter(extPod("c-0", "c", 4, 8, nil), few)
	if len(*c.NodeNames) != 0 || !strings.Contains(c.FailedNodes[few[0]], "no candidate") {
		t.Errorf("gang c of 4 on 2 nodes: kept %v, failed %v", *c.NodeNames, c.FailedNodes)
	}
	t.Logf("gang a held %v; gang b %v; gang c: %s", first, *b.NodeNames, c.FailedNodes[few[0]])
}

// TestExtenderLonePod: a lone pod keeps every node; the node that it
// fills exactly scores 10, a free node less, a node without room 0.
func TestExtenderLonePod(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{extender: true})
	s.discover()
	start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	body := `{"records":[{"account":"x","workload":"w6","gpus":6,"nodes":["gpu001"],"start":"` + start + `"},` +
		`{"account":"x","workload":"w8","gpus":8,"nodes":["gpu003"],"start":"` + start + `"}]}`
	if w := s.do("POST", "/v1/ledger", body); w.Code != 200 {
		t.Fatalf("ledger: %d %s", w.Code, w.Body)
	}
	nodes := []string{"gpu001", "gpu002", "gpu003"}
	w := s.do("POST", "/v1/extender/filter", mustJSON(t, extender.Args{Pod: extPod("lone", "", 1, 2, nil), NodeNames: &nodes}))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"NodeNames":["gpu001","gpu002","gpu003"]`) {
		t.Errorf("filter of a lone pod: %d %s", w.Code, w.Body)
	}
	w = s.do("POST", "/v1/extender/prioritize", mustJSON(t, extender.Args{Pod: extPod("lone", "", 1, 2, nil), NodeNames: &nodes}))
	var prio []extender.HostPriority
	if err := json.Unmarshal(w.Body.Bytes(), &prio); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	score := map[string]int64{}
	for _, hp := range prio {
		score[hp.Host] = hp.Score
	}
	if score["gpu001"] != 10 || score["gpu002"] <= 0 || score["gpu002"] >= 10 || score["gpu003"] != 0 {
		t.Errorf("scores %v: want gpu001 (exact fill) 10, gpu002 (free) between, gpu003 (full) 0", score)
	}
}

// TestExtenderPreempt: of two proposed nodes, the one whose victim is
// inside its minimum runtime is refused with the reason; the other,
// unallocated work, is kept with its victims.
func TestExtenderPreempt(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{extender: true})
	s.discover()
	start := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	body := `{"records":[{"account":"over","workload":"ns/prot@u1","gpus":8,"nodes":["gpu001"],"start":"` + start + `","minRuntime":"2h","allocated":true},` +
		`{"account":"over","workload":"ns/free@u2","gpus":8,"nodes":["gpu002"],"start":"` + start + `"}]}`
	if w := s.do("POST", "/v1/ledger", body); w.Code != 200 {
		t.Fatalf("ledger: %d %s", w.Code, w.Body)
	}
	args := extender.PreemptionArgs{Pod: extPod("hi", "", 1, 8, map[string]string{"toposcope.io/min-runtime": "1h"}),
		NodeNameToMetaVictims: map[string]*extender.MetaVictims{
			"gpu001": {Pods: []*extender.MetaPod{{UID: "u1"}}},
			"gpu002": {Pods: []*extender.MetaPod{{UID: "u2"}}, NumPDBViolations: 0},
		}}
	w := s.do("POST", "/v1/extender/preempt", mustJSON(t, args))
	var res extender.PreemptionResult
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != 200 {
		t.Fatalf("preempt: %d %s", w.Code, w.Body)
	}
	if _, ok := res.NodeNameToMetaVictims["gpu002"]; !ok || len(res.NodeNameToMetaVictims) != 1 {
		t.Errorf("kept %v, want gpu002 alone", res.NodeNameToMetaVictims)
	}
	if len(res.Refused) != 1 || res.Refused[0].Node != "gpu001" || !strings.Contains(res.Refused[0].Reason, "protected until") {
		t.Errorf("refused %+v, want gpu001 as protected", res.Refused)
	}
	t.Logf("preempt answer: %s", w.Body)
}

// TestExtenderBadCalls: malformed or foreign bodies are 400s naming the
// field, never a panic; a pod whose gang size is unreadable fails the
// filter with the annotation named; with the extender off the routes
// are 404.
func TestExtenderBadCalls(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{extender: true})
	s.discover()
	groupPod := extPod("p", "", 0, 8, nil)
	pgName := "train"
	groupPod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &pgName}
	noSize := mustJSON(t, extender.Args{Pod: groupPod, NodeNames: &[]string{"gpu001"}})
	badSize := mustJSON(t, extender.Args{Pod: extPod("p", "g", 0, 8, map[string]string{"toposcope.io/gang-size": "many"}), NodeNames: &[]string{"gpu001"}})
	for _, tc := range []struct {
		name, route, body string
		code              int
		want              string
	}{
		{"not-json", "filter", `{"Pod":`, 400, "body"},
		{"unknown-key", "filter", `{"Pod":null,"NodeNames":[],"Extra":1}`, 400, "Extra"},
		{"lowercase-key", "prioritize", `{"pod":null,"nodeNames":[]}`, 400, "pod"},
		{"wrong-type", "filter", `{"NodeNames":"gpu001"}`, 400, "NodeNames"},
		{"pod-wrong-type", "filter", `{"Pod":{"metadata":5},"NodeNames":[]}`, 400, "Pod.metadata"},
		{"node-objects", "filter", `{"Pod":null,"Nodes":{"items":[]}}`, 400, "nodeCacheCapable"},
		{"trailing", "preempt", `{} {}`, 400, "trailing"},
		{"no-pod", "preempt", `{"NodeNameToMetaVictims":{}}`, 400, "names no pod"},
		{"bad-gang-size", "filter", badSize, 200, `toposcope.io/gang-size is \"many\"`},
		// Without a kubernetes ledger source, a PodGroup's size cannot be read.
		{"podgroup-without-size", "filter", noSize, 200, `in gang \"train\" but has no annotation toposcope.io/gang-size`},
	} {
		w := s.do("POST", "/v1/extender/"+tc.route, tc.body)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, w.Code, w.Body, tc.code, tc.want)
		}
	}
	off := newStack(t, stackOpts{})
	if w := off.do("POST", "/v1/extender/filter", `{"Pod":null,"NodeNames":[]}`); w.Code != 404 || !strings.Contains(w.Body.String(), "placement.extender.enabled") {
		t.Errorf("extender off: %d %s", w.Code, w.Body)
	}
}

// TestExtenderAuth: with tokens, a call needs a read or write token, or
// a verified client certificate named in placement.extender.clients
// (without a token); an unverified or unnamed certificate, a node
// agent's own token and a wrong token are refused.
func TestExtenderAuth(t *testing.T) {
	t.Parallel()
	secret := "an-agent-secret-of-at-least-32-characters"
	s := newStack(t, stackOpts{extender: true, extenderClients: []string{"kube-scheduler"},
		tokens: "read:r3ad-t0ken-for-tests\nwrite:wr1te-t0ken-for-tests", agentSecret: secret})
	s.discover()
	call := func(route string, state *tls.ConnectionState, header ...string) int {
		req := httptest.NewRequest("POST", "/v1/extender/"+route, strings.NewReader(extenderBodies[route]))
		req.Host = "127.0.0.1:49021"
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		req.TLS = state
		w := httptest.NewRecorder()
		s.handler.ServeHTTP(w, req)
		return w.Code
	}
	verified := func(cn string, dns ...string) *tls.ConnectionState {
		return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: cn}, DNSNames: dns}}}}
	}
	for _, tc := range []struct {
		name  string
		state *tls.ConnectionState
		hdr   []string
		want  int
	}{
		{"no-credentials", nil, nil, 401},
		{"token", nil, []string{"Authorization", "Bearer r3ad-t0ken-for-tests"}, 200},
		{"write-token", nil, []string{"Authorization", "Bearer wr1te-t0ken-for-tests"}, 200},
		// A node agent's token is good for PUT /v1/agents/<its node> only.
		{"agent-token", nil, []string{"Authorization", "Bearer " + server.AgentToken([]byte(secret), "gpu001")}, 401},
		{"wrong-token", nil, []string{"Authorization", "Bearer not-a-token"}, 401},
		// A named client certificate does not rescue a wrong token.
		{"client-cert-with-wrong-token", verified("kube-scheduler"), []string{"Authorization", "Bearer not-a-token"}, 401},
		{"client-cert-cn", verified("kube-scheduler"), nil, 200},
		{"client-cert-dns", verified("other", "kube-scheduler"), nil, 200},
		{"client-cert-unnamed", verified("someone-else"), nil, 401},
		{"client-cert-unverified", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{Subject: pkix.Name{CommonName: "kube-scheduler"}}}}, nil, 401},
	} {
		for _, route := range extenderRoutes {
			if got := call(route, tc.state, tc.hdr...); got != tc.want {
				t.Errorf("%s %s: %d, want %d", route, tc.name, got, tc.want)
			}
		}
	}
}

// extenderRoutes are the extender's verbs; extenderBodies a small valid
// call of each.
var (
	extenderRoutes = []string{"filter", "prioritize", "preempt"}
	extenderBodies = map[string]string{
		"filter":     `{"Pod":null,"NodeNames":["gpu001"]}`,
		"prioritize": `{"Pod":{"metadata":{"name":"p","uid":"u"}},"NodeNames":["gpu001"]}`,
		"preempt":    `{"Pod":{"metadata":{"name":"p","uid":"u"}},"NodeNameToMetaVictims":{"gpu001":{"Pods":[]}}}`,
	}
)
