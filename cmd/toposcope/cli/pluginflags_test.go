package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/cmd/toposcope/cli"
	"github.com/toposcope/toposcope/internal/config"
)

// TestPluginFlagsSetTheirKeys: each flag a plugin declares sets a key
// that plugin has.
func TestPluginFlagsSetTheirKeys(t *testing.T) {
	t.Parallel()
	check := func(kind, name string, spec config.ParamSpec) {
		for _, f := range config.FlagsOf(spec.Defaults) {
			if !slices.Contains(spec.Keys, f.Key) {
				t.Errorf("%s %s: --%s sets %q, which is not one of its keys", kind, name, f.Name, f.Key)
			}
		}
	}
	declared := 0
	for _, f := range app.Providers() {
		check("provider", f.Name, f.Params)
		declared += len(config.FlagsOf(f.Params.Defaults))
	}
	for _, f := range app.Engines() {
		check("engine", f.Name, f.Params)
		declared += len(config.FlagsOf(f.Params.Defaults))
	}
	if declared < 9 {
		t.Errorf("the plugins declare %d flags, want at least the 9 of sim, infiniband, slurm, instances and the Kubernetes engines", declared)
	}
}

// TestPluginFlags: the plugins' flags set their plugin's keys; a flag that
// the chosen plugin does not take is a usage error naming the flag as
// typed, that plugin and the plugins that take it.
func TestPluginFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
		file   string // written by --output
	}{
		{name: "model and slurm flags", args: []string{"generate", "--provider", "sim", "--model", "nvl72", "--engine", "slurm", "--plugin", "topology/block", "--slurm-version", "24.11"},
			stdout: []string{"BlockName="}},
		{name: "model for another provider", args: []string{"generate", "--provider", "aws", "--model", "nvl72"}, code: cli.ExitUsage,
			stderr: []string{"--model: provider aws does not take this flag; it is for provider sim"}},
		{name: "model with the provider of the config file", args: []string{"generate", "--config", writeConfig(t, dir, "provider:\n  name: aws\n"), "--model", "nvl72"}, code: cli.ExitUsage,
			stderr: []string{"--model: provider aws does not take this flag"}},
		{name: "slurm flag for a Kubernetes engine", args: []string{"generate", "--engine", "k8s-labels", "--slurm-version", "24.11"}, code: cli.ExitUsage,
			stderr: []string{"--slurm-version: engine k8s-labels does not take this flag; it is for engine slurm"}},
		{name: "Kubernetes switch for slurm", args: []string{"generate", "--dry-run"}, code: cli.ExitUsage,
			stderr: []string{"--dry-run: engine slurm does not take this flag; it is for engines k8s-labels"}},
		{name: "ibnetdiscover for sim", args: []string{"generate", "--ibnetdiscover-output", "x"}, code: cli.ExitUsage,
			stderr: []string{"--ibnetdiscover-output: provider sim does not take this flag; it is for provider infiniband"}},
		{name: "output of instances", args: []string{"generate", "--engine", "instances", "--output", filepath.Join(dir, "instances.json")}, file: "instances.json"},
		{name: "reconfigure off", args: []string{"generate", "--reconfigure=false", "--output", filepath.Join(dir, "topology.conf")}, file: "topology.conf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, tt.code, r.stderr)
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
			if tt.file != "" {
				if data, err := os.ReadFile(filepath.Join(dir, tt.file)); err != nil || len(data) == 0 {
					t.Errorf("--output %s: %d bytes, %v", tt.file, len(data), err)
				}
			}
		})
	}
}

// TestPluginFlagsHelp: generate's help lists each plugin flag with the
// plugins that take it; show, which discovers only, the providers'.
func TestPluginFlagsHelp(t *testing.T) {
	t.Parallel()
	r := run(t, "generate", "--help")
	for _, s := range []string{"--model string", "(provider sim)", "--ibnetdiscover-command string", "--kubeconfig string", "(engines k8s-labels, ", "--dry-run", "--output string", "(engines slurm, instances)"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("generate --help lacks %q:\n%s", s, r.stdout)
		}
	}
	r = run(t, "show", "--help")
	if !strings.Contains(r.stdout, "--model string") || strings.Contains(r.stdout, "--kubeconfig") {
		t.Errorf("show --help, want --model and no engine flag:\n%s", r.stdout)
	}
}

func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
