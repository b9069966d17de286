package agents

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/topology"
)

// Bounds of one agent report. The server refuses a report past them
// (400 naming the field), and a stored report past them is dropped at
// discovery.
const (
	// MaxReportBytes is the largest report body the server reads. A
	// report at every other bound is well under it.
	MaxReportBytes = 48 << 10
	// MaxFabricDepth is the longest fabric path (switch levels above
	// the node); clouds give three.
	MaxFabricDepth = 8
	// MaxHCAs is the most HCAs one node may report.
	MaxHCAs = 64
	// MaxGPUs is the most GPUs one node may report, so that the sum over
	// any cluster fits in an int.
	MaxGPUs = 1024
	// MaxValueLen is the longest identity, rack, domain or switch ID.
	MaxValueLen = 256
	// MaxLLDP is the most LLDP neighbors (fabric NICs) one node reports.
	MaxLLDP = 16
)

// ErrInvalidFacts is wrapped by CheckFacts' errors (besides
// config.ErrInvalid, which makes them a 400 at the server).
var ErrInvalidFacts = errors.New("invalid agent report")

// nodeGUID is an HCA node GUID as the agent sends it.
var nodeGUID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// CheckFacts reports every value of f that is out of bounds, as
// config.FieldErrors naming the report's JSON field (hcas[2].nodeGUID),
// each wrapping ErrInvalidFacts; nil when f can be used. The node name
// must be a host name both Slurm and Kubernetes accept; text values are
// printable ASCII without spaces; counts and lists are bounded.
func CheckFacts(f providers.NodeFacts) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, config.Errorf(field, "%w: %s", ErrInvalidFacts, fmt.Sprintf(format, args...)))
	}
	if err := topology.CheckHostName(f.Node); err != nil {
		bad("node", "%v", err)
	} else if err := hostlist.ValidName(f.Node); err != nil {
		bad("node", "%v", err)
	}
	for _, v := range []struct{ field, value string }{
		{"instanceID", f.InstanceID}, {"region", f.Region}, {"zone", f.Zone}, {"rack", f.Rack}, {"fabricDomain", f.FabricDomain},
	} {
		if msg := checkValue(v.value); msg != "" {
			bad(v.field, "%s", msg)
		}
	}
	if f.GPUs < 0 || f.GPUs > MaxGPUs {
		bad("gpus", "must be from 0 to %d, got %d", MaxGPUs, f.GPUs)
	}
	if f.Clique != "" {
		if msg := checkValue(f.Clique); msg != "" {
			bad("clique", "%s", msg)
		} else if _, err := nvlink.ParseCliqueLabel(f.Clique); err != nil {
			bad("clique", "%v", err)
		}
	}
	if len(f.HCAs) > MaxHCAs {
		bad("hcas", "at most %d HCAs, got %d", MaxHCAs, len(f.HCAs))
	} else {
		seen := make(map[string]bool, len(f.HCAs))
		for i, h := range f.HCAs {
			field := fmt.Sprintf("hcas[%d]", i)
			switch {
			case h.Name == "" || len(h.Name) > 64 || strings.ContainsAny(h.Name, " \t\n/,=") || checkValue(h.Name) != "":
				bad(field+".name", "must be a device name (mlx5_0)")
			case seen[h.Name]:
				bad(field+".name", "HCA %q is listed twice", h.Name)
			}
			seen[h.Name] = true
			if h.NodeGUID != "" && !nodeGUID.MatchString(h.NodeGUID) {
				bad(field+".nodeGUID", "must be 16 lower-case hex digits")
			}
		}
	}
	if len(f.Fabric) > MaxFabricDepth {
		bad("fabric", "at most %d switches, got %d", MaxFabricDepth, len(f.Fabric))
	} else {
		seen := make(map[string]bool, len(f.Fabric))
		for i, id := range f.Fabric {
			field := fmt.Sprintf("fabric[%d]", i)
			switch msg := checkValue(id); {
			case id == "":
				bad(field, "must be a switch ID, got an empty one")
			case msg != "":
				bad(field, "%s", msg)
			case seen[id]:
				bad(field, "switch %q appears twice in the path", id)
			}
			seen[id] = true
		}
	}
	checkLLDP(f.LLDP, bad)
	return errors.Join(errs...)
}

// checkLLDP checks the LLDP neighbors: at most MaxLLDP, one per
// interface, IDs present, every value bounded and printable.
func checkLLDP(ns []providers.LLDPNeighbor, bad func(field, format string, args ...any)) {
	if len(ns) > MaxLLDP {
		bad("lldp", "at most %d neighbors, got %d", MaxLLDP, len(ns))
		return
	}
	seen := make(map[string]bool, len(ns))
	for i, n := range ns {
		field := fmt.Sprintf("lldp[%d]", i)
		switch {
		case n.Interface == "" || len(n.Interface) > 64 || strings.ContainsAny(n.Interface, "/,=") || checkValue(n.Interface) != "":
			bad(field+".interface", "must be a network interface name (ens4f0np0)")
		case seen[n.Interface]:
			bad(field+".interface", "interface %q is listed twice", n.Interface)
		}
		seen[n.Interface] = true
		for _, v := range []struct {
			key, value string
			required   bool
		}{{"chassisID", n.ChassisID, true}, {"portID", n.PortID, true}, {"chassisIDType", n.ChassisIDType, false},
			{"portIDType", n.PortIDType, false}, {"sysName", n.SysName, false}, {"portDescr", n.PortDescr, false}} {
			switch {
			case v.required && v.value == "":
				bad(field+"."+v.key, "is required")
			case len(v.value) > neighbor.MaxField:
				bad(field+"."+v.key, "at most %d characters, got %d", neighbor.MaxField, len(v.value))
			case !neighbor.PrintableASCII(v.value):
				bad(field+"."+v.key, "must be printable ASCII")
			}
		}
		if len(n.MgmtIPs) > neighbor.MaxMgmtIPs {
			bad(field+".mgmtIPs", "at most %d addresses, got %d", neighbor.MaxMgmtIPs, len(n.MgmtIPs))
		}
		for j, ip := range n.MgmtIPs {
			if _, err := netip.ParseAddr(ip); err != nil {
				bad(fmt.Sprintf("%s.mgmtIPs[%d]", field, j), "must be an IP address")
			}
		}
		if len(n.Capabilities) > len(neighbor.Capabilities) {
			bad(field+".capabilities", "at most %d, got %d", len(neighbor.Capabilities), len(n.Capabilities))
			continue
		}
		for j, c := range n.Capabilities {
			if !slices.Contains(neighbor.Capabilities[:], c) {
				bad(fmt.Sprintf("%s.capabilities[%d]", field, j), "must be one of %s", strings.Join(neighbor.Capabilities[:], ", "))
			}
		}
	}
}

// checkValue says what is wrong with an identity or ID value, or "".
func checkValue(v string) string {
	if len(v) > MaxValueLen {
		return fmt.Sprintf("at most %d characters, got %d", MaxValueLen, len(v))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f {
			return fmt.Sprintf("must be printable ASCII without spaces, got %q at byte %d", c, i)
		}
	}
	return ""
}
