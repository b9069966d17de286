package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
)

// paramRow is one parameter of a plugin, as `--params` lists it.
type paramRow struct {
	// Key is the parameter's key; a key of a nested mapping is dotted.
	Key string `json:"key"`
	// Type is the value's type in words: string, integer, boolean,
	// number, duration, list of T, one of a|b, mapping, command.
	Type string `json:"type"`
	// Default is the default value, or nil for none.
	Default any `json:"default,omitempty"`
	// Request is true when a REST request may set the key.
	Request bool `json:"request"`
	// Path is "read" or "write" when the key names a file.
	Path string `json:"path,omitempty"`
	// Description is the key's meaning.
	Description string `json:"description,omitempty"`
}

// paramRows lists the parameters of a plugin from its schema
// (plugins.ParamsSchema), sorted by key; nested mappings are listed key
// by key under a dotted prefix.
func paramRows(spec config.ParamSpec) []paramRow {
	var rows []paramRow
	var walk func(prefix string, s config.Schema)
	walk = func(prefix string, s config.Schema) {
		props, _ := s["properties"].(config.Schema)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := props[k].(config.Schema)
			req, _ := p[config.KeyRequest].(bool)
			path, _ := p[config.KeyPath].(string)
			doc, _ := p["description"].(string)
			rows = append(rows, paramRow{Key: prefix + k, Type: typeWords(p), Default: p["default"], Request: req, Path: path, Description: doc})
			if _, nested := p["properties"]; nested {
				walk(prefix+k+".", p)
			}
		}
	}
	walk("", plugins.ParamsSchema(spec))
	return rows
}

// typeWords says a schema's type in words.
func typeWords(s config.Schema) string {
	if enum, ok := s["enum"].([]any); ok {
		vals := make([]string, len(enum))
		for i, e := range enum {
			vals[i] = fmt.Sprint(e)
		}
		return "one of " + strings.Join(vals, "|")
	}
	if _, ok := s["pattern"]; ok {
		return "duration"
	}
	if s[config.KeyType] == "command" {
		return "command (a list of arguments, or one string split at spaces)"
	}
	switch t := s["type"].(type) {
	case string:
		switch t {
		case "object":
			return "mapping"
		case "array":
			return "list of " + typeWords(s["items"].(config.Schema))
		}
		return t
	case []any:
		if slices.Contains(t, any("array")) {
			return "list of " + typeWords(s["items"].(config.Schema)) + " (or a,b,…)"
		}
	}
	return "any"
}

// writeParams prints the parameter table of one plugin.
func writeParams(w io.Writer, kind, name string, rows []paramRow) error {
	fmt.Fprintf(w, "Parameters of the %s %s (set with --%s-param KEY=VALUE, or under params: in the configuration file).\n", kind, name, kind)
	fmt.Fprintf(w, "REQUEST yes: a REST request may set the key; every other key is the operator's.\n\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTYPE\tDEFAULT\tREQUEST\tDESCRIPTION")
	for _, r := range rows {
		def := "-"
		if r.Default != nil {
			b, _ := json.Marshal(r.Default)
			def = string(b)
		}
		req := "-"
		if r.Request {
			req = "yes"
		}
		doc := r.Description
		if r.Path != "" {
			doc = "[file, " + r.Path + "] " + doc
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Key, r.Type, def, req, doc)
	}
	return tw.Flush()
}

func newProvidersCmd(env *Env) *cobra.Command {
	return newPluginListCmd(env, "provider", "List the registered topology providers, or one provider's parameters",
		func() []plugins.Choice { return env.Registry.ProviderChoices() })
}

func newEnginesCmd(env *Env) *cobra.Command {
	return newPluginListCmd(env, "engine", "List the registered publishing engines, or one engine's parameters",
		func() []plugins.Choice { return env.Registry.EngineChoices() })
}

// pluginRow is one plugin, as the list prints it.
type pluginRow struct {
	// Name is the plugin's name.
	Name string `json:"name"`
	// Summary says what it does.
	Summary string `json:"summary"`
	// Keys are its parameter keys.
	Keys []string `json:"keys"`
	// RequestKeys are the keys a REST request may set.
	RequestKeys []string `json:"requestKeys"`
}

// newPluginListCmd prints a NAME/DESCRIPTION table of the plugins of a
// kind, or with --params NAME the parameters of one.
func newPluginListCmd(env *Env, kind, short string, list func() []plugins.Choice) *cobra.Command {
	var params string
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   kind + "s",
		Short: short,
		Example: fmt.Sprintf(`  toposcope %[1]ss
  toposcope %[1]ss -o wide
  toposcope %[1]ss --params %[2]s`, kind, map[string]string{"provider": "ufm", "engine": "slurm"}[kind]),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := out.resolve(cmd)
			if err != nil {
				return err
			}
			choices := list()
			if params != "" {
				c, err := plugins.Find(kind, choices, params, func(c plugins.Choice) string { return c.Name })
				if err != nil {
					return fmt.Errorf("--params: %w", err)
				}
				if format == outJSON || format == outYAML {
					return writeData(env.Stdout, format, paramRows(c.Params))
				}
				return writeParams(env.Stdout, kind, c.Name, paramRows(c.Params))
			}
			rows := make([]pluginRow, 0, len(choices))
			for _, c := range choices {
				rows = append(rows, pluginRow{Name: c.Name, Summary: c.Summary, Keys: nonNil(c.Params.Keys), RequestKeys: nonNil(c.Params.RequestKeys)})
			}
			if format == outJSON || format == outYAML {
				return writeData(env.Stdout, format, rows)
			}
			w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			if format == outWide {
				fmt.Fprintln(w, "NAME\tREQUEST KEYS\tDESCRIPTION")
			} else {
				fmt.Fprintln(w, "NAME\tDESCRIPTION")
			}
			for _, r := range rows {
				if format == outWide {
					req := strings.Join(r.RequestKeys, ",")
					if req == "" {
						req = "-"
					}
					fmt.Fprintf(w, "%s\t%s\t%s\n", r.Name, req, r.Summary)
					continue
				}
				fmt.Fprintf(w, "%s\t%s\n", r.Name, r.Summary)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&params, "params", "", "list the parameters of this "+kind+": key, type, default, whether a request may set it, meaning")
	out = addOutputFlags(cmd, " (wide adds the keys a REST request may set)", outTable, outWide, outJSON, outYAML)
	return cmd
}

// nonNil is s, or an empty list for nil (JSON [] rather than null).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
