package ufm

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// emulator is a UFM REST server written from the documented responses:
// GET /ufmRest/resources/{systems,links} with basic auth and
// /ufmRestV3/resources/… with "Authorization: Basic <token>". It rejects
// unknown query parameters and other methods, and can be told to fail the
// first requests.
type emulator struct {
	systems []System
	links   []Link
	user    string
	pass    string
	token   string
	// failures are served, in order, before any real answer.
	failures []failure
	// echoAuth makes a 401 answer quote the Authorization header, as a
	// careless proxy would, to check that errors scrub it.
	echoAuth bool

	mu    sync.Mutex
	calls []string
}

type failure struct {
	status     int
	retryAfter string
}

func (e *emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.calls = append(e.calls, r.Method+" "+r.URL.Path)
	var fail *failure
	if len(e.failures) > 0 {
		fail = &e.failures[0]
		e.failures = e.failures[1:]
	}
	e.mu.Unlock()
	if fail != nil {
		if fail.retryAfter != "" {
			w.Header().Set("Retry-After", fail.retryAfter)
		}
		http.Error(w, `{"error":"busy"}`, fail.status)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, `{"error":"method"}`, http.StatusMethodNotAllowed)
		return
	}
	if len(r.URL.Query()) > 0 {
		http.Error(w, fmt.Sprintf(`{"error":"unknown query parameters %q"}`, r.URL.RawQuery), http.StatusBadRequest)
		return
	}
	var resource string
	auth := r.Header.Get("Authorization")
	switch r.URL.Path {
	case "/ufmRest/resources/systems", "/ufmRest/resources/links":
		resource = filepath.Base(r.URL.Path)
		if auth != "Basic "+base64.StdEncoding.EncodeToString([]byte(e.user+":"+e.pass)) {
			e.unauthorized(w, auth)
			return
		}
	case "/ufmRestV3/resources/systems", "/ufmRestV3/resources/links":
		resource = filepath.Base(r.URL.Path)
		if e.token == "" || auth != "Basic "+e.token {
			e.unauthorized(w, auth)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	var body any = e.systems
	if resource == "links" {
		body = e.links
	}
	_ = json.NewEncoder(w).Encode(body)
}

func (e *emulator) unauthorized(w http.ResponseWriter, auth string) {
	msg := `{"error":"Unauthorized"}`
	if e.echoAuth {
		msg = `{"error":"Unauthorized","received":` + strconv.Quote(auth) + `}`
	}
	http.Error(w, msg, http.StatusUnauthorized)
}

func (e *emulator) callCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.calls)
}

// start serves e over TLS and returns its URL and a CA file that trusts it.
func (e *emulator) start(t *testing.T) (string, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(e)
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL, ca
}

// fatTree returns the systems and links of a fabric: two redundant spines,
// two leaves with two hosts each, a storage leaf with a storage server, and
// a gateway, in UFM's shapes.
func fatTree() ([]System, []Link) {
	sw := func(name, guid string) System { return System{Name: name, GUID: guid, Type: "switch", IP: "10.0.0.1"} }
	host := func(name, guid string) System { return System{Name: name, GUID: guid, Type: "host"} }
	systems := []System{
		sw("spine-01", "0x2c5eab0300000101"), sw("spine-02", "2c5eab0300000102"),
		sw("leaf-01", "2C5EAB0300000201"), sw("leaf-02", "2c5eab0300000202"), sw("stor-leaf", "2c5eab0300000203"),
		host("gpu001", "e09d730300000001"), host("gpu002", "e09d730300000002"),
		host("gpu003", "e09d730300000003"), host("gpu004", "e09d730300000004"),
		host("stor01", "e09d730300000101"),
		{Name: "gw-01", GUID: "0002c90300000999", Type: "gateway"},
	}
	link := func(a, ap, b, bp, speed string) Link {
		return Link{SourceGUID: a, SourcePort: ap, DestinationGUID: b, DestinationPort: bp, Width: "4x", Speed: speed}
	}
	links := []Link{
		link("2c5eab0300000201", "33", "2c5eab0300000101", "1", "NDR"),
		link("2c5eab0300000201", "34", "2c5eab0300000102", "1", "NDR"),
		link("2c5eab0300000202", "33", "2c5eab0300000101", "2", "HDR"),
		link("2c5eab0300000102", "2", "2c5eab0300000202", "34", "HDR"),
		link("2c5eab0300000203", "33", "2c5eab0300000101", "3", "NDR"),
		link("e09d730300000001", "1", "2c5eab0300000201", "1", "NDR"),
		link("e09d730300000002", "1", "2c5eab0300000201", "2", "NDR"),
		link("2c5eab0300000202", "1", "e09d730300000003", "1", "NDR"),
		link("e09d730300000004", "1", "2c5eab0300000202", "2", "NDR"),
		link("e09d730300000101", "1", "2c5eab0300000203", "1", "NDR"),
		link("0002c90300000999", "1", "2c5eab0300000101", "9", "NDR"),
	}
	return systems, links
}
