package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/testenv/dbtest"
)

// selectsOperatorValue are the operator-only engine keys that Topograph's
// request vocabulary uses under the same engine name, as a selection of
// the operator's value (service/topograph.go): engine.key → the value
// the operator has in the test's configuration (the default).
var selectsOperatorValue = map[string]string{"nfd.cleanup": "true"}

// TestAttackOperatorKeys sends, for every registered provider and engine,
// every key that only the operator may set, with values that would run a
// command, write or read a file, or reach another host. Each request is
// refused with 403 naming the key, and nothing runs or is written: the
// canary file that each command or output would create stays absent.
func TestAttackOperatorKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	s := newStack(t, stackOpts{publish: true, engines: "[{name: slurm, params: {output: " + filepath.Join(dir, "topology.conf") + "}}]"})
	value := fmt.Sprintf(`["/bin/sh","-c","touch %s"]`, canary)
	attacks := 0
	for _, f := range app.Providers() {
		for _, k := range f.Params.Keys {
			if f.Params.Allows(k) {
				continue
			}
			for _, v := range []string{value, `"` + canary + `"`, `"http://127.0.0.1:1/` + k + `"`} {
				body := fmt.Sprintf(`{"provider":{"name":"sim","params":{%q:%s}},"engine":{"name":"slurm"}}`, k, v)
				if f.Name != "sim" {
					// Another provider than the configured one is refused
					// before its keys are looked at.
					body = fmt.Sprintf(`{"provider":{"name":%q,"params":{%q:%s}},"engine":{"name":"slurm"}}`, f.Name, k, v)
				}
				attacks++
				w := s.do(http.MethodPost, "/v1/generate", body)
				if w.Code != http.StatusForbidden {
					t.Errorf("provider %s key %s = %d %s, want 403", f.Name, k, w.Code, w.Body)
				}
			}
		}
	}
	for _, f := range app.Engines() {
		for _, k := range f.Params.Keys {
			if f.Params.Allows(k) {
				continue
			}
			for _, v := range []string{value, `"` + canary + `"`, "true"} {
				attacks++
				body := fmt.Sprintf(`{"provider":{"name":"sim"},"engine":{"name":%q,"params":{%q:%s}}}`, f.Name, k, v)
				w := s.do(http.MethodPost, "/v1/generate", body)
				switch {
				case selectsOperatorValue[f.Name+"."+k] == v:
					// Topograph's own key of that engine may select the
					// operator's value, which changes nothing.
					if w.Code != http.StatusAccepted {
						t.Errorf("engine %s key %s = %s (the operator's value) = %d %s, want 202", f.Name, k, v, w.Code, w.Body)
					}
				case w.Code != http.StatusForbidden || errorOf(t, w).Field != "engine.params."+k:
					t.Errorf("engine %s key %s = %d %s, want 403 on engine.params.%s", f.Name, k, w.Code, w.Body, k)
				}
				w = s.do(http.MethodGet, "/v1/render/"+f.Name+"?"+k+"="+canary, "")
				if w.Code != http.StatusForbidden {
					t.Errorf("render %s?%s = %d %s, want 403", f.Name, k, w.Code, w.Body)
				}
			}
		}
	}
	if attacks < 100 {
		t.Fatalf("only %d attacks: the registry's specs are not what this test expects", attacks)
	}
	s.reqs.Close()
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatalf("the canary exists (%v): a request ran a command or wrote a file", err)
	}
}

// TestAttackSlurmCommandKeys: with slurm-nodes and the slurm engine
// configured (so that the keys are looked at, not the plugin's name), a
// request that sets a key that runs a command or stands in for its output
// (slurm-nodes command and outputText, slurm reconfigureCommand) is
// refused with 403 naming that key, and the command never runs; a
// request key of the same plugins is accepted.
func TestAttackSlurmCommandKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	s := newStack(t, stackOpts{publish: true, provider: "slurm-nodes",
		params:  "{instanceID: none, outputText: '{\"nodes\": [{\"name\": \"gpu001\", \"partitions\": [\"gpu\"]}]}', provider: {name: sim, params: {model: small-tree}}}",
		engines: "[{name: slurm, params: {output: " + filepath.Join(dir, "topology.conf") + "}}]"})
	run := fmt.Sprintf(`["/bin/sh","-c","touch %s"]`, canary)
	for _, tt := range []struct{ body, field string }{
		{`{"provider":{"name":"slurm-nodes","params":{"command":` + run + `}},"engine":{"name":"slurm"}}`, "provider.params.command"},
		{`{"provider":{"name":"slurm-nodes","params":{"command":"touch ` + canary + `"}},"engine":{"name":"slurm"}}`, "provider.params.command"},
		{`{"provider":{"name":"slurm-nodes","params":{"outputText":"{\"nodes\":[{\"name\":\"evil\"}]}"}},"engine":{"name":"slurm"}}`, "provider.params.outputText"},
		{`{"provider":{"name":"slurm-nodes"},"engine":{"name":"slurm","params":{"reconfigureCommand":` + run + `}}}`, "engine.params.reconfigureCommand"},
		{`{"provider":{"name":"slurm-nodes"},"engine":{"name":"slurm","params":{"reconfigureCommand":"touch ` + canary + `"}}}`, "engine.params.reconfigureCommand"},
	} {
		w := s.do(http.MethodPost, "/v1/generate", tt.body)
		if w.Code != http.StatusForbidden || errorOf(t, w).Field != tt.field {
			t.Errorf("%s = %d %s, want 403 on %s", tt.body, w.Code, w.Body, tt.field)
		}
	}
	// The same plugins take their request keys.
	if w := s.do(http.MethodPost, "/v1/generate", `{"provider":{"name":"slurm-nodes","params":{"partitions":["gpu"]}},"engine":{"name":"slurm"}}`); w.Code != http.StatusAccepted {
		t.Errorf("a request key of slurm-nodes = %d %s, want 202", w.Code, w.Body)
	}
	s.reqs.Close()
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatalf("the canary exists (%v): a request ran a command", err)
	}
}

// TestAttackPaths: a request may name a bundled model, never a file,
// however it is spelled; the answer never quotes the file.
func TestAttackPaths(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	for _, model := range []string{"/etc/passwd", "../../../../etc/passwd", "/dev/zero", "/proc/self/environ", "small-tree/../../etc/passwd"} {
		w := s.do(http.MethodPost, "/v1/generate", `{"provider":{"name":"sim","params":{"model":"`+model+`"}},"engine":{"name":"slurm"}}`)
		if w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "root:") {
			t.Errorf("model %s = %d %s, want 403", model, w.Code, w.Body)
		}
	}
}

// TestAttackBrowsers: a web page cannot drive the API: cross-site and
// cross-origin writes, form and text/plain bodies are refused, and a
// CORS preflight is never granted.
func TestAttackBrowsers(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	body := `{"provider":{"name":"sim"},"engine":{"name":"slurm"}}`
	tests := []struct {
		name   string
		header []string
		status int
	}{
		{"cross-site fetch", []string{"Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"}, 403},
		{"same-site other origin", []string{"Content-Type", "application/json", "Sec-Fetch-Site", "same-site"}, 403},
		{"foreign Origin", []string{"Content-Type", "application/json", "Origin", "http://evil.example"}, 403},
		{"null Origin", []string{"Content-Type", "application/json", "Origin", "null"}, 403},
		{"text/plain", []string{"Content-Type", "text/plain"}, 415},
		{"form", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"multipart", []string{"Content-Type", "multipart/form-data; boundary=x"}, 415},
		{"same origin", []string{"Content-Type", "application/json", "Origin", "http://127.0.0.1:49021", "Sec-Fetch-Site", "same-origin"}, 202},
		{"curl", []string{"Content-Type", "application/json; charset=utf-8"}, 202},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := s.do(http.MethodPost, "/v1/generate", body, tt.header...)
			if w.Code != tt.status {
				t.Errorf("status = %d %s, want %d", w.Code, w.Body, tt.status)
			}
		})
	}
	w := s.do(http.MethodOptions, "/v1/generate", "", "Origin", "http://evil.example", "Access-Control-Request-Method", "POST")
	if w.Code < 400 || w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("preflight = %d %v, want a refusal with no CORS permission", w.Code, w.Header())
	}
}

// TestWritesNeedTokensBeyondLoopback: with no tokens, a service that
// listens beyond loopback serves reads and refuses every write.
func TestWritesNeedTokensBeyondLoopback(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{listen: "0.0.0.0:0"})
	s.discover()
	if w := s.do(http.MethodGet, "/v1/status", ""); w.Code != http.StatusOK {
		t.Errorf("read = %d", w.Code)
	}
	for _, r := range [][2]string{{http.MethodPost, "/v1/generate"}, {http.MethodPost, "/v1/discover"}, {http.MethodPut, "/v1/budgets"}, {http.MethodPost, "/v1/ledger"}} {
		if w := s.do(r[0], r[1], `{}`); w.Code != http.StatusForbidden {
			t.Errorf("%s %s = %d %s, want 403", r[0], r[1], w.Code, w.Body)
		}
	}
}

// TestRequestPublishGoesThroughGuard: with server.publish on, a request
// that names a few nodes would shrink what the configured engine writes:
// it is refused by the shrink guard (409) and the file stays as the loop
// wrote it. A full request publishes, and the loop then republishes its
// own topology at its next run.
func TestRequestPublishGoesThroughGuard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "topology.conf")
	s := newStack(t, stackOpts{publish: true, engines: "[{name: slurm, params: {output: " + out + "}}]"})
	s.discover()
	before, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	w := s.do(http.MethodPost, "/v1/generate", `{"nodes":[{"instances":{"i-1":"gpu001","i-2":"gpu002"}}]}`)
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit = %d %s", w.Code, w.Body)
	}
	res := s.poll("/v1/topology?uid=" + w.Body.String())
	if res.Code != http.StatusConflict || errorOf(t, res).Code != "shrink_guard" {
		t.Fatalf("a shrinking publish = %d %s, want 409 shrink_guard", res.Code, res.Body)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Fatalf("the refused request changed %s", out)
	}
	w = s.do(http.MethodPost, "/v1/generate", `{"engine":{"name":"slurm","params":{"header":false}}}`)
	if res := s.poll("/v1/topology?uid=" + w.Body.String()); res.Code != http.StatusOK {
		t.Fatalf("a full publish = %d %s", res.Code, res.Body)
	}
	run := s.discover()
	if len(run.Engines) != 1 {
		t.Errorf("after a request published, the loop's next run published through %d engines, want 1 (it repairs the output)", len(run.Engines))
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Errorf("the loop did not restore its own output")
	}
}

// TestBuildInfoMetric: /metrics exports the build's version.
func TestBuildInfoMetric(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	w := s.do(http.MethodGet, "/metrics", "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `toposcope_build_info{goversion="go`) {
		t.Fatalf("/metrics = %d, lacks toposcope_build_info", w.Code)
	}
}

// TestAttackNebiusKeys: with the nebius provider configured (a saved
// answer, so that the provider builds and its keys are looked at), a
// request that sets a key naming a URL, a credentials file or a
// fabricated answer is refused with 403 naming it, in toposcope's and in
// Topograph's vocabulary (both call the provider "nebius"), also when it
// brings a service account key to sign with; the hosts it names are
// never contacted. The provider's request key (region) is accepted.
func TestAttackNebiusKeys(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(canary.Close)
	s := newStack(t, stackOpts{provider: "nebius",
		params: "project: p1\nmetadataURL: '-'\nsnapshot: [{id: i-1, path: [s1, s2, s3]}]\n"})
	saKey := `"creds":{"serviceAccountId":"sa-1","publicKeyId":"k-1","privateKey":"-----BEGIN PRIVATE KEY-----"}`
	for _, tt := range []struct{ params, creds, field string }{
		{`{"tokenURL":"` + canary.URL + `/token"}`, saKey, "provider.params.tokenURL"},
		{`{"metadataURL":"` + canary.URL + `"}`, "", "provider.params.metadataURL"},
		{`{"url":"` + canary.URL + `"}`, `"creds":{"token":"t"}`, "provider.params.url"},
		{`{"credentialsFile":"/etc/shadow"}`, "", "provider.params.credentialsFile"},
		{`{"credentialsFile":"../../root/.nebius/credentials.json"}`, "", "provider.params.credentialsFile"},
		{`{"snapshot":[{"id":"i-1","path":["evil","evil","evil"]}]}`, "", "provider.params.snapshot"},
		{`{"tokenFile":"/var/run/secrets/token"}`, "", "provider.params.tokenFile"},
	} {
		body := `{"provider":{"name":"nebius","params":` + tt.params
		if tt.creds != "" {
			body += "," + tt.creds
		}
		body += `},"engine":{"name":"slurm"}}`
		w := s.do(http.MethodPost, "/v1/generate", body)
		if w.Code != http.StatusForbidden || errorOf(t, w).Field != tt.field {
			t.Errorf("%s = %d %s, want 403 on %s", tt.params, w.Code, w.Body, tt.field)
		}
		if strings.Contains(w.Body.String(), "PRIVATE KEY") {
			t.Errorf("the answer echoes the key: %s", w.Body)
		}
	}
	if w := s.do(http.MethodPost, "/v1/generate", `{"provider":{"name":"nebius","params":{"region":"eu-north1"}},"engine":{"name":"slurm"}}`); w.Code != http.StatusAccepted {
		t.Errorf("a request key of nebius = %d %s, want 202", w.Code, w.Body)
	}
	s.reqs.Close()
	if n := hits.Load(); n != 0 {
		t.Fatalf("the canary host was contacted %d times: a request chose a URL", n)
	}
}

// TestAttackStoreDatabaseKeys: the shared store's keys that name a file
// (store.database.dsnFile, tls.caFile, certFile, keyFile) are the
// operator's configuration alone. A REST body that names them, at its top
// level, under store.database, or as a plugin parameter, on every route
// that reads a body, is refused (POST /v1/discover reads none); the
// service keeps its own database.
func TestAttackStoreDatabaseKeys(t *testing.T) {
	t.Parallel()
	db := dbtest.Start(t.Context(), t, dbtest.Postgres)
	s := newStack(t, stackOpts{database: db, quiet: true})
	s.discover()
	where := s.store.Path()
	dir := t.TempDir()
	evil := filepath.Join(dir, "evil.dsn")
	if err := os.WriteFile(evil, []byte("postgres://attacker@127.0.0.1:1/stolen"), 0o600); err != nil {
		t.Fatal(err)
	}
	sections := []string{
		fmt.Sprintf(`"store":{"database":{"driver":"postgres","dsnFile":%q,"tls":{"caFile":%q,"certFile":%q,"keyFile":%q}}}`, evil, evil, evil, evil),
		fmt.Sprintf(`"database":{"dsnFile":%q}`, evil),
		fmt.Sprintf(`"dsnFile":%q`, evil), fmt.Sprintf(`"caFile":%q`, evil), fmt.Sprintf(`"certFile":%q`, evil), fmt.Sprintf(`"keyFile":%q`, evil),
	}
	for _, sec := range sections {
		for _, r := range []struct{ method, path, body string }{
			{http.MethodPost, "/v1/generate", `{` + sec + `}`},
			{http.MethodPost, "/v1/generate", `{"provider":{"name":"sim","params":{` + sec + `}},"engine":{"name":"slurm"}}`},
			{http.MethodPost, "/v1/generate", `{"provider":{"name":"sim"},"engine":{"name":"slurm","params":{` + sec + `}}}`},
			{http.MethodPut, "/v1/budgets", `{"accounts":[{"name":"a"}],` + sec + `}`},
			{http.MethodPost, "/v1/ledger", `{"records":[],` + sec + `}`},
			{http.MethodPost, "/v1/placements", `{"account":"a","nodes":1,` + sec + `}`},
			{http.MethodPut, "/v1/agents/gpu001", `{"node":"gpu001",` + sec + `}`},
		} {
			if w := s.do(r.method, r.path, r.body); w.Code < 400 || w.Code >= 500 {
				t.Errorf("%s %s with %s = %d %s, want a 4xx refusal", r.method, r.path, sec, w.Code, w.Body)
			}
		}
	}
	// POST /v1/discover reads no body: it only triggers the loop, with
	// the operator's configuration.
	if w := s.do(http.MethodPost, "/v1/discover", `{`+sections[0]+`}`); w.Code != http.StatusAccepted {
		t.Errorf("discover = %d %s", w.Code, w.Body)
	}
	for _, k := range []string{"dsnFile", "caFile", "certFile", "keyFile"} {
		if w := s.do(http.MethodGet, "/v1/render/slurm?"+k+"="+evil, ""); w.Code < 400 || w.Code >= 500 {
			t.Errorf("render with %s = %d, want a 4xx refusal", k, w.Code)
		}
	}
	if s.store.Path() != where {
		t.Errorf("the store moved from %s to %s", where, s.store.Path())
	}
	if _, err := s.svc.Refresh(t.Context()); err != nil {
		t.Errorf("the service no longer reads its own database: %v", err)
	}
}

// TestAttackCredentialAndCommandKeys: the keys that name a credential
// file, an output file or a command (the lldp provider's snmp, with its
// communityFile and passphrase files; the instances engine's output; the
// slurm engine's versionCommand) are the operator's: with those plugins
// configured, a request that sets any of them is refused with 403 naming
// the key, and nothing is read, written or run.
func TestAttackCredentialAndCommandKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	s := newStack(t, stackOpts{publish: true, provider: "lldp",
		params:  "{reports: [{node: gpu-001, gpus: 8, lldp: [{interface: eth0, chassisID: 'aa:bb:cc:00:00:01', sysName: leaf1, portID: swp1}]}]}",
		engines: "[{name: slurm, params: {output: " + filepath.Join(dir, "topology.conf") + "}}, {name: instances, params: {output: " + filepath.Join(dir, "instances.json") + "}}]"})
	run := fmt.Sprintf(`["/bin/sh","-c","touch %s"]`, canary)
	for _, tt := range []struct{ body, field string }{
		{`{"provider":{"name":"lldp","params":{"snmp":{"communityFile":"/etc/shadow","networks":["0.0.0.0/0"]}}},"engine":{"name":"slurm"}}`, "provider.params.snmp"},
		{`{"provider":{"name":"lldp","params":{"snmp":{"version":"3","user":"u","authPassphraseFile":"/etc/shadow","privPassphraseFile":"/etc/shadow","addresses":{"leaf1":"127.0.0.1"}}}},"engine":{"name":"slurm"}}`, "provider.params.snmp"},
		{`{"provider":{"name":"lldp"},"engine":{"name":"instances","params":{"output":"` + canary + `"}}}`, "engine.params.output"},
		{`{"provider":{"name":"lldp"},"engine":{"name":"slurm","params":{"versionCommand":` + run + `,"slurmVersion":"auto"}}}`, "engine.params.versionCommand"},
		{`{"provider":{"name":"lldp"},"engine":{"name":"slurm","params":{"versionCommand":"touch ` + canary + `"}}}`, "engine.params.versionCommand"},
		{`{"provider":{"name":"lldp"},"engine":{"name":"slurm","params":{"output":"` + canary + `"}}}`, "engine.params.output"},
		// A topology's partition is a request key; how the partitions are
		// read (a command, slurmrestd's URL and token file) is not.
		{`{"provider":{"name":"lldp"},"engine":{"name":"slurm","params":{"plugin":"topology/yaml","slurmVersion":"26.05","partitionCommand":` + run + `,"topologies":[{"name":"t","plugin":"tree","clusterDefault":true,"partition":"gpu"}]}}}`, "engine.params.partitionCommand"},
		{`{"provider":{"name":"lldp"},"engine":{"name":"slurm","params":{"slurmrestd":{"url":"http://127.0.0.1:1","allowHTTP":true,"tokenFile":"/etc/shadow"}}}}`, "engine.params.slurmrestd"},
	} {
		w := s.do(http.MethodPost, "/v1/generate", tt.body)
		if w.Code != http.StatusForbidden || errorOf(t, w).Field != tt.field {
			t.Errorf("%s = %d %s, want 403 on %s", tt.body, w.Code, w.Body, tt.field)
		}
		if strings.Contains(w.Body.String(), "root:") {
			t.Errorf("%s: the answer quotes a file", tt.body)
		}
	}
	// Their request keys are taken.
	if w := s.do(http.MethodPost, "/v1/generate", `{"provider":{"name":"lldp","params":{"maxAge":"5m"}},"engine":{"name":"instances","params":{"domainLabels":false}}}`); w.Code != http.StatusAccepted {
		t.Errorf("request keys of lldp and instances = %d %s, want 202", w.Code, w.Body)
	}
	if w := s.do(http.MethodPost, "/v1/generate", `{"provider":{"name":"lldp"},"engine":{"name":"slurm","params":{"plugin":"topology/yaml","slurmVersion":"26.05","topologies":[{"name":"t","plugin":"tree","clusterDefault":true,"partition":"gpu"}]}}}`); w.Code != http.StatusAccepted {
		t.Errorf("a topology's partition = %d %s, want 202", w.Code, w.Body)
	}
	s.reqs.Close()
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatalf("the canary exists (%v): a request ran a command or wrote a file", err)
	}
}
