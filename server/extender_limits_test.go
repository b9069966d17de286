package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toposcope/toposcope/service/extender"
)

// TestExtenderHost: without tokens, an extender call (a POST) is let
// through only for a Host of ours: loopback, the listen address or
// server.auth.allowedHosts (the chart adds the Service's DNS name); a
// rebound name is refused. With tokens the token decides, whatever the
// Host.
func TestExtenderHost(t *testing.T) {
	t.Parallel()
	open := newStack(t, stackOpts{extender: true, allowedHosts: []string{"toposcope.toposcope.svc"}})
	open.discover()
	withTokens := newStack(t, stackOpts{extender: true, tokens: "read:r3ad-t0ken-for-tests"})
	withTokens.discover()
	for _, tc := range []struct {
		name  string
		s     *stack
		host  string
		token string
		want  int
	}{
		{"loopback", open, "127.0.0.1:49021", "", 200},
		{"allowed-service-name", open, "toposcope.toposcope.svc:49021", "", 200},
		{"rebound-name", open, "rebind.attacker.example:49021", "", 403},
		{"tokens-any-host", withTokens, "rebind.attacker.example:49021", "r3ad-t0ken-for-tests", 200},
		{"tokens-no-token", withTokens, "127.0.0.1:49021", "", 401},
	} {
		hdr := []string{"Host", tc.host}
		if tc.token != "" {
			hdr = append(hdr, "Authorization", "Bearer "+tc.token)
		}
		for _, route := range extenderRoutes {
			if w := tc.s.do("POST", "/v1/extender/"+route, extenderBodies[route], hdr...); w.Code != tc.want {
				t.Errorf("%s %s: %d %s, want %d", route, tc.name, w.Code, w.Body, tc.want)
			}
		}
	}
}

// TestExtenderSizes: a body over server.maxBodyBytes is 413 before it is
// decoded; a call naming a node twice, or more nodes than twice the
// topology's and 1,024, is 400 naming NodeNames; the answer repeats each
// name once with a reason of bounded length, so its size is set by the
// topology, not the caller.
func TestExtenderSizes(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{extender: true}) // 100 nodes, 64 KiB bodies
	s.discover()
	names := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q", f(i))
		}
		return b.String()
	}
	huge := `{"Pod":null,"NodeNames":[` + names(9000, func(i int) string { return fmt.Sprintf("node-%06d", i) }) + `]}`
	tooMany := `{"Pod":null,"NodeNames":[` + names(1225, func(i int) string { return fmt.Sprintf("n%d", i) }) + `]}`
	twice := `{"Pod":null,"NodeNames":["gpu001","gpu002","gpu001"]}`
	for _, tc := range []struct {
		name, route, body string
		code              int
		field             string
	}{
		{"body-over-limit", "filter", huge, 413, ""},
		{"body-over-limit", "prioritize", huge, 413, ""},
		{"body-over-limit", "preempt", huge, 413, ""},
		{"named-twice", "filter", twice, 400, "NodeNames"},
		{"more-than-the-topology-allows", "prioritize", tooMany, 400, "NodeNames"},
	} {
		w := s.do("POST", "/v1/extender/"+tc.route, tc.body)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), `"field":"`+tc.field+`"`) {
			t.Errorf("%s: %d %s, want %d naming %s", tc.name, w.Code, w.Body, tc.code, tc.field)
		}
	}
	// A gang held on 4 nodes, called with the topology's 100 nodes and
	// 1,124 unknown ones (1,224 in all, the most allowed): each other node
	// is answered once, with one short reason.
	all := allNodes(s)
	for i := range 1124 {
		all = append(all, fmt.Sprintf("new-%04d", i))
	}
	p := extPod("a-0", strings.Repeat("g", 63), 4, 8, nil)
	p.Namespace = strings.Repeat("n", 63)
	w := s.do("POST", "/v1/extender/filter", mustJSON(t, extender.Args{Pod: p, NodeNames: &all}))
	var res extender.FilterResult
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != 200 {
		t.Fatalf("filter: %d %v", w.Code, err)
	}
	if len(*res.NodeNames)+len(res.FailedAndUnresolvableNodes) != len(all) {
		t.Errorf("answered %d kept and %d out, want %d in all", len(*res.NodeNames), len(res.FailedAndUnresolvableNodes), len(all))
	}
	for n, reason := range res.FailedAndUnresolvableNodes {
		if len(reason) > 64 {
			t.Fatalf("reason for %s is %d bytes: %q", n, len(reason), reason)
		}
	}
	t.Logf("answer of %d bytes for %d names (%d bytes asked)", w.Body.Len(), len(all), len(mustJSON(t, all)))
}

// TestExtenderHostileCalls: 8 callers send 25 hostile calls each at once
// (broken JSON, nested junk, control characters and NULs in names, huge
// gang sizes, hundreds of gangs, victims of unknown UIDs). Every answer is
// a 200 or a 4xx, never a 5xx; afterwards the service is ready, the store
// holds no new snapshot, run or ledger record, a discovery still works,
// the gangs held are at most placement.extender.maxHeld, and a real gang
// is still placed.
func TestExtenderHostileCalls(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{extender: true, extenderHeld: 3, extenderMax: 8})
	s.discover()
	before := s.do("GET", "/v1/snapshots", "").Body.String()
	nodes := allNodes(s)
	hostile := func(i int) (string, string) {
		switch i % 8 {
		case 0:
			return "filter", `{"Pod":{"metadata":{"name":"x"}},"NodeNames":[` // truncated
		case 1:
			return "filter", `{"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"8"}}}]},"metadata":{"labels":{"toposcope.io/gang":"g","toposcope.io/account":"a"},"annotations":{"toposcope.io/gang-size":"1000000"}}},"NodeNames":["gpu001"]}`
		case 2:
			return "prioritize", `{"Pod":null,"NodeNames":["gpu\u0000001","\u001b[31m","` + strings.Repeat("x", 5000) + `"]}`
		case 3:
			return "preempt", `{"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":{"gpu001":{"Pods":[{"UID":"no-such-uid"},null]},"ghost":null}}`
		case 4:
			return "filter", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`
		case 5:
			return "filter", `{"Pod":null,"NodeNames":null,"NodeNames":["gpu001"]}`
		}
		// Many distinct gangs, each placed and held: more than maxHeld.
		p := extPod(fmt.Sprintf("h%d-0", i), fmt.Sprintf("h%d", i), 1, 8, nil)
		return "filter", mustJSON(t, extender.Args{Pod: p, NodeNames: &nodes})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for c := range 8 {
		wg.Go(func() {
			for k := range 25 {
				route, body := hostile(c*25 + k)
				w := s.do("POST", "/v1/extender/"+route, body)
				mu.Lock()
				codes[w.Code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("answers by status: %v", codes)
	for code := range codes {
		if code >= 500 {
			t.Errorf("%d answers were %d", codes[code], code)
		}
	}
	if w := s.do("GET", "/readyz", ""); w.Code != 200 {
		t.Errorf("readyz after the calls: %d %s", w.Code, w.Body)
	}
	if after := s.do("GET", "/v1/snapshots", "").Body.String(); after != before {
		t.Errorf("the snapshots changed:\n%s\n%s", before, after)
	}
	var l struct {
		Records []json.RawMessage `json:"records"`
	}
	if w := s.do("GET", "/v1/ledger", ""); json.Unmarshal(w.Body.Bytes(), &l) != nil || len(l.Records) != 0 {
		t.Errorf("the ledger changed: %s", w.Body)
	}
	s.discover()
	if !strings.Contains(s.logs.String(), "too many gangs held") {
		t.Error("more gangs than maxHeld were placed and none was dropped")
	}
	// At most 3 one-node gangs are held: a real 4-node gang still finds
	// room.
	w := s.do("POST", "/v1/extender/filter", mustJSON(t, extender.Args{Pod: extPod("real-0", "real", 4, 8, nil), NodeNames: &nodes}))
	var res extender.FilterResult
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.NodeNames == nil || len(*res.NodeNames) != 4 {
		t.Errorf("a real gang after the calls: %d %s", w.Code, w.Body)
	}
}
