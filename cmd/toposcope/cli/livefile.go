package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/topology"
)

// ErrLiveTopology is returned when a simulated topology would replace the
// topology file a running slurmctld reads.
var ErrLiveTopology = errors.New("refusing to write a simulated topology over the live Slurm topology")

// slurmConfDir is where slurmctld reads its files from: the directory of
// $SLURM_CONF, else /etc/slurm.
func slurmConfDir() string {
	if c := os.Getenv("SLURM_CONF"); c != "" {
		return filepath.Dir(c)
	}
	return "/etc/slurm"
}

// liveSlurmFile reports whether path is a topology file that slurmctld may
// read: topology.conf or topology.yaml in Slurm's configuration directory,
// or next to a slurm.conf.
func liveSlurmFile(path string) bool {
	base := filepath.Base(path)
	if base != "topology.conf" && base != "topology.yaml" {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	dir := filepath.Dir(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	confDir := slurmConfDir()
	if real, err := filepath.EvalSymlinks(confDir); err == nil {
		confDir = real
	}
	if dir == confDir {
		return true
	}
	_, err = os.Stat(filepath.Join(dir, "slurm.conf"))
	return err == nil
}

// guardLiveOutput refuses a sim provider writing the live Slurm topology
// unless force is set. The advice names a file that is not live: the same
// directory, another name (slurmctld reads only topology.conf and
// topology.yaml).
func guardLiveOutput(provider string, engine config.Plugin, force bool) error {
	out, ok := config.Param(&engine.Params, "output")
	if !ok || out == "" || out == "-" || provider != "sim" || force || !liveSlurmFile(out) {
		return nil
	}
	ext := filepath.Ext(out)
	preview := strings.TrimSuffix(out, ext) + "-sim" + ext
	return fmt.Errorf("%w: %w: %s is where slurmctld reads its topology, and the sim provider invents one; "+
		"write it under another name to look at it (--output %s), or add --force to replace the real topology",
		ErrUsage, ErrLiveTopology, out, preview)
}

// announceReconfigure tells, before a Slurm engine publishes g, which file
// it replaces and the command it then runs, as configured; nothing when
// no command runs or the file already holds this topology (then nothing
// runs either).
func announceReconfigure(ctx context.Context, w io.Writer, e engines.Engine, g *topology.Graph) error {
	se, ok := e.(*slurm.Engine)
	if !ok {
		return nil
	}
	cfg := se.Config()
	if !cfg.Reconfigure || cfg.Output == "" {
		return nil
	}
	data, err := se.Render(ctx, g)
	if err != nil {
		return nil //nolint:nilerr // Publish renders again and reports it
	}
	command := "`" + strings.Join(cfg.ReconfigureCommand, " ") + "`"
	fi, err := os.Stat(cfg.Output)
	switch {
	case err == nil:
		if old, rerr := os.ReadFile(cfg.Output); rerr == nil && bytes.Equal(old, data) {
			return nil // unchanged: nothing is written, nothing runs
		}
		fmt.Fprintf(w, "toposcope: replacing %s (%d bytes, modified %s), then running %s\n",
			cfg.Output, fi.Size(), fi.ModTime().UTC().Format("2006-01-02 15:04:05 UTC"), command)
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(w, "toposcope: creating %s, then running %s\n", cfg.Output, command)
	default:
		return fmt.Errorf("--output %s: %w", cfg.Output, err)
	}
	return nil
}
