package kubetest

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Access is one request as RBAC sees it.
type Access struct {
	// Verb is the RBAC verb: get, list, watch, create, update, patch,
	// delete, deletecollection.
	Verb string
	// Group is the API group ("" for core), Resource the plural resource
	// and Subresource, if any ("token", "status").
	Group, Resource, Subresource string
	// Namespace and Name, when the request has them.
	Namespace, Name string
	// Continue marks a later page of a paged list (the request carries a
	// continue token).
	Continue bool
}

// Stats are what a Counter saw.
type Stats struct {
	// Requests and Writes (every verb but get, list and watch).
	Requests, Writes int
	// ByVerb counts requests per RBAC verb.
	ByVerb map[string]int
	// Lists counts list operations: the first page of each paged list.
	Lists int
	// BytesSent counts request bodies; BytesReceived response bodies.
	BytesSent, BytesReceived int64
}

// Counter is an http.RoundTripper wrapper that counts requests and bytes
// and records every access, so that a test can assert "zero writes" or
// compare what an engine did with the RBAC rules it ships. Safe for
// concurrent use.
type Counter struct {
	mu       sync.Mutex
	stats    Stats
	accesses []Access
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter { return &Counter{stats: Stats{ByVerb: map[string]int{}}} }

// Instrument returns a copy of cfg whose transport goes through c.
func (c *Counter) Instrument(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper { return roundTripper{c: c, next: rt} })
	return out
}

// Stats returns a snapshot of the counts.
func (c *Counter) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.ByVerb = make(map[string]int, len(c.stats.ByVerb))
	for k, v := range c.stats.ByVerb {
		s.ByVerb[k] = v
	}
	return s
}

// Accesses returns every access so far, in order.
func (c *Counter) Accesses() []Access {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.accesses)
}

// Reset forgets everything counted so far.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats = Stats{ByVerb: map[string]int{}}
	c.accesses = nil
}

func (c *Counter) record(a Access, sent int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Requests++
	c.stats.ByVerb[a.Verb]++
	if a.Verb == "list" && !a.Continue {
		c.stats.Lists++
	}
	switch a.Verb {
	case "get", "list", "watch":
	default:
		c.stats.Writes++
	}
	c.stats.BytesSent += sent
	c.accesses = append(c.accesses, a)
}

func (c *Counter) received(n int64) {
	c.mu.Lock()
	c.stats.BytesReceived += n
	c.mu.Unlock()
}

type roundTripper struct {
	c    *Counter
	next http.RoundTripper
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := req.ContentLength
	if sent < 0 {
		sent = 0
	}
	rt.c.record(ParseRequest(req), sent)
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, c: rt.c}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	c *Counter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.received(int64(n))
	return n, err
}

// ParseRequest maps an apiserver request to its RBAC access, as the
// apiserver's request-info resolver does for resource requests
// (/api/v1/..., /apis/<group>/<version>/...). Other paths give Verb
// "get" (or the lower-case method) and Resource "".
func ParseRequest(req *http.Request) Access {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var a Access
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		a.Group = parts[1]
		parts = parts[3:]
	default:
		a.Verb = strings.ToLower(req.Method)
		return a
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		a.Namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) > 0 {
		a.Resource = parts[0]
	}
	if len(parts) > 1 {
		a.Name = parts[1]
	}
	if len(parts) > 2 {
		a.Subresource = parts[2]
	}
	q := req.URL.Query()
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			a.Verb = "watch"
		case a.Name == "":
			a.Verb = "list"
			a.Continue = q.Get("continue") != ""
		default:
			a.Verb = "get"
		}
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		if a.Name == "" {
			a.Verb = "deletecollection"
		} else {
			a.Verb = "delete"
		}
	default:
		a.Verb = strings.ToLower(req.Method)
	}
	return a
}
