package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service/extender"
)

// slowCaller opens a connection to addr and sends the headers of a POST
// to target claiming length bytes, then first; its trickle sends one more
// byte every interval, at most n times, until the connection breaks.
type slowCaller struct {
	conn net.Conn
}

func newSlowCaller(t *testing.T, addr, target string, length int, first string) *slowCaller {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	head := "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(length) + "\r\n\r\n" + first
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	return &slowCaller{conn: conn}
}

func (s *slowCaller) trickle(interval time.Duration, n int) {
	for range n {
		time.Sleep(interval)
		if _, err := s.conn.Write([]byte(" ")); err != nil {
			return
		}
	}
}

// status reads the status code the service answered on the connection.
func (s *slowCaller) status(t *testing.T) int {
	t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(s.conn), nil)
	if err != nil {
		t.Fatalf("reading the slow caller's answer: %v", err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestSlowBodiesHoldNoExtenderSlot: four callers each claim a
// 100,000-byte body and send a byte every 100 ms. They hold none of the
// extender's four slots, so kube-scheduler's real calls are answered
// meanwhile (before, each slow caller held a slot until the read timeout
// and every real call got 429); server.bodyReadTimeout cuts each slow
// caller off with 408.
func TestSlowBodiesHoldNoExtenderSlot(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{extender: true, extenderMax: 4, maxBody: 1 << 20, bodyTimeout: 3 * time.Second})
	s.discover()
	srv := httptest.NewServer(s.handler)
	defer srv.Close()
	var slow []*slowCaller
	var wg sync.WaitGroup
	for range 4 {
		c := newSlowCaller(t, srv.Listener.Addr().String(), "/v1/extender/filter", 100000, `{"Pod":null,"NodeNames":[`)
		slow = append(slow, c)
		wg.Go(func() { c.trickle(100*time.Millisecond, 100) })
	}
	time.Sleep(300 * time.Millisecond) // the slow callers are in their bodies
	nodes := allNodes(s)
	for i := range 8 {
		body := mustJSON(t, extender.Args{Pod: extPod("real-"+strconv.Itoa(i), "real"+strconv.Itoa(i), 1, 8, nil), NodeNames: &nodes})
		resp, err := http.Post(srv.URL+"/v1/extender/filter", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("real call %d while four callers send slowly = %d, want 200", i, resp.StatusCode)
		}
	}
	for i, c := range slow {
		if code := c.status(t); code != http.StatusRequestTimeout {
			t.Errorf("slow caller %d = %d, want 408 after server.bodyReadTimeout", i, code)
		}
		_ = c.conn.Close()
	}
	wg.Wait()
}

// heldBody starts a POST of a body of length bytes to target on the
// router, sends first and one byte more, and returns once the handler has
// read them: a pipe write returns when the handler's Read has taken it,
// and the handler reads again only after it has charged what it read, so
// when the second write returns, first is charged. finish ends the body
// with an error and waits for the answer.
func heldBody(t *testing.T, s *stack, target string, length int, first string) (finish func() int) {
	t.Helper()
	pr, pw := io.Pipe()
	req := httptest.NewRequest(http.MethodPost, target, pr)
	req.ContentLength = int64(length)
	req.Host = "127.0.0.1:49021"
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); s.handler.ServeHTTP(w, req) }()
	for _, part := range []string{first, " "} {
		if _, err := io.WriteString(pw, part); err != nil {
			<-done
			t.Fatalf("the handler stopped reading: %v (answer %d %s)", err, w.Code, w.Body)
		}
	}
	return func() int {
		_ = pw.CloseWithError(io.ErrUnexpectedEOF)
		<-done
		return w.Code
	}
}

// TestBodyMemoryBounded: with server.maxBodyMemory at 8 × 64 KiB, a caller
// that has sent 60 KiB of a body holds 480 KiB of it; a second body that
// does not fit in the rest is refused at once with 429 and Retry-After,
// and fits again when the first caller has gone. A slow caller that has
// sent little holds little: a real call fits beside it.
func TestBodyMemoryBounded(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{maxBody: 64 << 10, bodyMemory: config.BodyMemoryFactor * 64 << 10})
	s.discover()
	// A placement request padded with white space to 20 KiB.
	padded := `{"account":"a","gpus":8` + strings.Repeat(" ", 20<<10) + `}`
	finish := heldBody(t, s, "/v1/placements", 60<<10, `{"account":"a",`)
	if w := s.do(http.MethodPost, "/v1/placements", padded); w.Code == http.StatusTooManyRequests {
		t.Fatalf("a 20 KiB body beside a caller that sent 15 bytes = 429, want it served")
	}
	if code := finish(); code != http.StatusBadRequest {
		t.Errorf("the cut body = %d, want 400", code)
	}

	finish = heldBody(t, s, "/v1/placements", 64<<10, `{"account":"a",`+strings.Repeat(" ", 60<<10))
	w := s.do(http.MethodPost, "/v1/placements", padded)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("a 20 KiB body beside 60 KiB held = %d (Retry-After %q), want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if w := s.do(http.MethodGet, "/v1/nodes/gpu001", ""); w.Code != http.StatusOK {
		t.Errorf("a read without a body while the bodies' memory is held: %d", w.Code)
	}
	finish()
	if w := s.do(http.MethodPost, "/v1/placements", padded); w.Code == http.StatusTooManyRequests {
		t.Errorf("after the 60 KiB caller left: still 429")
	}
}
