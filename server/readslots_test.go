package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestOlderSnapshotReadsAreBounded: with server.maxSnapshotReads: 1, a
// client that stalls while reading an older snapshot's graph holds the
// one slot; other reads of older snapshots (the graph, a computed diff)
// get 429 busy with Retry-After, reads of the current topology go on,
// and the slot is free again once the stalled client goes away.
func TestOlderSnapshotReadsAreBounded(t *testing.T) {
	t.Parallel()
	// 80,000 nodes: the pretty document (about 12 MB) cannot fit in the
	// loopback socket buffers (4 MiB at most here), so the stalled read
	// stays in progress.
	s := newStack(t, stackOpts{model: writeModel(t, "", 80000), guard: 1, snapshotReads: 1, quiet: true})
	s.discover()
	writeModel(t, s.modelPath, 79000)
	s.discover() // snapshot 1 is now an older one
	srv := httptest.NewServer(s.handler)
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "GET /v1/graph?snapshot=1&pretty=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("stalled read: %q %v", status, err)
	}
	// The handler holds the slot: it sent its status after taking it and
	// cannot finish the body while this client reads nothing more.
	get := func(target string) *http.Response {
		t.Helper()
		resp, err := http.Get(srv.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}
	for _, target := range []string{"/v1/graph?snapshot=1", "/v1/graph?snapshot=1&format=dot&detail=nodes", "/v1/diff?from=2&to=1"} {
		if resp := get(target); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s while the slot is held = %d (Retry-After %q), want 429 with Retry-After", target, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if resp := get("/v1/graph"); resp.StatusCode != http.StatusOK {
		t.Errorf("current graph = %d, want 200: the current topology is not bounded", resp.StatusCode)
	}
	_ = conn.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp := get("/v1/diff?from=2&to=1")
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("diff after the stalled client left = %d, want 200", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
