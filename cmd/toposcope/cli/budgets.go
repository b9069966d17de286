package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/atomicfile"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/slurmaccounts"
)

// formatSacctmgr is the sacctmgr load file, the format of toposcope budgets.
const formatSacctmgr = "sacctmgr"

func newBudgetsCmd(env *Env) *cobra.Command {
	var file, format, cluster, output string
	cmd := &cobra.Command{
		Use:   "budgets",
		Short: "Write the budgets tree for a scheduler's own fair share (Slurm: a sacctmgr load file)",
		Long: `Write the budgets tree (accounts and shares, the placement budgets) in a scheduler's own
terms. --format sacctmgr writes Slurm's account hierarchy as a flat file for
` + "`sacctmgr load file=FILE`" + `: a Cluster line, then a Parent line before each set of
children, each Account with Fairshare from its shares (siblings scaled together to whole
numbers; useParent is Fairshare=parent). Kueue's Cohorts and ClusterQueues are written by
the kueue-budgets engine instead (toposcope generate --engine kueue-budgets --budgets FILE).`,
		Example: `  toposcope budgets --budgets budgets.yaml --cluster tux > accounts.cfg
  sacctmgr -i load file=accounts.cfg`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if format != formatSacctmgr {
				return fmt.Errorf("%w: --format %q: want %s", ErrUsage, format, formatSacctmgr)
			}
			if cluster == "" {
				return fmt.Errorf("%w: --cluster: give the Slurm cluster's name (ClusterName in slurm.conf)", ErrUsage)
			}
			b, err := readYAML(file, placement.ParseBudgets)
			if err != nil {
				return err
			}
			data, err := slurmaccounts.File(cluster, b)
			if err != nil {
				return fmt.Errorf("%w: %s: %w", ErrUsage, file, err)
			}
			if output != "" {
				_, err := atomicfile.Write(output, data, 0o644)
				return err
			}
			_, err = env.Stdout.Write(data)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&file, "budgets", "", "budgets YAML (required)")
	f.StringVar(&format, "format", formatSacctmgr, "output format: sacctmgr")
	f.StringVar(&cluster, "cluster", "", "sacctmgr: the Slurm cluster's name (ClusterName; required)")
	f.StringVarP(&output, "output", "o", "", "file to write (atomically); default standard output")
	_ = cmd.MarkFlagRequired("budgets")
	return cmd
}
