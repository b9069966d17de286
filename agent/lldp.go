package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/lldp"
)

// DefaultLLDP is the command that prints lldpd's neighbors.
var DefaultLLDP = []string{"lldpcli", "-f", "json0", "show", "neighbors"}

// RDMANetdevs lists the network interfaces of the RDMA devices under
// dir (dir/<device>/device/net/<interface>): the NICs of a RoCE fabric.
// A missing dir means none.
func RDMANetdevs(dir string) (map[string]bool, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*", "device", "net", "*"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGather, err)
	}
	out := make(map[string]bool, len(matches))
	for _, m := range matches {
		out[filepath.Base(m)] = true
	}
	return out, nil
}

// lldpNeighbors runs the LLDP command and keeps the neighbors of the
// fabric's NICs: the RDMA devices' interfaces, and those whose name
// matches LLDPInterfaces. A missing lldpcli means no neighbors.
func (g *Gatherer) lldpNeighbors(ctx context.Context, log *slog.Logger) ([]providers.LLDPNeighbor, error) {
	run := g.Run
	if run == nil {
		run = ExecRunner
	}
	out, err := run(ctx, g.LLDP)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return nil, nil // no lldpd here
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrGather, g.LLDP, err)
	}
	all, warnings, err := lldp.ParseNeighbors(out)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrGather, g.LLDP, err)
	}
	for _, w := range warnings {
		log.Warn("agent: an LLDP neighbor is left out", "why", w)
	}
	fabric := map[string]bool{}
	if g.SysfsDir != "" {
		if fabric, err = RDMANetdevs(g.SysfsDir); err != nil {
			return nil, err
		}
	}
	var kept []providers.LLDPNeighbor
	for _, n := range all {
		if !fabric[n.Interface] && (g.LLDPInterfaces == nil || !g.LLDPInterfaces.MatchString(n.Interface)) {
			log.Debug("agent: not a fabric NIC; its LLDP neighbor is not reported", "interface", n.Interface)
			continue
		}
		if len(kept) == agents.MaxLLDP {
			log.Warn("agent: more fabric NICs with LLDP neighbors than a report holds; the rest are left out", "max", agents.MaxLLDP)
			break
		}
		kept = append(kept, n)
	}
	return kept, nil
}

// CompileInterfaces compiles a --lldp-interfaces pattern ("" for none).
func CompileInterfaces(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("LLDP interface pattern: %w", err)
	}
	return re, nil
}
