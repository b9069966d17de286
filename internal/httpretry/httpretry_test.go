package httpretry

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"io"
	stdlog "log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

// recorder is a fake sleep that records the waits.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return ctx.Err()
}

func identity(d time.Duration) time.Duration { return d }

// script serves the given statuses in turn (the last one repeats) and
// records request bodies.
type script struct {
	mu       sync.Mutex
	statuses []int
	headers  []map[string]string
	bodies   []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	i := min(len(s.bodies), len(s.statuses)-1)
	s.bodies = append(s.bodies, string(body))
	if i < len(s.headers) {
		for k, v := range s.headers[i] {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(s.statuses[i])
	_, _ = io.WriteString(w, "body "+http.StatusText(s.statuses[i]))
}

func (s *script) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func TestDoRetries(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name     string
		statuses []int
		headers  []map[string]string
		policy   Policy
		status   int // final status; 0 for an error
		waits    []time.Duration
		err      error
	}{
		{"success first", []int{200}, nil, Policy{}, 200, nil, nil},
		{"503 then 200", []int{503, 503, 200}, nil, Policy{BaseDelay: 100 * time.Millisecond}, 200,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, nil},
		{"backoff is capped", []int{500, 502, 504, 500, 200}, nil,
			Policy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond}, 200,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}, nil},
		{"attempts exhausted return the last response", []int{503}, nil, Policy{MaxAttempts: 3, BaseDelay: time.Second}, 503,
			[]time.Duration{time.Second, 2 * time.Second}, nil},
		{"429 honours Retry-After seconds", []int{429, 200}, []map[string]string{{"Retry-After": "7"}},
			Policy{BaseDelay: time.Second}, 200, []time.Duration{7 * time.Second}, nil},
		{"Retry-After shorter than the backoff waits the backoff", []int{429, 200}, []map[string]string{{"Retry-After": "0"}},
			Policy{BaseDelay: time.Second}, 200, []time.Duration{time.Second}, nil},
		{"429 honours an HTTP-date Retry-After", []int{429, 200},
			[]map[string]string{{"Retry-After": now.Add(12 * time.Second).Format(http.TimeFormat)}},
			Policy{BaseDelay: time.Second}, 200, []time.Duration{12 * time.Second}, nil},
		{"Retry-After beyond the limit stops", []int{503, 200}, []map[string]string{{"Retry-After": "3600"}},
			Policy{}, 0, nil, ErrRetryAfterTooLong},
		{"400 is not retried", []int{400, 200}, nil, Policy{}, 400, nil, nil},
		{"501 is not retried", []int{501, 200}, nil, Policy{}, 501, nil, nil},
		{"no retries with one attempt", []int{503, 200}, nil, Policy{MaxAttempts: 1}, 503, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &script{statuses: tt.statuses, headers: tt.headers}
			srv := httptest.NewServer(s)
			defer srv.Close()
			rec := &recorder{}
			c := New(srv.Client(), tt.policy, WithSleep(rec.sleep), WithJitter(identity), WithClock(func() time.Time { return now }))
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/x", strings.NewReader("payload"))
			resp, err := c.Do(req)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Do() = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.HasPrefix(string(body), "body ") {
				t.Errorf("status %d body %q, want %d", resp.StatusCode, body, tt.status)
			}
			if !slices.Equal(rec.waits, tt.waits) {
				t.Errorf("waits %v, want %v", rec.waits, tt.waits)
			}
			for i, b := range s.bodies {
				if b != "payload" {
					t.Errorf("attempt %d sent body %q", i+1, b)
				}
			}
		})
	}
}

func TestDoBodyWithoutGetBodyIsNotRetried(t *testing.T) {
	t.Parallel()
	s := &script{statuses: []int{503, 200}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := New(srv.Client(), Policy{}, WithSleep((&recorder{}).sleep))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("once")))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || s.attempts() != 1 {
		t.Errorf("status %d after %d attempts", resp.StatusCode, s.attempts())
	}
}

// counter counts the requests a Doer sends.
type counter struct {
	mu sync.Mutex
	n  int
	d  Doer
}

func (c *counter) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.d.Do(r)
}

// quietTLSServer is an httptest TLS server that does not log failed
// handshakes (the tests cause them on purpose).
func quietTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

func TestDoTransportErrors(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	refused := closed.URL
	closed.Close()
	tlsSrv := quietTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	tests := []struct {
		name     string
		url      string
		attempts int
		check    func(error) bool
	}{
		{"connection refused is retried", refused, 3, func(err error) bool { return strings.Contains(err.Error(), "refused") }},
		{"unknown certificate authority is not retried", tlsSrv.URL, 1, isTLSVerification},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cnt := &counter{d: &http.Client{Timeout: 5 * time.Second}}
			rec := &recorder{}
			c := New(cnt, Policy{MaxAttempts: 3}, WithSleep(rec.sleep))
			req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
			_, err := c.Do(req)
			if err == nil || !tt.check(err) || cnt.n != tt.attempts {
				t.Fatalf("Do() = %v after %d attempts, want %d", err, cnt.n, tt.attempts)
			}
		})
	}
}

func TestDoStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&script{statuses: []int{503}})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := New(srv.Client(), Policy{BaseDelay: time.Hour, MaxDelay: time.Hour}, WithSleep(func(ctx context.Context, _ time.Duration) error {
		cancel()
		return SleepContext(ctx, time.Hour)
	}))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/p?token=secret", nil)
	_, err := c.Do(req)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Do() = %v", err)
	}
}

func TestLogsNeverCarrySecrets(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&script{statuses: []int{503, 200}})
	defer srv.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := New(srv.Client(), Policy{}, WithSleep((&recorder{}).sleep), WithLogger(log))
	u, _ := url.Parse(srv.URL + "/api?api_key=s3cr3t#frag")
	u.User = url.UserPassword("admin", "hunter2")
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	req.Header.Set("Authorization", "Bearer tok-en")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	out := logs.String()
	if !strings.Contains(out, "http retry") {
		t.Fatalf("no retry logged: %s", out)
	}
	for _, secret := range []string{"s3cr3t", "hunter2", "admin", "tok-en"} {
		if strings.Contains(out, secret) {
			t.Errorf("log holds %q: %s", secret, out)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("https://user:pw@netq.example:8443/api/v1/x?token=abc#top")
	if got := Redact(u); got != "https://netq.example:8443/api/v1/x" {
		t.Errorf("Redact = %q", got)
	}
	if Redact(nil) != "" {
		t.Error("Redact(nil)")
	}
}

func TestTLSOptions(t *testing.T) {
	t.Parallel()
	srv := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	pemData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.pem")
	_ = os.WriteFile(junk, []byte("not a certificate"), 0o600)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	tests := []struct {
		name    string
		opts    TLSOptions
		buildOK bool
		getOK   bool
		warned  bool
	}{
		{"system roots do not know the test CA", TLSOptions{}, true, false, false},
		{"CA file", TLSOptions{CAFile: caFile}, true, true, false},
		{"missing CA file", TLSOptions{CAFile: filepath.Join(dir, "nope.pem")}, false, false, false},
		{"CA file without a certificate", TLSOptions{CAFile: junk}, false, false, false},
		{"explicitly insecure", TLSOptions{InsecureSkipVerify: true}, true, true, true},
	}
	for _, tt := range tests {
		logs.Reset()
		hc, err := NewHTTPClient(tt.opts, 5*time.Second, log)
		if (err == nil) != tt.buildOK {
			t.Fatalf("%s: NewHTTPClient error %v", tt.name, err)
		}
		if err != nil {
			continue
		}
		resp, err := hc.Get(srv.URL)
		if (err == nil) != tt.getOK {
			t.Errorf("%s: GET error %v", tt.name, err)
		}
		if err == nil {
			resp.Body.Close()
		}
		if strings.Contains(logs.String(), "verification is OFF") != tt.warned {
			t.Errorf("%s: logs %q", tt.name, logs.String())
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p     Policy
		field string
	}{
		{Policy{}, ""},
		{Policy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: time.Minute}, ""},
		{Policy{MaxAttempts: 21}, "maxAttempts"},
		{Policy{BaseDelay: -1}, "baseDelay"},
		{Policy{MaxDelay: -1}, "maxDelay"},
		{Policy{BaseDelay: time.Minute, MaxDelay: time.Second}, "baseDelay"},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		var fe *config.FieldError
		if tt.field == "" && err != nil || tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
			t.Errorf("%+v: Validate() = %v, want field %q", tt.p, err, tt.field)
		}
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 429: true, 500: true, 501: false, 502: true, 503: true, 504: true, 505: false, 599: true} {
		if Retryable(status) != want {
			t.Errorf("Retryable(%d) = %v", status, !want)
		}
	}
}

func TestEqualJitter(t *testing.T) {
	t.Parallel()
	for range 100 {
		if d := EqualJitter(time.Second); d < 500*time.Millisecond || d > time.Second {
			t.Fatalf("EqualJitter(1s) = %v", d)
		}
	}
}

// TestPolicyDelay: BaseDelay doubled per attempt, capped at MaxDelay.
func TestPolicyDelay(t *testing.T) {
	t.Parallel()
	p := Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 40: time.Second} {
		if got := p.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
}
