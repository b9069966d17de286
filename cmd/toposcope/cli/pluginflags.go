package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
)

// pluginFlag is a command-line flag that plugins declare
// (config.Flagged), with the flag as each provider and engine that takes
// it declares it.
type pluginFlag struct {
	name    string
	isBool  bool
	usage   string
	byName  [2]map[string]config.Flag // providers, engines
	takenBy [2][]string               // their names, in registry order
}

// side is which of the two chosen plugins a flag sets.
type side int

const (
	providerSide side = iota
	engineSide
)

// String is "provider" or "engine".
func (s side) String() string {
	if s == providerSide {
		return "provider"
	}
	return "engine"
}

// declaredFlags collects the flags that the registry's providers and
// engines declare. A flag declared twice must be declared alike: a
// switch, or a flag that takes a value.
func declaredFlags(reg *plugins.Registry) ([]*pluginFlag, error) {
	var out []*pluginFlag
	add := func(s side, plugin string, cfg any) error {
		for _, f := range config.FlagsOf(cfg) {
			i := slices.IndexFunc(out, func(p *pluginFlag) bool { return p.name == f.Name })
			if i < 0 {
				out = append(out, &pluginFlag{name: f.Name, isBool: f.Bool, usage: f.Usage})
				i = len(out) - 1
			}
			p := out[i]
			if p.isBool != f.Bool {
				return fmt.Errorf("--%s: %s %s declares it unlike the other plugins that take it (a switch or not)", f.Name, s, plugin)
			}
			if p.byName[s] == nil {
				p.byName[s] = map[string]config.Flag{}
			}
			p.byName[s][plugin] = f
			p.takenBy[s] = append(p.takenBy[s], plugin)
		}
		return nil
	}
	for _, f := range reg.Providers() {
		if err := add(providerSide, f.Name, f.Params.Defaults); err != nil {
			return nil, err
		}
	}
	for _, f := range reg.Engines() {
		if err := add(engineSide, f.Name, f.Params.Defaults); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// definePluginFlags defines on fs the flags that the registry's plugins
// on the given sides declare, for plugins to apply; an error in the
// declarations is kept for plugins to report.
func (o *generateOptions) definePluginFlags(fs *pflag.FlagSet, sides ...side) {
	all, err := declaredFlags(o.registry)
	if err != nil {
		o.flagsErr = err
		return
	}
	o.pluginFlags = nil
	for _, p := range all {
		var kept pluginFlag
		for _, s := range sides {
			kept.byName[s], kept.takenBy[s] = p.byName[s], p.takenBy[s]
		}
		if len(kept.takenBy[providerSide])+len(kept.takenBy[engineSide]) > 0 {
			kept.name, kept.isBool, kept.usage = p.name, p.isBool, p.usage
			o.pluginFlags = append(o.pluginFlags, &kept)
		}
	}
	o.flagsErr = addPluginFlags(fs, o.pluginFlags)
}

// addPluginFlags defines flags on fs, the help of each naming the
// plugins that take it. A name fs already has is an error.
func addPluginFlags(fs *pflag.FlagSet, flags []*pluginFlag) error {
	for _, p := range flags {
		if fs.Lookup(p.name) != nil {
			return fmt.Errorf("--%s is declared by %s and is also a flag of the command", p.name, p.owners())
		}
		usage := p.usage + " (" + p.owners() + ")"
		if p.isBool {
			fs.Bool(p.name, false, usage)
		} else {
			fs.String(p.name, "", usage)
		}
	}
	return nil
}

// owners names the plugins that take the flag: "provider sim",
// "engines slurm, instances".
func (p *pluginFlag) owners() string {
	var parts []string
	for s, names := range p.takenBy {
		switch len(names) {
		case 0:
		case 1:
			parts = append(parts, side(s).String()+" "+names[0])
		default:
			parts = append(parts, side(s).String()+"s "+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// applyPluginFlags sets, from the plugin flags given on the command line,
// the parameters of the provider pref and the engine eref that declare
// them. A flag that neither declares is a usage error naming the flag and
// the plugin.
func applyPluginFlags(fs *pflag.FlagSet, flags []*pluginFlag, pref, eref *config.Plugin) error {
	chosen := [2]*config.Plugin{pref, eref}
	for _, p := range flags {
		if !fs.Changed(p.name) {
			continue
		}
		taken := false
		for s, plugin := range chosen {
			f, ok := p.byName[s][plugin.Name]
			if !ok {
				continue
			}
			taken = true
			if value, set := flagValue(fs, f); set {
				config.SetParam(&plugin.Params, f.Key, value)
			}
		}
		if !taken {
			return fmt.Errorf("%w: --%s: %s does not take this flag; it is for %s", ErrUsage, p.name, p.notTakenBy(pref.Name, eref.Name), p.owners())
		}
	}
	return nil
}

// notTakenBy names the chosen plugins on the flag's sides.
func (p *pluginFlag) notTakenBy(provider, engine string) string {
	var parts []string
	for s, name := range [2]string{provider, engine} {
		if len(p.takenBy[s]) > 0 {
			parts = append(parts, side(s).String()+" "+name)
		}
	}
	return strings.Join(parts, " or ")
}

// flagValue is the parameter value that the given flag f sets, and
// whether it sets one (a switch with a Value sets it only when on).
func flagValue(fs *pflag.FlagSet, f config.Flag) (string, bool) {
	if !f.Bool {
		return fs.Lookup(f.Name).Value.String(), true
	}
	on, _ := fs.GetBool(f.Name)
	if f.Value != "" {
		return f.Value, on
	}
	return strconv.FormatBool(on), true
}
