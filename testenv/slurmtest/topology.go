package slurmtest

import (
	"fmt"
	"strconv"
	"strings"
)

// Switch is one `SwitchName=` line of `scontrol show topology` (topology/tree):
//
//	SwitchName=%s Level=%u LinkSpeed=%u[ Nodes=%s][ Switches=%s]
//
// Nodes and Switches are Slurm hostlist expressions exactly as printed, e.g.
// "gpu[001-016]". Level 0 is a leaf; a parent's Nodes lists every node below it.
type Switch struct {
	Name      string
	Level     int
	LinkSpeed int
	Nodes     string
	Switches  string
}

// Block is one `BlockName=` or `AggregatedBlock=` line of `scontrol show topology`
// (topology/block):
//
//	BlockName=%s BlockIndex=%u[ Nodes=%s] BlockSize=%u
//	AggregatedBlock=<hostlist of member blocks> BlockIndex=%u Nodes=%s BlockSize=%u
//
// For an aggregated block, Name is the hostlist of its member blocks, e.g.
// "nvl[01-02]". Size is the configured block size (base size times the level
// multiplier), not the number of nodes present. Nodes is a hostlist expression.
type Block struct {
	Name       string
	Index      int
	Nodes      string
	Size       int
	Aggregated bool
}

// ParseTopology parses the output of `scontrol show topology` into its switch and
// block records, in output order. Blank lines are ignored. A line of another kind, a
// field it does not know, a repeated or missing field, or a bad number is an error
// that names the line.
func ParseTopology(out string) ([]Switch, []Block, error) {
	var (
		switches []Switch
		blocks   []Block
	)
	for i, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		kv, keys, err := splitFields(line)
		if err != nil {
			return nil, nil, fmt.Errorf("slurmtest: topology line %d %q: %w", i+1, line, err)
		}
		switch keys[0] {
		case "SwitchName":
			s, err := parseSwitch(kv)
			if err != nil {
				return nil, nil, fmt.Errorf("slurmtest: topology line %d %q: %w", i+1, line, err)
			}
			switches = append(switches, s)
		case "BlockName", "AggregatedBlock":
			b, err := parseBlock(kv, keys[0] == "AggregatedBlock")
			if err != nil {
				return nil, nil, fmt.Errorf("slurmtest: topology line %d %q: %w", i+1, line, err)
			}
			blocks = append(blocks, b)
		default:
			return nil, nil, fmt.Errorf("slurmtest: topology line %d %q: unknown record %q", i+1, line, keys[0])
		}
	}
	return switches, blocks, nil
}

// splitFields splits "K=V K=V ..." into a map and the keys in order.
func splitFields(line string) (map[string]string, []string, error) {
	kv := map[string]string{}
	var keys []string
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("field %q is not Key=Value", f)
		}
		if _, dup := kv[k]; dup {
			return nil, nil, fmt.Errorf("field %s appears twice", k)
		}
		kv[k] = v
		keys = append(keys, k)
	}
	return kv, keys, nil
}

func parseSwitch(kv map[string]string) (Switch, error) {
	if err := onlyKeys(kv, "SwitchName", "Level", "LinkSpeed", "Nodes", "Switches"); err != nil {
		return Switch{}, err
	}
	s := Switch{Name: kv["SwitchName"], Nodes: kv["Nodes"], Switches: kv["Switches"]}
	var err error
	if s.Level, err = number(kv, "Level"); err != nil {
		return Switch{}, err
	}
	if s.LinkSpeed, err = number(kv, "LinkSpeed"); err != nil {
		return Switch{}, err
	}
	if s.Name == "" {
		return Switch{}, fmt.Errorf("empty SwitchName")
	}
	return s, nil
}

func parseBlock(kv map[string]string, aggregated bool) (Block, error) {
	nameKey := "BlockName"
	if aggregated {
		nameKey = "AggregatedBlock"
	}
	if err := onlyKeys(kv, nameKey, "BlockIndex", "Nodes", "BlockSize"); err != nil {
		return Block{}, err
	}
	b := Block{Name: kv[nameKey], Nodes: kv["Nodes"], Aggregated: aggregated}
	var err error
	if b.Index, err = number(kv, "BlockIndex"); err != nil {
		return Block{}, err
	}
	if b.Size, err = number(kv, "BlockSize"); err != nil {
		return Block{}, err
	}
	if b.Name == "" {
		return Block{}, fmt.Errorf("empty %s", nameKey)
	}
	if aggregated && b.Nodes == "" {
		return Block{}, fmt.Errorf("aggregated block without Nodes")
	}
	return b, nil
}

// onlyKeys rejects keys other than allowed.
func onlyKeys(kv map[string]string, allowed ...string) error {
	for k := range kv {
		known := false
		for _, a := range allowed {
			known = known || k == a
		}
		if !known {
			return fmt.Errorf("unknown field %q", k)
		}
	}
	return nil
}

// number parses the required non-negative integer field key.
func number(kv map[string]string, key string) (int, error) {
	v, ok := kv[key]
	if !ok {
		return 0, fmt.Errorf("missing field %s", key)
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("field %s=%q is not a number: %w", key, v, err)
	}
	return int(n), nil
}
