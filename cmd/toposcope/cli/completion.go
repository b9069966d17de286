package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers/sim"
)

// completion is a value the shell offers, with its description.
type completion struct{ value, about string }

// registerCompletions offers, in every command of the tree under cmd that
// has the flag, the values of --model (bundled models, then files),
// --provider and --engine (the registry's plugins) and --plugin (Slurm's
// topology plugins).
func registerCompletions(cmd *cobra.Command, reg *plugins.Registry) {
	values := map[string]func() ([]completion, cobra.ShellCompDirective){
		"model": func() ([]completion, cobra.ShellCompDirective) {
			var out []completion
			for _, m := range sim.Bundled() {
				out = append(out, completion{m.Name, m.Description})
			}
			return out, cobra.ShellCompDirectiveDefault // a model file is a path
		},
		"provider": func() ([]completion, cobra.ShellCompDirective) {
			var out []completion
			for _, f := range reg.Providers() {
				out = append(out, completion{f.Name, f.Summary})
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		"engine": func() ([]completion, cobra.ShellCompDirective) {
			var out []completion
			for _, f := range reg.Engines() {
				out = append(out, completion{f.Name, f.Summary})
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		"plugin": func() ([]completion, cobra.ShellCompDirective) {
			return []completion{{slurm.PluginTree, "switch tree"}, {slurm.PluginBlock, "NVLink domains as blocks (Slurm 23.11+)"},
				{slurm.PluginYAML, "topology.yaml, one topology per partition (Slurm 25.05+)"}}, cobra.ShellCompDirectiveNoFileComp
		},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for flag, list := range values {
			if c.LocalNonPersistentFlags().Lookup(flag) == nil {
				continue
			}
			_ = c.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
				all, directive := list()
				out := make([]string, 0, len(all))
				for _, v := range all {
					if strings.HasPrefix(v.value, prefix) {
						out = append(out, v.value+"\t"+firstLine(v.about))
					}
				}
				return out, directive
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
}

// firstLine is the first sentence of the first line of s, for a
// completion's description.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if i := strings.Index(line, ". "); i >= 0 {
		line = line[:i+1]
	}
	return line
}
