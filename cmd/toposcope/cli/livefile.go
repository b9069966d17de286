package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/toposcope/toposcope/internal/config"
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
// unless force is set, and, before a reconfigure, tells what the run is
// about to replace.
func guardLiveOutput(w io.Writer, provider string, engine config.Plugin, force bool) error {
	out, ok := config.Param(&engine.Params, "output")
	if !ok || out == "" || out == "-" {
		return nil
	}
	if provider == "sim" && liveSlurmFile(out) && !force {
		return fmt.Errorf("%w: %w: %s is where slurmctld reads its topology, and the sim provider invents one; "+
			"write to a file under /tmp to look at it, or add --force to replace the real topology",
			ErrUsage, ErrLiveTopology, out)
	}
	reconf, _ := config.Param(&engine.Params, "reconfigure")
	if on, _ := strconv.ParseBool(reconf); !on {
		return nil
	}
	fi, err := os.Stat(out)
	switch {
	case err == nil:
		fmt.Fprintf(w, "toposcope: replacing %s (%d bytes, modified %s), then running reconfigureCommand (default `scontrol reconfigure`)\n",
			out, fi.Size(), fi.ModTime().UTC().Format("2006-01-02 15:04:05 UTC"))
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(w, "toposcope: creating %s, then running reconfigureCommand (default `scontrol reconfigure`)\n", out)
	default:
		return fmt.Errorf("--output %s: %w", out, err)
	}
	return nil
}
