package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
)

// This file (with its value converters in topograph_values.go and the
// selector comparison in topograph_selector.go) is the one place that maps
// NVIDIA Topograph v1.0's request vocabulary onto toposcope's: its
// provider and engine names and their parameters. A mapped request then runs on the ordinary path; nothing
// here discovers or renders. A Topograph parameter that names a path, a
// URL or a setting of the operator is only ever compared with what the
// operator configured: it may select that value, never define another.

// compatRule says what one Topograph parameter becomes.
type compatRule struct {
	// to is our key; empty (with no other field) drops the parameter.
	to string
	// conv converts the value; nil keeps it.
	conv func(v any) (any, error)
	// selects, when set, is the operator's key (dotted for a nested one)
	// that the value must match; the parameter is then dropped.
	selects *selection
	// refuse, when set, refuses the parameter with this advice (400).
	refuse string
	// keepIf, with refuse, accepts (and drops) the values it approves:
	// the ones that ask for what toposcope does anyway.
	keepIf func(v any) bool
	// implies, with to, are parameters set (unless the request sets
	// them) when conv converted Topograph's form of the value (a map).
	implies map[string]any
}

// selection is a parameter a request may only select.
type selection struct {
	key   string
	def   any // the operator's value when not configured
	match func(req, op any) bool
}

// compatPlugin is what one Topograph plugin name becomes.
type compatPlugin struct {
	name   string         // ours
	set    map[string]any // set unless the request sets the key
	params map[string]compatRule
	refuse string // the whole plugin is refused with this advice
	// trim is how the provider takes Topograph's trimTiers.
	trim trimRule
}

// trimRule is how a Topograph provider takes trimTiers: as the request's
// TrimTiers, checked as Topograph's cloud providers check it (an integer
// 0-2) or as its simulators and nscale take it (any integer, a negative
// one as 0); or accepted and ignored, as Topograph's test, netq,
// infiniband and dra providers do.
type trimRule int

const (
	trimIgnored trimRule = iota
	trimStrict
	trimAny
)

// topographModels are the Topograph simulation models bundled as
// "topograph-NAME": the same switch trees and domains, in our format.
var topographModels = []string{"medium", "small-tree", "large"}

func simModel(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("must be a string, got %s", jsonType(v))
	}
	base := strings.TrimSuffix(strings.TrimSuffix(path.Base(s), ".yaml"), ".yml")
	if slices.Contains(topographModels, base) {
		return "topograph-" + base, nil
	}
	return base, nil
}

func simRules() map[string]compatRule {
	return map[string]compatRule{
		"modelFileName": {to: "model", conv: simModel},
		"model_path":    {to: "model", conv: simModel},
		"api_error":     {refuse: "toposcope does not inject API errors on request; its cloud providers are tested against emulators that do"},
	}
}

// topographProviders maps Topograph's provider names.
func topographProviders() map[string]compatPlugin {
	sim := compatPlugin{name: "sim", params: simRules()}
	test := compatPlugin{name: "sim", params: simRules()}
	infiniband := map[string]compatRule{
		"accelerator": {refuse: "NVLink domains come from the nvlink provider (merge it with infiniband in the service configuration) or from toposcope-agent reports",
			keepIf: func(v any) bool { m, ok := v.(map[string]any); return ok && m["source"] == "nvidia-smi" }},
	}
	out := map[string]compatPlugin{
		"test":           test,
		"aws":            {name: "aws"},
		"gcp":            {name: "gcp", params: map[string]compatRule{"project_id": {selects: &selection{key: "project"}}}},
		"oci":            {name: "oci"},
		"lambdai":        {name: "lambda", params: map[string]compatRule{"url": {selects: &selection{key: "url"}}}},
		"nscale":         {name: "nscale", params: map[string]compatRule{"radarApiUrl": {selects: &selection{key: "url"}}, "instanceApiUrl": {selects: &selection{key: "instanceURL"}}}},
		"netq":           {name: "netq", params: map[string]compatRule{"apiUrl": {selects: &selection{key: "url"}}}},
		"infiniband-bm":  {name: "infiniband", params: infiniband},
		"infiniband-k8s": {name: "agents", params: infiniband},
		"dra": {name: "k8s-labels", set: map[string]any{"tiers": "none", "domainLabel": "nvidia.com/gpu.clique"}, params: map[string]compatRule{
			"nodeSelector": {to: "nodeSelector", conv: labelSelector},
			"accelerator":  {to: "domainLabel", conv: acceleratorLabel},
		}},
		"nebius":   {name: "nebius"},
		"oci-imds": {name: "agents", trim: trimStrict},
		"dsx":      {refuse: "Topograph's dsx provider is not implemented either; use the sim provider"},
	}
	sim.trim = trimAny
	for _, n := range []string{"aws-sim", "gcp-sim", "oci-sim", "nebius-sim", "nscale-sim", "lambdai-sim", "dsx-sim"} {
		out[n] = sim
	}
	for _, n := range []string{"aws", "gcp", "oci", "lambdai", "nebius"} {
		p := out[n]
		p.trim = trimStrict
		out[n] = p
	}
	nscale := out["nscale"]
	nscale.trim = trimAny
	out["nscale"] = nscale
	return out
}

// slurmRules are the Topograph parameters of its slurm engine.
func slurmRules() map[string]compatRule {
	return map[string]compatRule{
		"topologyConfigPath": {selects: &selection{key: "output", def: "", match: samePath}},
		"reconfigure":        {selects: &selection{key: "reconfigure", def: false}},
		// Topograph writes its topologies as topology.yaml.
		"topologies":  {to: "topologies", conv: slurmTopologies, implies: map[string]any{"plugin": "topology/yaml"}},
		"blockName":   {to: "blockName"},
		"block_sizes": {refuse: "use blockSizes, a list of integers"},
	}
}

// topographEngines maps Topograph's engine names.
func topographEngines() map[string]compatPlugin {
	slinky := map[string]compatRule{
		"namespace":             {selects: &selection{key: "namespace", def: "slurm"}},
		"topologyConfigmapName": {selects: &selection{key: "configMap", def: "toposcope-topology"}},
		"topologyConfigPath": {selects: &selection{key: "slurm.plugin", def: "topology/yaml", match: func(req, op any) bool {
			key := "topology.conf"
			if op == "topology/yaml" {
				key = "topology.yaml"
			}
			return req == key
		}}},
		"plugin":          {selects: &selection{key: "slurm.plugin", def: "topology/yaml"}},
		"blockSizes":      {selects: &selection{key: "slurm.blockSizes", def: nil}},
		"blockName":       {selects: &selection{key: "slurm.blockName", def: nil}},
		"useDynamicNodes": {selects: &selection{key: "nodeAnnotations", def: true}},
		// The slurmd pods whose Slurm names the file uses (any form of a
		// label selector; compared once made canonical).
		"podSelector":  {selects: &selection{key: "podSelector", def: "app.kubernetes.io/component=worker", match: sameSelector}},
		"nodeSelector": {to: "nodeSelector", conv: labelSelector},
		"configUpdateMode": {selects: &selection{key: "configUpdateMode", def: "full", match: func(req, op any) bool {
			return req == op || (req == "" && op == "full")
		}}},
		"acceleratorDomainSourceLabel": {to: "domainSourceLabel"},
		// The named topologies (their partitions read as the operator's
		// slurm.slurmrestd says) are the operator's slurm.topologies.
		"topologies": {selects: &selection{key: "slurm.topologies", def: nil, match: sameTopologies}},
	}
	return map[string]compatPlugin{
		"slurm":  {name: "slurm", params: slurmRules()},
		"slinky": {name: "slinky", params: slinky},
		"k8s": {name: "k8s-labels", set: map[string]any{"preset": "topograph-v1"}, params: map[string]compatRule{
			"fabricLabels":                 {to: "tierLabels"},
			"acceleratorLabel":             {to: "domainLabel"},
			"nodeSelector":                 {to: "nodeSelector", conv: labelSelector},
			"acceleratorDomainSourceLabel": {to: "domainSourceLabel"},
		}},
		"nfd": {name: "nfd", params: map[string]compatRule{
			"nodeSelector":                 {to: "nodeSelector", conv: labelSelector},
			"cleanup":                      {selects: &selection{key: "cleanup", def: true}},
			"acceleratorDomainSourceLabel": {to: "domainSourceLabel"},
		}},
		"graph": {name: "instances", params: map[string]compatRule{
			"topologyConfigPath": {selects: &selection{key: "output", def: "", match: samePath}},
		}},
	}
}

// fromTopograph rewrites req's Topograph names and parameters into
// ours, checking the ones a request may only select against the
// operator's configuration.
func (r *Requests) fromTopograph(req *GenerateRequest) error {
	fromTest := req.Provider.Name == "test"
	if p, ok := topographProviders()[req.Provider.Name]; ok {
		var op *config.Plugin
		if p.name == r.deps.Provider.Name {
			op = &r.deps.Provider
		}
		if err := takeTrimTiers(req, p.trim); err != nil {
			return err
		}
		if fromTest {
			if err := takeSimulation(req); err != nil {
				return err
			}
		}
		if err := mapPlugin(&req.Provider, "provider", p, op); err != nil {
			return err
		}
		if p.name == "aws" {
			req.Creds.rename("token", "sessionToken")
		}
	}
	if e, ok := topographEngines()[req.Engine.Name]; ok {
		if e.name == "instances" && fromTest {
			// Topograph's test provider exports no domain labels.
			e.set = map[string]any{"domainLabels": false}
		}
		if err := mapPlugin(&req.Engine, "engine", e, r.configuredEngine(e.name)); err != nil {
			return err
		}
	}
	return nil
}

// mapPlugin applies one compatPlugin to a request's plugin; op is the
// operator's entry of the mapped plugin, or nil.
func mapPlugin(pl *Plugin, field string, c compatPlugin, op *config.Plugin) error {
	if c.refuse != "" {
		return badRequest(field+".name", "Topograph's %q is not supported: %s", pl.Name, c.refuse)
	}
	params := map[string]any{}
	if len(pl.Params) > 0 {
		dec := json.NewDecoder(bytes.NewReader(pl.Params))
		dec.UseNumber()
		if err := dec.Decode(&params); err != nil {
			return badRequest(field+".params", "must be an object")
		}
	}
	out, implied := map[string]any{}, map[string]any{}
	for _, k := range sortedKeys(params) {
		v, f := params[k], field+".params."+k
		rule, ok := c.params[k]
		switch {
		case !ok:
			out[k] = v
		case rule.refuse != "":
			if rule.keepIf == nil || !rule.keepIf(v) {
				return badRequest(f, "not supported: %s", rule.refuse)
			}
		case rule.selects != nil:
			if err := rule.selects.check(f, k, v, op); err != nil {
				return err
			}
		case rule.to != "":
			if _, topographForm := v.(map[string]any); topographForm {
				maps.Copy(implied, rule.implies)
			}
			if rule.conv != nil {
				var err error
				if v, err = rule.conv(v); err != nil {
					return badRequest(f, "%w", err)
				}
			}
			if _, dup := params[rule.to]; dup && rule.to != k {
				return badRequest(f, "is Topograph's name for %s; give one of them", rule.to)
			}
			out[rule.to] = v
		}
	}
	for k, v := range c.set {
		_, requested := out[k]
		if _, configured := operatorValue(op, k); !requested && !configured {
			out[k] = v // what Topograph's plugin does, unless the operator chose
		}
	}
	for k, v := range implied {
		if _, requested := out[k]; !requested {
			out[k] = v
		}
	}
	pl.Name = c.name
	pl.Params = nil
	if len(out) > 0 {
		canon, err := json.Marshal(out)
		if err != nil {
			return badRequest(field+".params", "cannot be encoded: %w", err)
		}
		pl.Params = canon
	}
	return nil
}

// check accepts v when it matches the operator's value of s.key.
func (s *selection) check(field, key string, v any, op *config.Plugin) error {
	want, ok := operatorValue(op, s.key)
	if !ok {
		want = s.def
	}
	match := s.match
	if match == nil {
		match = func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
	}
	if v == nil || match(v, want) {
		return nil
	}
	where := "this service's configuration does not configure the plugin"
	if op != nil {
		where = fmt.Sprintf("it differs from params.%s of the service's %s entry", s.key, op.Name)
	}
	return &RequestError{Field: field, Err: fmt.Errorf("%w: Topograph's %s may only select the value the operator configured, and %s", config.ErrOperatorOnly, key, where)}
}

// operatorValue returns the value at the dotted key of the operator's
// parameters.
func operatorValue(op *config.Plugin, key string) (any, bool) {
	if op == nil || op.Params.Kind == 0 {
		return nil, false
	}
	var cur any
	if err := op.Params.Decode(&cur); err != nil {
		return nil, false
	}
	for _, k := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// samePath matches a requested path with the operator's: equal, or a
// bare file name equal to the operator's file name.
func samePath(req, op any) bool {
	r, o := fmt.Sprint(req), fmt.Sprint(op)
	return r == o || (o != "" && !strings.Contains(r, "/") && r == path.Base(o))
}

// rename moves a credential key.
func (c *Credentials) rename(from, to string) {
	if v, ok := c.values[from]; ok {
		if _, taken := c.values[to]; !taken {
			c.values[to] = v
		}
		delete(c.values, from)
	}
}
