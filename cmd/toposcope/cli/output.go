package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Output formats of -o.
const (
	outTable = "table"
	outWide  = "wide"
	outJSON  = "json"
	outYAML  = "yaml"
)

// outputFlags are -o/--output and --json, its alias for -o json, of every
// command that prints data.
type outputFlags struct {
	format  string
	asJSON  bool
	allowed []string
}

// addOutputFlags registers -o (one of allowed; the first is the default)
// and --json on cmd.
func addOutputFlags(cmd *cobra.Command, help string, allowed ...string) *outputFlags {
	o := &outputFlags{allowed: allowed}
	f := cmd.Flags()
	f.StringVarP(&o.format, "output", "o", allowed[0], "output format: "+strings.Join(allowed, ", ")+help)
	f.BoolVar(&o.asJSON, "json", false, "print JSON (the same as -o json)")
	return o
}

// resolve returns the format asked for, refusing one the command does
// not print and a --json that contradicts -o.
func (o *outputFlags) resolve(cmd *cobra.Command) (string, error) {
	if o.asJSON {
		if cmd.Flags().Changed("output") && o.format != outJSON {
			return "", fmt.Errorf("%w: --json and -o %s exclude each other (--json is -o json)", ErrUsage, o.format)
		}
		return outJSON, nil
	}
	if !slices.Contains(o.allowed, o.format) {
		return "", fmt.Errorf("%w: -o %q: want one of %s", ErrUsage, o.format, strings.Join(o.allowed, ", "))
	}
	return o.format, nil
}

// writeData prints v as indented JSON or as YAML (the same document,
// converted, so that both have the same keys).
func writeData(w io.Writer, format string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	if format == outYAML {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
