package neighbor

import (
	"encoding/json"
	"fmt"
	"sort"
)

// plain json's shapes: `lldpcli -f json` keys an interface by its name
// and a chassis by its system name (when it has one), and makes a list
// only of what there are several of.
type (
	plainIface struct {
		Via     string          `json:"via"`
		Chassis json.RawMessage `json:"chassis"`
		Port    plainPort       `json:"port"`
	}
	plainChassis struct {
		ID         *typedValue     `json:"id"`
		MgmtIP     json.RawMessage `json:"mgmt-ip"`
		Capability json.RawMessage `json:"capability"`
	}
	plainPort struct {
		ID    *typedValue `json:"id"`
		Descr string      `json:"descr"`
	}
)

// plainInterfaces reads plain json's "lldp" object into json0's shape.
func plainInterfaces(lldp []byte) ([]ifaceJSON, error) {
	var top struct {
		Interface json.RawMessage `json:"interface"`
	}
	if err := json.Unmarshal(lldp, &top); err != nil {
		return nil, fmt.Errorf("%w: -f json: %w", ErrFormat, err)
	}
	if len(top.Interface) == 0 {
		return nil, nil // no neighbors
	}
	byName, err := oneOrMany[map[string]plainIface](top.Interface)
	if err != nil {
		return nil, fmt.Errorf("%w: -f json: interface: %w", ErrFormat, err)
	}
	var out []ifaceJSON
	for _, m := range byName {
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ifc, err := plainIface2json0(name, m[name])
			if err != nil {
				return nil, fmt.Errorf("%w: -f json: interface %q: %w", ErrFormat, clip(name), err)
			}
			out = append(out, ifc)
		}
	}
	return out, nil
}

// plainIface2json0 turns one interface into json0's shape. Its chassis is
// {"<system name>": {...}}, or the chassis itself when it has no name.
func plainIface2json0(name string, p plainIface) (ifaceJSON, error) {
	ifc := ifaceJSON{Name: name, Via: p.Via}
	var named map[string]json.RawMessage
	if err := json.Unmarshal(p.Chassis, &named); err != nil && len(p.Chassis) > 0 {
		return ifc, fmt.Errorf("chassis: %w", err)
	}
	sysName, raw := "", json.RawMessage(p.Chassis)
	if _, unnamed := named["id"]; !unnamed && len(named) == 1 {
		for k, v := range named {
			sysName, raw = k, v
		}
	}
	var c plainChassis
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &c); err != nil {
			return ifc, fmt.Errorf("chassis: %w", err)
		}
	}
	cj := chassisJSON{}
	if c.ID != nil {
		cj.ID = []typedValue{*c.ID}
	}
	if sysName != "" {
		cj.Name = []typedValue{{Value: sysName}}
	}
	if len(c.MgmtIP) > 0 {
		ips, err := oneOrMany[string](c.MgmtIP)
		if err != nil {
			return ifc, fmt.Errorf("chassis mgmt-ip: %w", err)
		}
		for _, ip := range ips {
			cj.MgmtIP = append(cj.MgmtIP, typedValue{Value: ip})
		}
	}
	if len(c.Capability) > 0 {
		caps, err := oneOrMany[capability](c.Capability)
		if err != nil {
			return ifc, fmt.Errorf("chassis capability: %w", err)
		}
		cj.Capability = caps
	}
	ifc.Chassis = []chassisJSON{cj}
	pj := portJSON{}
	if p.Port.ID != nil {
		pj.ID = []typedValue{*p.Port.ID}
	}
	if p.Port.Descr != "" {
		pj.Descr = []typedValue{{Value: p.Port.Descr}}
	}
	ifc.Port = []portJSON{pj}
	return ifc, nil
}

// oneOrMany decodes a T, or a list of them.
func oneOrMany[T any](raw json.RawMessage) ([]T, error) {
	var many []T
	if err := json.Unmarshal(raw, &many); err == nil {
		return many, nil
	}
	var one T
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, err
	}
	return []T{one}, nil
}
