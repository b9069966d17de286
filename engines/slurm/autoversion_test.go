package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/testenv/slurmtest"
)

// TestVersionAuto reads the target version from the real Slurm: the
// host's slurmctld -V (22.05; its scontrol needs a slurm.conf, which a
// head node has and this host does not), and 26.05's scontrol --version
// beside a running 26.05 controller, where a padding block (25.05+) is
// then written without a slurmVersion edit.
func TestVersionAuto(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	slurmtest.Require(t, slurmtest.V2605)
	t.Parallel()
	e := newEngine(t, func(c *Config) { c.SlurmVersion, c.VersionCommand = VersionAuto, []string{"/usr/sbin/slurmctld", "-V"} })
	if e.version != 2205 {
		t.Errorf("host scontrol: version %s, want 22.05", e.version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), slurmctldTimeout)
	defer cancel()
	c, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2605, Nodes: []string{"n1"}, Topology: "SwitchName=s1 Nodes=n1\n"})
	if err != nil {
		t.Fatal(err)
	}
	g := build(t, threeAndThree())
	out := render(t, g, func(cfg *Config) {
		cfg.Plugin, cfg.SlurmVersion, cfg.VersionCommand = PluginBlock, VersionAuto, c.ScontrolArgv("--version")
	})
	if !strings.Contains(out, "Slurm 26.05") || !strings.Contains(out, "BlockName=spineA-pad1\n") {
		t.Errorf("auto on a 26.05 head node: want the 26.05 rules (a padding block):\n%s", out)
	}
}

func TestVersionAutoErrors(t *testing.T) {
	t.Parallel()
	for name, argv := range map[string][]string{
		"missing command": {"/nonexistent/scontrol", "--version"},
		"not a version":   {"/bin/echo", "hello"},
		"unknown release": {"/bin/echo", "slurm", "26.04.1"},
	} {
		cfg := DefaultConfig()
		cfg.SlurmVersion, cfg.VersionCommand = VersionAuto, argv
		_, err := New(cfg, engines.Deps{})
		var fe *config.FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "slurmVersion") {
			t.Errorf("%s: New = %v, want an error naming slurmVersion", name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.SlurmVersion, cfg.VersionCommand = VersionAuto, nil
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "versionCommand") {
		t.Errorf("auto without a command: %v", err)
	}
}
