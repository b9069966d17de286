package server_test

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toposcope/toposcope/server"
)

// TestSIGHUPReloadsCredentials: a real `toposcope serve` loads its token
// file and agent secret again on SIGHUP. After the secret file is
// rotated, the new secret's agent tokens are accepted and the old one's
// refused, and a token added to the token file works, without a restart
// (before, the old secret stayed in force until a restart). A secret
// that cannot be used is logged by key, without the secret, and the
// credentials in force stay.
func TestSIGHUPReloadsCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const (
		secretA  = "first-agent-secret-0123456789abcdef"
		secretB  = "second-agent-secret-fedcba9876543210"
		newToken = "read-token-added-by-rotation-42"
	)
	secret := writeFile(t, dir, "agent-secret", []byte(secretA+"\n"))
	svc := startSmall(t, dir, ", agentSecretFile: "+secret, "discovery: {interval: 0s, triggers: {sighup: false}}\n")

	put := func(secret string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, svc.base+"/v1/agents/gpu001", strings.NewReader(`{"node":"gpu001","gpus":8}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+server.AgentToken([]byte(secret), "gpu001"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	get := func(token string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, svc.base+"/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	hangup := func() {
		t.Helper()
		if err := svc.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s\n%s", what, svc.stderr)
			}
		}
	}
	if code := put(secretA); code != http.StatusOK {
		t.Fatalf("PUT with the first secret's token = %d", code)
	}
	if code := get(newToken); code != http.StatusUnauthorized {
		t.Fatalf("GET with a token not yet in the file = %d", code)
	}

	writeFile(t, dir, "agent-secret", []byte(secretB+"\n"))
	writeFile(t, dir, "tokens", []byte("read:"+readToken+"\nwrite:"+writeToken+"\nread:"+newToken+"\n"))
	hangup()
	until("the rotated secret in force", func() bool { return put(secretB) == http.StatusOK })
	if code := put(secretA); code != http.StatusUnauthorized {
		t.Errorf("PUT with the old secret's token after the reload = %d, want 401", code)
	}
	if code := get(newToken); code != http.StatusOK {
		t.Errorf("GET with the token added to the file = %d, want 200", code)
	}

	writeFile(t, dir, "agent-secret", []byte("short-secret\n"))
	hangup()
	until("the refused reload logged", func() bool {
		return strings.Contains(svc.stderr.String(), "could not be loaded again")
	})
	if code := put(secretB); code != http.StatusOK {
		t.Errorf("PUT with the secret in force after a refused reload = %d, want 200", code)
	}
	logs := svc.stderr.String()
	if !strings.Contains(logs, "server.auth.agentSecretFile") || strings.Contains(logs, "short-secret") || strings.Contains(logs, secretB) {
		t.Errorf("the refused reload's log should name the key and no secret:\n%s", logs)
	}
	select {
	case err := <-svc.exited:
		t.Fatalf("toposcope serve exited on SIGHUP: %v", err)
	default:
	}
}
