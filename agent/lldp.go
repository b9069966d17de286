package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
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
// matches LLDPInterfaces. Where lldpcli is missing or lldpd does not
// answer, it listens for LLDP frames instead (LLDPListen); output that
// does not parse is an error.
func (g *Gatherer) lldpNeighbors(ctx context.Context, log *slog.Logger) ([]providers.LLDPNeighbor, error) {
	run := g.Run
	if run == nil {
		run = ExecRunner
	}
	out, err := run(ctx, g.LLDP)
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		return g.listen(ctx, log) // no lldpcli here
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %v: %w", ErrGather, g.LLDP, ctx.Err())
	case err != nil:
		// lldpcli is installed but lldpd does not answer (not running):
		// no neighbors from it, which is no reason to fail the round.
		log.Debug("agent: the LLDP command failed; listening for LLDP frames instead", "command", g.LLDP, "err", err)
		return g.listen(ctx, log)
	}
	all, warnings, err := neighbor.Parse(out)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrGather, g.LLDP, err)
	}
	for _, w := range warnings {
		log.Warn("agent: an LLDP neighbor is left out", "why", w)
	}
	fabric, err := g.rdmaNICs()
	if err != nil {
		return nil, err
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

// rdmaNICs are the RDMA devices' interfaces under SysfsDir.
func (g *Gatherer) rdmaNICs() (map[string]bool, error) {
	if g.SysfsDir == "" {
		return map[string]bool{}, nil
	}
	return RDMANetdevs(g.SysfsDir)
}

// listen hears the switches' own LLDP frames on the fabric NICs for up to
// LLDPListen, where no lldpd runs. Without CAP_NET_RAW it reports none,
// with a warning.
func (g *Gatherer) listen(ctx context.Context, log *slog.Logger) ([]providers.LLDPNeighbor, error) {
	if g.LLDPListen <= 0 {
		return nil, nil
	}
	fabric, err := g.rdmaNICs()
	if err != nil {
		return nil, err
	}
	all, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGather, err)
	}
	var ifaces []string
	for _, ifc := range all {
		if fabric[ifc.Name] || (g.LLDPInterfaces != nil && g.LLDPInterfaces.MatchString(ifc.Name)) {
			ifaces = append(ifaces, ifc.Name)
		}
	}
	if len(ifaces) > agents.MaxLLDP {
		ifaces = ifaces[:agents.MaxLLDP]
	}
	heard, warnings, err := ListenLLDP(ctx, ifaces, g.LLDPListen)
	if errors.Is(err, ErrListen) {
		log.Warn("agent: cannot listen for LLDP frames (it needs CAP_NET_RAW); no LLDP neighbors reported", "err", err)
		return nil, nil
	}
	for _, w := range warnings {
		log.Warn("agent: an LLDP frame is left out", "why", w)
	}
	return heard, err
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
