package app_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/example"
)

var update = flag.Bool("update", false, "rewrite docs/request-keys.md from the registry")

// capabilities are keys that name something a request must never choose:
// a command, a path read or written, an outbound URL, a credential or its
// file, a mode that writes, nested plugins or a fabricated answer. Any
// plugin that lets a request set one of them fails here, whatever its
// tags say.
var capabilities = []string{
	"command", "reconfigureCommand", "squeue", "output", "outputDir", "outputs", "outputText",
	"url", "endpoint", "instanceURL", "server", "caFile", "insecureSkipVerify", "allowHTTP",
	"credentialsFile", "configFile", "profile", "instancePrincipal", "anonymous",
	"password", "passwordFile", "token", "tokenFile", "username", "auth",
	"kubeconfig", "context", "reconfigure", "mode", "namespace", "configMap",
	"sources", "snapshot", "reports", "tenancy", "project", "organization", "workspaceId",
	"tokenURL", "metadataURL", "path", "file", "manageFlavors",
}

// capabilitySuffixes mark a key as a capability by its name, so that a key
// added later (fooURL, barFile, bazCommand) is caught without being listed.
var capabilitySuffixes = []string{"URL", "Url", "Endpoint", "File", "Command", "Dir", "Path", "Kubeconfig"}

// isCapability reports whether key names a capability.
func isCapability(key string) bool {
	if slices.Contains(capabilities, key) {
		return true
	}
	for _, suf := range capabilitySuffixes {
		if strings.HasSuffix(key, suf) {
			return true
		}
	}
	return false
}

// spec is one plugin's parameter keys.
type spec struct {
	kind, name string
	params     config.ParamSpec
}

// allSpecs are the shipped plugins' specs.
func allSpecs() []spec { return specsOf(app.Providers(), app.Engines()) }

// testedSpecs are the specs of every plugin the contract tests run,
// the templates' too.
func testedSpecs() []spec { return specsOf(testedProviders(), testedEngines()) }

func specsOf(provs []providers.Factory, engs []engines.Factory) []spec {
	var out []spec
	for _, f := range provs {
		out = append(out, spec{"provider", f.Name, f.Params})
	}
	for _, f := range engs {
		out = append(out, spec{"engine", f.Name, f.Params})
	}
	return out
}

// TestRequestKeys: every registered provider and engine declares its keys;
// the keys are the ones its decoder knows; no capability is a request
// key; and a request that sets any operator-only key is refused with
// config.ErrOperatorOnly naming the key, while the plugin is not built.
func TestRequestKeys(t *testing.T) {
	t.Parallel()
	r := testedRegistry(t)
	for _, s := range testedSpecs() {
		t.Run(s.kind+"/"+s.name, func(t *testing.T) {
			t.Parallel()
			if len(s.params.Keys) == 0 {
				t.Fatal("Params has no keys: set Params: config.SpecOf(Config{}) in NewFactory")
			}
			for _, k := range s.params.RequestKeys {
				if !slices.Contains(s.params.Keys, k) {
					t.Errorf("request key %q is not a key", k)
				}
				if isCapability(k) {
					t.Errorf("request key %q names a capability: only the operator may set it", k)
				}
			}
			for _, k := range s.params.Keys {
				// The decoder knows every key of the spec.
				var err error
				if s.kind == "provider" {
					_, err = r.NewProvider(s.name, "provider", params(t, k+": null"), providers.Deps{})
				} else {
					_, err = r.NewEngine(s.name, "engine", params(t, k+": null"), engines.Deps{})
				}
				if err != nil && strings.Contains(err.Error(), k+" (line 1): unknown key") {
					t.Errorf("key %q is in the spec but the decoder does not know it", k)
				}
				if s.params.Allows(k) {
					continue
				}
				// A request that sets it is refused, naming it.
				req := params(t, k+": x")
				if s.kind == "provider" {
					_, err = r.ProviderForRequest(s.name, "provider", nil, req, providers.Deps{})
				} else {
					_, err = r.EngineForRequest(s.name, "engine", nil, req, engines.Deps{})
				}
				if !errors.Is(err, config.ErrOperatorOnly) || plugins.FieldOf(err) != s.kind+".params."+k {
					t.Errorf("a request setting %q: err = %v; want config.ErrOperatorOnly on %s.params.%s", k, err, s.kind, k)
				}
			}
		})
	}
}

// TestCapabilityKeysOperatorOnly names the keys that name a command, a
// file, a URL or a fabricated answer of the providers that have them:
// each is a key of its plugin, a capability by the rules above, and not
// a request key (a nested key such as snapshot[].path comes only with its
// parent).
func TestCapabilityKeysOperatorOnly(t *testing.T) {
	t.Parallel()
	specs := map[string]config.ParamSpec{}
	for _, s := range allSpecs() {
		specs[s.kind+"/"+s.name] = s.params
	}
	for _, tc := range []struct{ plugin, key string }{
		{"provider/nebius", "credentialsFile"},
		{"provider/nebius", "tokenURL"},
		{"provider/nebius", "metadataURL"},
		{"provider/nebius", "snapshot"},
		{"provider/nebius", "url"},
		{"provider/aws", "credentialsFile"},
		{"provider/gcp", "credentialsFile"},
		{"provider/slurm-nodes", "command"},
		{"provider/infiniband", "command"},
		{"provider/nvlink", "command"},
		{"engine/slurm", "reconfigureCommand"},
		{"engine/slurm", "partitionCommand"},
		{"engine/slurm", "output"},
		{"engine/instances", "output"},
		{"engine/kueue-budgets", "kubeconfig"},
		{"engine/kueue", "manageFlavors"}, // deletes and creates ResourceFlavors
	} {
		ps, ok := specs[tc.plugin]
		switch {
		case !ok:
			t.Errorf("%s is not registered", tc.plugin)
		case !slices.Contains(ps.Keys, tc.key):
			t.Errorf("%s has no key %q", tc.plugin, tc.key)
		case ps.Allows(tc.key) || !isCapability(tc.key):
			t.Errorf("%s %s: a request may set it (%v) or it is no capability (%v)", tc.plugin, tc.key, ps.Allows(tc.key), isCapability(tc.key))
		}
	}
}

// TestTemplateSwitchPathOperatorOnly: the template provider's
// nodes[].path is a list of switch names, not a file, yet it comes only
// with nodes, which a request may never set (it would fabricate the
// fabric); zone, a plain value, a request may set over the operator's
// nodes.
func TestTemplateSwitchPathOperatorOnly(t *testing.T) {
	t.Parallel()
	r := testedRegistry(t)
	operator := params(t, "nodes: [{name: gpu01, path: [leaf1, spine1]}]")
	_, err := r.ProviderForRequest(example.Name, "provider", operator, params(t, "nodes: [{name: gpu01, path: [/etc/passwd]}]"), providers.Deps{})
	if !errors.Is(err, config.ErrOperatorOnly) || plugins.FieldOf(err) != "provider.params.nodes" {
		t.Errorf("a request setting nodes[].path: err = %v, want config.ErrOperatorOnly on provider.params.nodes", err)
	}
	if _, err := r.ProviderForRequest(example.Name, "provider", operator, params(t, "zone: eu-1"), providers.Deps{}); err != nil {
		t.Errorf("a request setting zone over the operator's nodes: %v", err)
	}
}

// TestSimModelFromRequest: a request may name a bundled model, never a
// file.
func TestSimModelFromRequest(t *testing.T) {
	t.Parallel()
	r := app.Registry()
	if _, err := r.ProviderForRequest("sim", "provider", nil, params(t, "model: nvl72"), providers.Deps{}); err != nil {
		t.Errorf("bundled model: %v", err)
	}
	for _, path := range []string{"/etc/shadow", "../models/x.yaml", "/dev/zero"} {
		_, err := r.ProviderForRequest("sim", "provider", nil, params(t, "model: "+path), providers.Deps{})
		if !errors.Is(err, config.ErrOperatorOnly) || strings.Contains(fmt.Sprint(err), "root:") {
			t.Errorf("model %s: err = %v, want config.ErrOperatorOnly", path, err)
		}
	}
}

// TestRequestKeysDoc keeps docs/request-keys.md equal to the registry's
// specs (go test ./app/ -run RequestKeysDoc -update).
func TestRequestKeysDoc(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("# Parameters a request may set\n\n")
	b.WriteString("Generated from the registry by `go test ./app/ -run RequestKeysDoc -update`;\n")
	b.WriteString("a test keeps it current. A REST request (`POST /v1/generate`, `GET /v1/render/{engine}`)\n")
	b.WriteString("may set only the keys marked **request**: data such as node lists and rendering options.\n")
	b.WriteString("Every other key is the operator's: it is read from the service's configuration file or the\n")
	b.WriteString("command line, and a request that sets it is refused with 403 `operator_only` naming the key.\n")
	b.WriteString("The sim provider's `model` may come from a request only as a bundled model's name.\n")
	b.WriteString("The last column says which keys name a file the plugin reads or writes: with a `paths`\n")
	b.WriteString("section in the configuration, each such file must lie below its `read` or `write` roots.\n\n")
	b.WriteString("| plugin | key | who sets it | file |\n|---|---|---|---|\n")
	for _, s := range allSpecs() {
		for _, k := range s.params.Keys {
			who := "operator"
			if s.params.Allows(k) {
				who = "**request**"
			}
			fmt.Fprintf(&b, "| %s `%s` | `%s` | %s | %s |\n", s.kind, s.name, k, who, s.params.Paths[k])
		}
	}
	const path = "../docs/request-keys.md"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != b.String() {
		t.Fatalf("%s is not current (%v): run go test ./app/ -run RequestKeysDoc -update", path, err)
	}
}
