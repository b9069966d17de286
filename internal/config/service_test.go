package config_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/config"
)

func TestServiceDefaults(t *testing.T) {
	t.Parallel()
	f, err := config.Parse([]byte("provider:\n  name: sim\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Server.Listen != config.DefaultListen || f.Discovery.ShrinkGuard != 0.1 || f.Discovery.Interval != 5*time.Minute ||
		!f.Discovery.Triggers.Startup || f.Store.Retention.Snapshots != 100 || f.Server.MaxConcurrentDiscoveries != 2 {
		t.Errorf("defaults not applied: %+v", f)
	}
	if d := config.Default(); !reflect.DeepEqual(d.Server, config.DefaultServer()) || d.Store.Retention != config.DefaultStore().Retention {
		t.Errorf("Default() = %+v", d)
	}
}

func TestServiceSections(t *testing.T) {
	t.Parallel()
	f, err := config.Parse([]byte(`server:
  listen: 0.0.0.0:8443
  tls: {cert: /c.pem, key: /k.pem, clientCA: /ca.pem}
  auth: {tokensFile: /etc/toposcope/tokens}
  writeTimeout: 2m
discovery:
  interval: 30s
  shrinkGuard: 0.25
  triggers:
    sighup: false
    watchFiles: [/etc/slurm/slurm.conf]
store:
  path: /var/lib/toposcope/db
  retention: {snapshots: 10, resultAge: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Server.WriteTimeout != 2*time.Minute || f.Server.TLS.ClientCA != "/ca.pem" || f.Discovery.Interval != 30*time.Second ||
		f.Discovery.Triggers.SIGHUP || !f.Discovery.Triggers.Startup || f.Store.Retention.Snapshots != 10 ||
		f.Store.Retention.Results != 1000 || f.Store.Retention.ResultAge != time.Hour {
		t.Errorf("parsed = %+v", f)
	}
}

func TestServiceErrorsNameKeyAndLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"unknown key", "server:\n  listn: x\n", []string{"server.listn (line 2): unknown key", "listen"}},
		{"unknown nested key", "server:\n  tls:\n    cert: a\n    kye: b\n", []string{"server.tls.kye (line 4): unknown key"}},
		{"unknown retention key", "store:\n  retention:\n    snapshot: 3\n", []string{"store.retention.snapshot (line 3)"}},
		{"not a mapping", "server: 5\n", []string{"server (line 1): must be a mapping"}},
		{"bad listen", "server:\n  listen: nowhere\n", []string{"server.listen (line 2): want host:port"}},
		{"bad duration", "discovery:\n  timeout: soon\n", []string{"line 2", "soon"}},
		{"negative timeout", "server:\n  readTimeout: -1s\n", []string{"server.readTimeout (line 2): must be a positive duration"}},
		{"body limit", "server:\n  maxBodyBytes: 10\n", []string{"server.maxBodyBytes (line 2): must be at least 1024"}},
		{"body limit too large", "server:\n  maxBodyBytes: 9223372036854775807\n", []string{"server.maxBodyBytes (line 2): must be at least 1024 and at most 1073741824"}},
		{"port out of range", "server:\n  listen: 127.0.0.1:99999\n", []string{"server.listen (line 2): port \"99999\" is not a number from 0 to 65535"}},
		{"port not a number", "server:\n  listen: 127.0.0.1:http\n", []string{"server.listen (line 2): port \"http\""}},
		{"agent secret without tokens", "server:\n  auth:\n    agentSecretFile: /etc/s\n", []string{"server.auth.agentSecretFile (line 3): needs auth.tokensFile"}},
		{"allowed host", "server:\n  auth:\n    allowedHosts: ['http://x']\n", []string{"server.auth.allowedHosts[0] (line 3)"}},
		{"unready after", "discovery:\n  unreadyAfter: -1\n", []string{"discovery.unreadyAfter (line 2): must not be negative"}},
		{"snapshot reads", "server:\n  maxSnapshotReads: 0\n", []string{"server.maxSnapshotReads (line 2): must be between 1 and 256"}},
		{"concurrency", "server:\n  maxConcurrentDiscoveries: 0\n", []string{"server.maxConcurrentDiscoveries (line 2)"}},
		{"guard", "discovery:\n  shrinkGuard: 1.5\n", []string{"discovery.shrinkGuard (line 2): must be a fraction"}},
		{"interval", "discovery:\n  interval: 10ms\n", []string{"discovery.interval (line 2)"}},
		{"watch file", "discovery:\n  triggers:\n    watchFiles: [a, '']\n", []string{"discovery.triggers.watchFiles[1] (line 3)"}},
		{"retention", "store:\n  retention:\n    runs: 0\n", []string{"store.retention.runs (line 3): must be at least 1"}},
		{"tls half", "server:\n  tls:\n    cert: a\n", []string{"server.tls (line 2): cert and key must be set together"}},
		{"client CA alone", "server:\n  tls:\n    clientCA: a\n", []string{"server.tls.clientCA (line 3): needs tls.cert"}},
		{"extender clients without a client CA", "placement:\n  extender:\n    enabled: true\n    clients: [kube-scheduler]\n", []string{"placement.extender.clients (line 4): name client certificates, which need server.tls.clientCA"}},
		{"open listener", "server:\n  listen: 0.0.0.0:49021\n", []string{"server.auth", "not a loopback address"}},
		{"several at once", "server:\n  listen: x\ndiscovery:\n  shrinkGuard: -1\n", []string{"server.listen (line 2)", "discovery.shrinkGuard (line 4)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tt.doc))
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestOpenListenerNeedsTokensOrAnonymous(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		"server:\n  listen: 0.0.0.0:49021\n  auth:\n    anonymous: true\n",
		"server:\n  listen: '[::]:49021'\n  auth:\n    tokensEnv: TOPOSCOPE_TOKENS\n",
		"server:\n  listen: localhost:1\n",
		"server:\n  listen: '[::1]:1'\n",
	} {
		if _, err := config.Parse([]byte(doc)); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
}

// TestParseEveryProblem: one Parse reports the problems of every section
// (unknown keys, values of the wrong type, invalid values), each once,
// and caps a long list.
func TestParseEveryProblem(t *testing.T) {
	t.Parallel()
	doc := "server:\n  listn: x\n  maxBodyBytes: lots\ndiscovery:\n  interval: -5s\nengines:\n  - params: {}\n"
	_, err := config.Parse([]byte(doc))
	if !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("Parse = %v, want ErrInvalid", err)
	}
	for _, w := range []string{"server.listn (line 2): unknown key", `server.maxBodyBytes (line 3): want an integer, got "lots"`,
		"discovery.interval (line 5)", "engines[0].name: is required"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if n := strings.Count(err.Error(), "listn"); n != 1 {
		t.Errorf("listn reported %d times:\n%v", n, err)
	}
	_, err = config.Parse([]byte("servr:\n  listen: x\nstore: 5\n"))
	for _, w := range []string{`servr (line 1): unknown key; did you mean "server"?`, "store (line 3): must be a mapping"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if err != nil && (strings.Count(err.Error(), "line 3") != 1 || strings.Contains(err.Error(), "not found in type")) {
		t.Errorf("a problem reported twice, or in the decoder's words:\n%v", err)
	}
	var many strings.Builder
	many.WriteString("server:\n")
	for i := range 30 {
		fmt.Fprintf(&many, "  key%02d: 1\n", i)
	}
	_, err = config.Parse([]byte(many.String()))
	if err == nil || !strings.Contains(err.Error(), "and 10 more problems") || strings.Contains(err.Error(), "key20") {
		t.Errorf("30 unknown keys: %v", err)
	}
}
