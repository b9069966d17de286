package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service"
)

func TestParseGenerateRequest(t *testing.T) {
	t.Parallel()
	base := `{"provider":{"name":"sim","params":{"model":"nvl72","x":{"b":1,"a":[1,2]}}},"engine":{"name":"slurm","params":{"plugin":"topology/block"}},"nodes":[{"region":"r2","instances":{"i-3":"n3"}},{"region":"r1","instances":{"i-2":"n2","i-1":"n1"}}]}`
	req, err := server.ParseGenerateRequest([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"provider":{"name":"sim","params":{"model":"nvl72","x":{"a":[1,2],"b":1}}},"engine":{"name":"slurm","params":{"plugin":"topology/block"}},"nodes":[{"region":"r1","instances":{"i-1":"n1","i-2":"n2"}},{"region":"r2","instances":{"i-3":"n3"}}]}`
	if got := string(req.Canonical()); got != want {
		t.Errorf("canonical =\n%s\nwant\n%s", got, want)
	}
	refs := req.DiscoveryRequest().Nodes
	if len(refs) != 3 || refs[0].Name != "n1" || refs[0].InstanceID != "i-1" || refs[0].Region != "r1" {
		t.Errorf("nodes = %+v", refs)
	}
	same := []string{
		// Keys reordered, groups of one region split, credentials added,
		// whitespace changed, empty params spelled out.
		`{"nodes":[{"region":"r1","instances":{"i-1":"n1"}},{"region":"r2","instances":{"i-3":"n3"}},{"region":"r1","instances":{"i-2":"n2"}}],
		  "engine":{"params":{"plugin":"topology/block"},"name":"slurm"},
		  "provider":{"creds":{"key":"secret"},"params":{"x":{"a":[1,2],"b":1},"model":"nvl72"},"name":"sim"}}`,
	}
	for _, s := range same {
		other, err := server.ParseGenerateRequest([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if other.ID() != req.ID() {
			t.Errorf("ID differs for an equivalent request:\n%s\n%s", other.Canonical(), req.Canonical())
		}
		if other.Creds.Len() != 1 || fmt.Sprint(other.Creds) != "[redacted]" || strings.Contains(string(other.Canonical()), "secret") {
			t.Errorf("credentials leak: %v %s", other.Creds, other.Canonical())
		}
	}
	for _, s := range []string{
		strings.Replace(base, `"n3"`, `"n4"`, 1),
		strings.Replace(base, `"topology/block"`, `"topology/tree"`, 1),
		strings.Replace(base, `"nvl72"`, `"mixed"`, 1),
	} {
		other, err := server.ParseGenerateRequest([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if other.ID() == req.ID() {
			t.Errorf("different requests share ID %s", req.ID())
		}
	}
	empty, _ := server.ParseGenerateRequest([]byte(`{"provider":{"name":"sim","params":{}},"engine":{"name":"slurm","params":null}}`))
	bare, _ := server.ParseGenerateRequest([]byte(`{"provider":{"name":"sim"},"engine":{"name":"slurm"}}`))
	if empty.ID() != bare.ID() {
		t.Error("empty params and no params differ")
	}
}

func TestParseGenerateRequestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, field, text string }{
		{``, "(body)", "empty body"},
		{`{`, "(body)", "truncated"},
		{`{"a":1x}`, "(body)", "malformed JSON at byte offset 7"},
		{`{"":1}`, `""`, "unknown field"},
		{`{} []`, "(body)", "after the JSON object"},
		{`"x"`, "(body)", "must be an object, got string"},
		{`{"engine":{"name":"slurm","params":{"a":1},"x":2}}`, "engine.x", "unknown field (known: name, params)"},
		{`{"engine":[]}`, "engine", "must be an object, got array"},
		{`{"provider":{"name":null}}`, "provider.name", "must be a string, got null"},
		{`{"provider":{"params":"model=x"}}`, "provider.params", "must be an object, got string"},
		{`{"nodes":[{"instances":{"":"n1"}}]}`, "nodes[0].instances", "instance ID must not be empty"},
		{`{"nodes":[{"instances":{"i1":"n1"}},{"instances":{"i2":"n1"}}]}`, "nodes[1].instances.i2", "also given by nodes[0].instances.i1"},
		{`{"nodes":[{"region":1}]}`, "nodes[0].region", "must be a string, got number"},
		{`{"nodes":[{"instances":[]}]}`, "nodes[0].instances", "must be an object, got array"},
	}
	for _, tt := range tests {
		t.Run(tt.field+" "+tt.text, func(t *testing.T) {
			t.Parallel()
			_, err := server.ParseGenerateRequest([]byte(tt.body))
			var re *service.RequestError
			if !errors.As(err, &re) || !errors.Is(err, service.ErrBadRequest) {
				t.Fatalf("err = %v, want a RequestError", err)
			}
			if re.Field != tt.field || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %q (field %q), want field %q and %q", err, re.Field, tt.field, tt.text)
			}
		})
	}
}

func TestCredentialsAreRedacted(t *testing.T) {
	t.Parallel()
	req, err := server.ParseGenerateRequest([]byte(`{"provider":{"name":"sim","creds":{"password":"hunter2-hunter2"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "creds", req.Creds, "req", req)
	out := b.String() + fmt.Sprintf("%v %+v %#v %s", req, req, req.Creds, req.Creds)
	if strings.Contains(out, "hunter2") {
		t.Errorf("credentials printed: %s", out)
	}
}

// FuzzParseGenerateRequest checks that the decoder never panics, that
// every error is a RequestError, and that a decoded request's canonical
// form decodes to the same request (so IDs are stable across restarts).
func FuzzParseGenerateRequest(f *testing.F) {
	for _, seed := range []string{
		`{"provider":{"name":"sim","params":{"model":"nvl72"},"creds":{"k":"v"}},"engine":{"name":"slurm","params":{"plugin":"topology/block","blockSizes":[18,36]}},"nodes":[{"region":"r","instances":{"i":"n"}}]}`,
		`{}`, `{"nodes":null}`, `{"provider":{"params":{"a":1e400}}}`, `{"engine":{"params":{"a":"\u0000\ud800"}}}`, `[`, `{"a":`,
		`{"nodes":[{"region":"","instances":{"a":"b","c":"d"}}]}`, `{"provider":{"params":{"x":[[[[[]]]]]}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := server.ParseGenerateRequest(data)
		if err != nil {
			var re *service.RequestError
			if !errors.As(err, &re) || re.Field == "" {
				t.Fatalf("error %v is not a RequestError with a field", err)
			}
			return
		}
		canon := req.Canonical()
		again, err := server.ParseGenerateRequest(canon)
		if err != nil {
			t.Fatalf("canonical form %s does not decode: %v", canon, err)
		}
		if again.ID() != req.ID() || string(again.Canonical()) != string(canon) {
			t.Fatalf("canonical form is not stable:\n%s\n%s", canon, again.Canonical())
		}
		for _, p := range []service.Plugin{req.Provider, req.Engine} {
			if _, err := p.ParamsNode(); err != nil {
				t.Fatalf("params %s do not convert to YAML: %v", p.Params, err)
			}
		}
	})
}

func TestCredentialsReachTheProvider(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       map[string]string
	}{
		{"none", `{"provider":{"name":"aws"}}`, nil},
		{"strings", `{"provider":{"name":"aws","creds":{"accessKeyId":"AKIDSECRET1","secretAccessKey":"s3cr3t-value"}}}`,
			map[string]string{"accessKeyId": "AKIDSECRET1", "secretAccessKey": "s3cr3t-value"}},
		{"non-string", `{"provider":{"name":"aws","creds":{"n":12, "o":{"a": "b"}}}}`,
			map[string]string{"n": "12", "o": `{"a":"b"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := server.ParseGenerateRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			dr := req.DiscoveryRequest()
			if dr.Credentials.Len() != len(tt.want) {
				t.Fatalf("got %d credentials, want %d", dr.Credentials.Len(), len(tt.want))
			}
			for k, v := range tt.want {
				if got, ok := dr.Credentials.Get(k); !ok || got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			var b strings.Builder
			slog.New(slog.NewJSONHandler(&b, nil)).Info("x", "req", dr, "creds", dr.Credentials)
			js, _ := json.Marshal(dr)
			out := b.String() + string(js) + fmt.Sprintf("%v %+v %#v %s %q", dr, dr, dr, dr.Credentials, dr.Credentials)
			for _, secret := range []string{"AKIDSECRET1", "s3cr3t-value"} {
				if strings.Contains(out, secret) {
					t.Errorf("credential printed: %s", out)
				}
			}
		})
	}
}
