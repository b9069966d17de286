package cli

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/atomicfile"
	"github.com/toposcope/toposcope/providers/sim"
)

func newModelCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Work with simulation cluster models",
		Args:  noArgs,
		// A misspelt subcommand within 2 edits is suggested (see noArgs).
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("%w: %s needs a subcommand (generate)", ErrUsage, cmd.CommandPath())
		},
	}
	cmd.AddCommand(newModelGenerateCmd(env))
	return cmd
}

func newModelGenerateCmd(env *Env) *cobra.Command {
	var (
		opts        sim.GenerateOptions
		shape       string
		output      string
		progressOut func() io.Writer
	)
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write a generated cluster model with exactly --nodes nodes",
		Example: `  toposcope model generate --shape fat-tree --nodes 100000 --domain-size 18 --output fat-100k.yaml
  toposcope model generate --shape nvl72 --nodes 1152`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			opts.Shape = sim.Shape(shape)
			data, err := during(progressOut(), "generate "+strconv.Itoa(opts.Nodes)+" nodes", func() ([]byte, error) { return sim.Generate(opts) })
			if err != nil {
				return fmt.Errorf("%w: %w", ErrUsage, err)
			}
			if output == "" {
				_, err = env.Stdout.Write(data)
				return err
			}
			_, err = atomicfile.Write(output, data, 0o644)
			return err
		},
	}
	progressOut = progressFlag(cmd, env)
	f := cmd.Flags()
	f.StringVar(&shape, "shape", "fat-tree", "fabric shape: fat-tree or nvl72")
	f.IntVar(&opts.Nodes, "nodes", 0, "exact number of nodes (required)")
	f.IntVar(&opts.NodesPerLeaf, "nodes-per-leaf", 0, "nodes under each leaf switch (0: the shape's default)")
	f.IntVar(&opts.LeavesPerSpine, "leaves-per-spine", 0, "leaf switches under each spine (0: the shape's default)")
	f.IntVar(&opts.SpinesPerCore, "spines-per-core", 0, "spine switches under each core switch (0: one core above all spines)")
	f.IntVar(&opts.DomainSize, "domain-size", 0, "nodes per NVLink domain (0: the shape's default)")
	f.StringVar(&opts.Prefix, "prefix", "", "node name prefix (default: the shape's)")
	f.StringVarP(&output, "output", "o", "", "file to write (atomically); default standard output")
	_ = cmd.MarkFlagRequired("nodes")
	return cmd
}

func newModelsCmd(env *Env) *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the bundled simulation models",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := out.resolve(cmd)
			if err != nil {
				return err
			}
			models := sim.Bundled()
			if format == outJSON || format == outYAML {
				return writeData(env.Stdout, format, models)
			}
			w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tNODES\tDESCRIPTION")
			for _, m := range models {
				fmt.Fprintf(w, "%s\t%d\t%s\n", m.Name, m.Nodes, m.Description)
			}
			return w.Flush()
		},
	}
	out = addOutputFlags(cmd, " (wide is the table, which has every column)", outTable, outWide, outJSON, outYAML)
	return cmd
}
