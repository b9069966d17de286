package httpretry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
)

func TestJSON(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/echo":
			if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Test") != "1" {
				http.Error(w, "headers", http.StatusBadRequest)
				return
			}
			_, _ = w.Write(body)
		case "/denied":
			http.Error(w, `{"error":"bad password hunter2 for user"}`, http.StatusUnauthorized)
		case "/garbage":
			_, _ = io.WriteString(w, "<html>hunter2</html>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := New(srv.Client(), Policy{MaxAttempts: 1}, WithSecrets("hunter2", ""))
	ctx := context.Background()
	var out map[string]int
	if err := c.JSON(ctx, http.MethodPost, srv.URL+"/echo", http.Header{"X-Test": {"1"}}, map[string]int{"a": 1}, &out); err != nil || out["a"] != 1 {
		t.Fatalf("echo: %v %v", out, err)
	}
	err := c.JSON(ctx, http.MethodGet, srv.URL+"/denied?token=abc", nil, nil, &out)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || se.Retryable() || IsRetryableStatus(err) ||
		strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "token=abc") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("denied: %v", err)
	}
	err = c.JSON(ctx, http.MethodGet, srv.URL+"/garbage", nil, nil, &out)
	if err == nil || !strings.Contains(err.Error(), "decode response") {
		t.Errorf("garbage: %v", err)
	}
	if err := c.JSON(ctx, http.MethodGet, "://bad", nil, nil, nil); err == nil {
		t.Error("bad URL accepted")
	}
}

func TestScrubError(t *testing.T) {
	t.Parallel()
	base := errors.New("token abc123 rejected")
	err := ScrubError(base, "abc123")
	if err.Error() != "token [REDACTED] rejected" || !errors.Is(err, base) {
		t.Errorf("ScrubError = %v", err)
	}
	if ScrubError(nil, "x") != nil || ScrubError(base).Error() != base.Error() {
		t.Error("ScrubError without work changed its input")
	}
}

func TestConnection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c     Connection
		field string
	}{
		{Connection{URL: "https://netq.example:32708"}, ""},
		{Connection{URL: "http://ufm", AllowHTTP: true}, ""},
		{Connection{}, "url"},
		{Connection{URL: "https://"}, "url"},
		{Connection{URL: "ftp://x"}, "url"},
		{Connection{URL: "http://ufm"}, "url"},
		{Connection{URL: "https://u:p@ufm"}, "url"},
		{Connection{URL: "https://ufm", Timeout: -1}, "timeout"},
		{Connection{URL: "https://ufm", Retry: Policy{MaxAttempts: 50}}, "retry.maxAttempts"},
	}
	for _, tt := range tests {
		err := tt.c.Validate()
		var fe *config.FieldError
		if tt.field == "" && err != nil || tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
			t.Errorf("%+v: Validate() = %v, want field %q", tt.c, err, tt.field)
		}
	}
	c := Connection{URL: "https://ufm.example/"}
	if got := c.Endpoint("/ufmRest/resources/links"); got != "https://ufm.example/ufmRest/resources/links" {
		t.Errorf("Endpoint = %q", got)
	}
	if _, err := (Connection{URL: "https://x", CAFile: "/nonexistent"}).Client(nil); err == nil {
		t.Error("missing CA file accepted")
	}
}

func TestSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(file, []byte("  s3cret \n"), 0o600)
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	if v, err := (Secret{File: file}).Resolve(); err != nil || v != "s3cret" {
		t.Errorf("file: %q %v", v, err)
	}
	if v, _ := (Secret{Value: "inline", File: file}).Resolve(); v != "inline" {
		t.Errorf("inline: %q", v)
	}
	for _, s := range []Secret{{File: empty}, {File: filepath.Join(dir, "none")}} {
		if _, err := s.Resolve(); err == nil {
			t.Errorf("%+v resolved", s)
		}
	}
	if err := (Secret{Value: "a", File: "b"}).Check("password", "passwordFile", true); err == nil {
		t.Error("both accepted")
	}
	if err := (Secret{}).Check("password", "passwordFile", true); err == nil {
		t.Error("missing accepted")
	}
	if err := (Secret{}).Check("password", "passwordFile", false); err != nil {
		t.Error(err)
	}
}
