package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, cli.Env{Stdout: &out, Stderr: &errb})
	return result{code, out.String(), errb.String()}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	badConfig := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badConfig, []byte("provider:\n  name: sim\n  params:\n    model: small-tree\n    colour: red\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	goodConfig := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(goodConfig, []byte("provider:\n  name: sim\n  params:\n    model: nvl72\nengines:\n  - name: slurm\n    params:\n      plugin: topology/block\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   []string
		noStdout bool
	}{
		{name: "default job", args: []string{"generate"}, stdout: []string{"SwitchName=", "Nodes=gpu[001-008]"}},
		{name: "block", args: []string{"generate", "--model", "nvl72", "--plugin", "topology/block", "--slurm-version", "24.11"},
			stdout: []string{"BlockName=", "BlockSizes="}},
		{name: "config file", args: []string{"generate", "--config", goodConfig}, stdout: []string{"BlockName="}},
		{name: "flag overrides file", args: []string{"generate", "--config", goodConfig, "--plugin", "topology/tree"},
			stdout: []string{"SwitchName="}},
		{name: "unplaced nodes kept under their own switch", args: []string{"generate", "--model", "mixed", "--fail-on-uncovered"},
			stdout: []string{"SwitchName=unplaced Nodes=cpu[01-08]"}, stderr: []string{"under switch unplaced", "count=8"}},
		{name: "list parameter from the command line", args: []string{"generate", "--model", "nvl72", "--plugin", "topology/block",
			"--slurm-version", "24.11", "--engine-param", "blockSizes=18,36"}, stdout: []string{"BlockSizes=18,36\n"}},
		{name: "misspelt parameter gets a suggestion", args: []string{"generate", "--engine-param", "blocksizes=18"},
			code: cli.ExitUsage, stderr: []string{`did you mean "blockSizes"?`}},
		{name: "uncovered nodes warned", args: []string{"generate", "--model", "mixed", "--engine-param", "unplacedSwitch="},
			stdout: []string{"SwitchName="}, stderr: []string{"not covered", "cpu[01-08]"}},
		{name: "fail on uncovered", args: []string{"generate", "--model", "mixed", "--engine-param", "unplacedSwitch=", "--fail-on-uncovered"},
			code: cli.ExitUncovered, stderr: []string{"cpu[01-08]"}},
		{name: "node subset", args: []string{"generate", "--nodes", "gpu[001-002]"}, stdout: []string{"Nodes=gpu[001-002]"}},
		{name: "unknown model", args: []string{"generate", "--model", "nope"}, code: cli.ExitUsage,
			stderr: []string{"nope", "small-tree"}},
		{name: "unknown engine", args: []string{"generate", "--engine", "nope"}, code: cli.ExitUsage,
			stderr: []string{`engine "nope"`, "slurm"}},
		{name: "unknown engine param", args: []string{"generate", "--engine-param", "bogus=1"}, code: cli.ExitUsage,
			stderr: []string{"engine.params.bogus"}},
		{name: "bad param syntax", args: []string{"generate", "--engine-param", "bogus"}, code: cli.ExitUsage,
			stderr: []string{"KEY=VALUE"}},
		{name: "config error names line", args: []string{"generate", "--config", badConfig}, code: cli.ExitUsage,
			stderr: []string{"provider.params.colour (line 5)"}},
		{name: "unknown flag", args: []string{"generate", "--frobnicate"}, code: cli.ExitUsage, stderr: []string{"frobnicate"}},
		{name: "bad hostlist", args: []string{"generate", "--nodes", "gpu[1-"}, code: cli.ExitUsage, stderr: []string{"--nodes"}},
		{name: "infiniband from saved output", args: []string{"generate", "--provider", "infiniband",
			"--ibnetdiscover-output", "../../../providers/infiniband/testdata/ibsim-fat-tree-2tier.out"}, stdout: []string{"SwitchName=", "Switches="}},
		{name: "infiniband both sources", args: []string{"generate", "--provider", "infiniband",
			"--ibnetdiscover-output", "x", "--ibnetdiscover-command", "y"}, code: cli.ExitUsage, stderr: []string{"provider.params"}},
		{name: "models", args: []string{"models"}, stdout: []string{"small-tree", "fat-tree-512", "nvl72", "mixed"}},
		{name: "providers", args: []string{"providers"}, stdout: []string{"sim", "infiniband", "ufm", "netq", "nvlink"}},
		{name: "engines", args: []string{"engines"}, stdout: []string{"slurm", "k8s-labels", "slinky", "kueue", "kai"}},
		{name: "version", args: []string{"version"}, stdout: []string{cli.Version()}},
		{name: "model generate", args: []string{"model", "generate", "--shape", "fat-tree", "--nodes", "40"}, stdout: []string{"switches"}},
		{name: "model generate bad shape", args: []string{"model", "generate", "--shape", "torus", "--nodes", "4"},
			code: cli.ExitUsage, stderr: []string{"torus"}},
		{name: "model generate needs nodes", args: []string{"model", "generate"}, code: cli.ExitUsage, stderr: []string{"nodes"}},
		{name: "unknown command", args: []string{"genrate"}, code: cli.ExitUsage, stderr: []string{"generate"}},
		{name: "version flag", args: []string{"--version"}, stdout: []string{"toposcope 0.1.0", "commit ", "built "}},
		{name: "misspelt flag", args: []string{"generate", "--slurmversion", "24.11"}, code: cli.ExitUsage, stderr: []string{"did you mean --slurm-version?"}},
		{name: "missing config file", args: []string{"generate", "--config", "/nonexistent/toposcope.yaml"}, code: cli.ExitUsage, stderr: []string{"/nonexistent/toposcope.yaml"}},
		{name: "inexpressible beats invalid", args: []string{"generate", "--plugin", "topology/block", "--slurm-version", "22.05"}, code: cli.ExitInexpressible, stderr: []string{"23.11"}},
		{name: "unreleased Slurm version", args: []string{"generate", "--slurm-version", "27.05"}, code: cli.ExitUsage, stderr: []string{"not a Slurm release"}},
		{name: "help", args: []string{"generate", "--help"}, stdout: []string{"--slurm-version", "--config"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
		})
	}
}

// TestVersionFlagIsVersionCommand: `toposcope --version` and `toposcope
// version` print the same line, with the commit and the build date.
func TestVersionFlagIsVersionCommand(t *testing.T) {
	t.Parallel()
	cmd, flag := run(t, "version"), run(t, "--version")
	if cmd.code != 0 || flag.code != 0 || cmd.stdout != flag.stdout {
		t.Fatalf("version: %+v\n--version: %+v", cmd, flag)
	}
	for _, s := range []string{"toposcope " + cli.Version() + " (commit ", ", built "} {
		if !strings.Contains(cmd.stdout, s) {
			t.Errorf("version prints %q, lacks %q", cmd.stdout, s)
		}
	}
}

func TestGenerateToFileAndBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := filepath.Join(dir, "m.yaml")
	if r := run(t, "model", "generate", "--shape", "nvl72", "--nodes", "100", "-o", model); r.code != 0 {
		t.Fatalf("model generate: %+v", r)
	}
	out := filepath.Join(dir, "topology.conf")
	r := run(t, "generate", "--model", model, "--plugin", "topology/block", "--output", out)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("generate: %+v", r)
	}
	data, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(data), "BlockName=") {
		t.Fatalf("output file: %v %q", err, data)
	}
}

// TestServeRefusesRoot: serve as root without --allow-root exits 2 and
// says what it needs instead; with the flag, or as another user, the
// check passes.
func TestServeRefusesRoot(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	root := func() int { return 0 }
	code := cli.Main(context.Background(), []string{"serve", "--listen", "127.0.0.1:0"}, cli.Env{Stdout: &out, Stderr: &errb, Geteuid: root})
	if code != cli.ExitUsage || !strings.Contains(errb.String(), "refuses to run as root") || !strings.HasSuffix(errb.String(), "or pass --allow-root\n") {
		t.Fatalf("exit %d, stderr %q; want %d ending with --allow-root", code, errb.String(), cli.ExitUsage)
	}
}

// TestConfigSchema: `toposcope config schema` prints the schema that
// docs/config.schema.json holds, a JSON document that knows every
// provider.
func TestConfigSchema(t *testing.T) {
	t.Parallel()
	r := run(t, "config", "schema")
	want, err := os.ReadFile("../../../docs/config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || r.stdout != string(want) {
		t.Fatalf("exit %d; stdout is not docs/config.schema.json:\n%.400s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var doc struct {
		Properties map[string]struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if names := doc.Properties["provider"].Properties["name"].Enum; !slices.Contains(names, "sim") || !slices.Contains(names, "ufm") {
		t.Errorf("provider names %v", names)
	}
}

// TestPluginParams: `providers --params NAME` and `engines --params NAME`
// list every key of the plugin, with its type, default, whether a
// request may set it and its meaning; an unknown name is a usage error.
func TestPluginParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args   []string
		code   int
		stdout []string
	}{
		{[]string{"providers", "--params", "ufm"}, 0, []string{"--provider-param KEY=VALUE", "KEY", "REQUEST",
			"nodes ", "hostlist", "auth ", "one of basic|token", `"basic"`, "[file, read]", "timeout ", "duration"}},
		{[]string{"engines", "--params", "slurm"}, 0, []string{"--engine-param", "plugin ", `"topology/tree"`,
			"one of topology/tree|topology/block|topology/yaml", "reconfigureCommand ", "command", `["scontrol","reconfigure"]`}},
		{[]string{"engines", "--params", "nope"}, cli.ExitUsage, nil},
	}
	for _, tt := range tests {
		r := run(t, tt.args...)
		if r.code != tt.code {
			t.Fatalf("%v: exit %d, want %d\n%s%s", tt.args, r.code, tt.code, r.stdout, r.stderr)
		}
		for _, s := range tt.stdout {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("%v: stdout lacks %q:\n%s", tt.args, s, r.stdout)
			}
		}
	}
	// Every key of every plugin is listed, marked as the request may set it.
	reg := app.Registry()
	for _, kind := range []string{"provider", "engine"} {
		choices := reg.ProviderChoices()
		if kind == "engine" {
			choices = reg.EngineChoices()
		}
		for _, c := range choices {
			r := run(t, kind+"s", "--params", c.Name)
			if r.code != 0 {
				t.Fatalf("%s %s: exit %d: %s", kind, c.Name, r.code, r.stderr)
			}
			for _, k := range c.Params.Keys {
				want := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(k) + `\s.*\s` + map[bool]string{true: "yes", false: "-"}[c.Params.Allows(k)] + `\s`)
				if !want.MatchString(r.stdout) {
					t.Errorf("%s %s: no row for %q (request %v):\n%s", kind, c.Name, k, c.Params.Allows(k), r.stdout)
				}
			}
		}
	}
}

// TestManPages: `toposcope man DIR` writes a manual page for every
// command, each with its flags and the date asked for.
func TestManPages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := run(t, "man", "--date", "2026-01-02", dir); r.code != 0 {
		t.Fatalf("man: exit %d: %s", r.code, r.stderr)
	}
	for page, want := range map[string]string{
		"toposcope.1":                "toposcope",
		"toposcope-generate.1":       "\\fB\\-\\-slurm\\-version",
		"toposcope-trigger.1":        "\\fB\\-\\-server",
		"toposcope-accept.1":         "shrink guard",
		"toposcope-config-schema.1":  "JSON Schema",
		"toposcope-providers.1":      "\\fB\\-\\-params",
		"toposcope-model-generate.1": "\\fB\\-\\-shape",
		"toposcope-snapshots.1":      "\\fB\\-\\-limit",
		"toposcope-agent.1":          "",
		"toposcope-version.1":        "",
		"toposcope-simulate.1":       "\\fB\\-\\-output",
		"toposcope-show.1":           "\\fB\\-\\-format",
		"toposcope-place.1":          "\\fB\\-\\-account",
		"toposcope-status.1":         "pending",
		"toposcope-diff.1":           "FROM",
		"toposcope-check.1":          "",
		"toposcope-serve.1":          "",
		"toposcope-models.1":         "",
		"toposcope-engines.1":        "\\fB\\-\\-params",
		"toposcope-config.1":         "",
		"toposcope-model.1":          "",
	} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if !strings.Contains(string(b), `.TH "TOPOSCOPE" "1" "Jan 2026"`) || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks the header or %q:\n%.400s", page, want, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "toposcope-man.1")); err == nil {
		t.Error("the hidden man command has a page")
	}
	if r := run(t, "man"); r.code != cli.ExitUsage {
		t.Errorf("man without a directory: exit %d", r.code)
	}
}
