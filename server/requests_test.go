package server_test

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

const secret = "s3cr3t-Credential-Value-9f2c"

func TestGenerateFlow(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	body := `{"provider":{"name":"sim","params":{"model":"nvl72"}},"engine":{"name":"slurm","params":{"plugin":"topology/block","slurmVersion":"24.11"}}}`
	w := s.do(http.MethodPost, "/v1/generate", body)
	if w.Code != http.StatusAccepted || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(w.Body.String()) {
		t.Fatalf("generate = %d %q", w.Code, w.Body)
	}
	id := w.Body.String()
	if loc := w.Header().Get("Location"); loc != "/v1/topology?uid="+id {
		t.Errorf("Location = %q", loc)
	}
	res := s.poll("/v1/topology?uid=" + id)
	if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), "BlockName=nvl01 Nodes=gb[001-018]") {
		t.Fatalf("topology = %d %.300s", res.Code, res.Body)
	}
	if ct := res.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type = %q", ct)
	}
	// The same request, keys reordered and with credentials, has the same
	// ID; changing the nodes or an engine parameter changes it.
	same := `{"engine":{"params":{"slurmVersion":"24.11","plugin":"topology/block"},"name":"slurm"},"provider":{"creds":{"token":"` + secret + `"},"params":{"model":"nvl72"},"name":"sim"}}`
	if w := s.do(http.MethodPost, "/v1/generate", same); w.Body.String() != id {
		t.Errorf("canonical ID differs: %q vs %q", w.Body, id)
	}
	for _, other := range []string{
		strings.Replace(body, `"24.11"`, `"25.05"`, 1),
		strings.Replace(body, `}}}`, `}},"nodes":[{"region":"r1","instances":{"i-1":"gb001"}}]}`, 1),
	} {
		if w := s.do(http.MethodPost, "/v1/generate", other); w.Code != http.StatusAccepted || w.Body.String() == id {
			t.Errorf("different request got %d %q", w.Code, w.Body)
		}
	}
	w = s.do(http.MethodPost, "/v1/generate", body, "Accept", "application/json")
	if !strings.Contains(w.Body.String(), `"id":"`+id+`"`) {
		t.Errorf("JSON answer = %s", w.Body)
	}
}

func TestGenerateNodesAndDefaults(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{engines: "- name: slurm\n  params:\n    plugin: topology/tree\n"})
	// No provider or engine: the configured ones apply.
	body := `{"nodes":[{"region":"r","instances":{"i-2":"gpu002","i-1":"gpu001","i-9":"extra9"}}]}`
	w := s.do(http.MethodPost, "/v1/generate", body)
	if w.Code != http.StatusAccepted {
		t.Fatalf("generate = %d %s", w.Code, w.Body)
	}
	res := s.poll("/v1/topology?uid=" + w.Body.String())
	if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), "SwitchName=leaf0001 Nodes=gpu[001-002]") {
		t.Fatalf("topology = %d %s", res.Code, res.Body)
	}
}

func TestGenerateErrorsAreStored(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	// small-tree has no accelerator domain, so there is no block to write.
	body := `{"provider":{"name":"sim","params":{"model":"small-tree"}},"engine":{"name":"slurm","params":{"plugin":"topology/block"}}}`
	w := s.do(http.MethodPost, "/v1/generate", body)
	if w.Code != http.StatusAccepted {
		t.Fatalf("generate = %d %s", w.Code, w.Body)
	}
	res := s.poll("/v1/topology?uid=" + w.Body.String())
	if res.Code != http.StatusUnprocessableEntity || errorOf(t, res).Code != "inexpressible" {
		t.Errorf("topology = %d %s", res.Code, res.Body)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	big := `{"provider":{"name":"sim","params":{"model":"` + strings.Repeat("x", 70<<10) + `"}}}`
	tests := []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"empty", "", 400, "invalid_request", "(body)"},
		{"malformed", `{"provider":`, 400, "invalid_request", "(body)"},
		{"syntax in creds", `{"provider":{"name":"sim","creds":{"k":` + secret + `}}}`, 400, "invalid_request", "(body)"},
		{"trailing data", `{} {}`, 400, "invalid_request", "(body)"},
		{"not an object", `[1,2]`, 400, "invalid_request", "(body)"},
		{"unknown top field", `{"provder":{}}`, 400, "invalid_request", "provder"},
		{"unknown provider field", `{"provider":{"name":"sim","parms":{}}}`, 400, "invalid_request", "provider.parms"},
		{"name not a string", `{"provider":{"name":7},"engine":{"name":"slurm"}}`, 400, "invalid_request", "provider.name"},
		{"params not an object", `{"provider":{"name":"sim","params":[1]},"engine":{"name":"slurm"}}`, 400, "invalid_request", "provider.params"},
		{"creds not an object", `{"provider":{"name":"sim","creds":"` + secret + `"}}`, 400, "invalid_request", "provider.creds"},
		{"nodes not an array", `{"nodes":{}}`, 400, "invalid_request", "nodes"},
		{"instance not a string", `{"nodes":[{"region":"r","instances":{"i-1":5}}]}`, 400, "invalid_request", "nodes[0].instances.i-1"},
		{"bad node name", `{"nodes":[{"instances":{"i-1":"a b"}}]}`, 400, "invalid_request", "nodes[0].instances.i-1"},
		{"unconfigured provider", `{"provider":{"name":"nope"},"engine":{"name":"slurm"}}`, 403, "operator_only", "provider.name"},
		{"unknown engine", `{"provider":{"name":"sim"},"engine":{"name":"nope"}}`, 400, "unknown_plugin", "engine.name"},
		{"missing engine", `{"provider":{"name":"sim"}}`, 400, "invalid_request", "engine.name"},
		{"unknown param", `{"provider":{"name":"sim","params":{"mdl":"x"}},"engine":{"name":"slurm"}}`, 400, "invalid_request", "provider.params.mdl"},
		{"wrong param type", `{"provider":{"name":"sim"},"engine":{"name":"slurm","params":{"blockSizes":"big"}}}`, 400, "invalid_request", "engine.params"},
		{"bad param value", `{"provider":{"name":"sim"},"engine":{"name":"slurm","params":{"plugin":"topology/ring"}}}`, 400, "invalid_request", "engine.params.plugin"},
		{"oversized", big, 413, "body_too_large", ""},
		// Capabilities are the operator's: a file to read, objects to delete.
		{"kubeconfig from a request", `{"provider":{"name":"sim"},"engine":{"name":"kueue-budgets","params":{"kubeconfig":"/etc/shadow"}}}`, 403, "operator_only", "engine.params.kubeconfig"},
		{"manageFlavors from a request", `{"provider":{"name":"sim"},"engine":{"name":"kueue","params":{"manageFlavors":true}}}`, 403, "operator_only", "engine.params.manageFlavors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := s.do(http.MethodPost, "/v1/generate", tt.body)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			e := errorOf(t, w)
			if e.Code != tt.code || e.Field != tt.field {
				t.Errorf("error = %+v, want code %s field %s", e, tt.code, tt.field)
			}
			if strings.Contains(w.Body.String(), secret) {
				t.Errorf("the response echoes the credential: %s", w.Body)
			}
		})
	}
	t.Run("still serving", func(t *testing.T) {
		t.Parallel()
		if w := s.do(http.MethodGet, "/healthz", ""); w.Code != http.StatusOK {
			t.Errorf("healthz = %d", w.Code)
		}
	})
}

func TestCredentialsNeverStoredLoggedOrEchoed(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	for i, body := range []string{
		`{"provider":{"name":"sim","creds":{"accessKeyId":"` + secret + `"}},"engine":{"name":"slurm"}}`,
		`{"provider":{"name":"sim","params":{"model":"missing-` + fmt.Sprint(0) + `"},"creds":{"password":"` + secret + `"}},"engine":{"name":"slurm"}}`,
		`{"provider":{"name":"sim","params":{"model":"nvl72"},"creds":{"password":"` + secret + `"}},"engine":{"name":"slurm"},"nodes":[{"region":"marker-1","instances":{"i-1":"gpu001"}}]}`,
		`{"provider":{"name":"sim","params":{"model":"small-tree"},"creds":{"k":"` + secret + `"}},"engine":{"name":"slurm","params":{"plugin":"topology/block"}}}`,
	} {
		w := s.do(http.MethodPost, "/v1/generate", body)
		if strings.Contains(w.Body.String(), secret) {
			t.Errorf("request %d: response echoes the credential", i)
		}
		if w.Code == http.StatusAccepted {
			res := s.poll("/v1/topology?uid=" + w.Body.String())
			if strings.Contains(res.Body.String(), secret) {
				t.Errorf("request %d: result echoes the credential", i)
			}
		}
	}
	if strings.Contains(s.logs.String(), secret) {
		t.Errorf("the log holds the credential")
	}
	if !strings.Contains(s.logs.String(), "request refused") {
		t.Errorf("debug log is empty; the check above proves nothing")
	}
	s.reqs.Close()
	data, err := os.ReadFile(s.storePath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) {
		t.Errorf("the store file holds the credential")
	}
	if strings.Contains(string(data), "missing-0") {
		t.Errorf("the store holds a refused request")
	}
	if !strings.Contains(string(data), "marker-1") {
		t.Errorf("the store does not hold the requests; the check above proves nothing")
	}
}
