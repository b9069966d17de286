package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/cmd/toposcope/buildinfo"
)

// newManCmd returns the hidden `toposcope man DIR`: a manual page for
// every command, written into DIR (the .deb and .rpm ship them).
func newManCmd(env *Env) *cobra.Command {
	var date string
	cmd := &cobra.Command{
		Use:    "man DIR",
		Short:  "Write a manual page (section 1) for every command into DIR",
		Hidden: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%w: %s takes one directory, got %q", ErrUsage, cmd.CommandPath(), args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			when := time.Now().UTC()
			if date != "" {
				t, err := time.Parse(time.DateOnly, date)
				if err != nil {
					return fmt.Errorf("%w: --date: %w", ErrUsage, err)
				}
				when = t
			}
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return fmt.Errorf("manual pages: %w", err)
			}
			if err := writeManTree(cmd.Root(), manHeader{date: when, source: "toposcope " + buildinfo.Version()}, args[0]); err != nil {
				return fmt.Errorf("manual pages: %w", err)
			}
			_, err := fmt.Fprintf(env.Stdout, "toposcope: manual pages written to %s\n", args[0])
			return err
		},
	}
	cmd.Flags().StringVar(&date, "date", "", "the date the pages carry, YYYY-MM-DD (default: today)")
	return cmd
}
