package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/placement"
)

// placeOptions are the flags of toposcope place.
type placeOptions struct {
	model, ledger, budgets, now, mode, ranking string
	req                                        placement.Request
	within                                     string
	horizon                                    time.Duration
	out                                        *outputFlags
}

func newPlaceCmd(env *Env) *cobra.Command {
	o := &placeOptions{}
	cmd := &cobra.Command{
		Use:   "place",
		Short: "Rank and explain placements of a job on a simulation model (fair-share aware)",
		Example: `  toposcope place --model nvl72 --account A --gpus 64
  toposcope place --model small-tree --ledger ledger.yaml --budgets budgets.yaml --account a --gpus 64 --min-runtime 1h -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := o.out.resolve(cmd)
			if err != nil {
				return err
			}
			return runPlace(cmd.Context(), env, o, format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "small-tree", "bundled model name or model file")
	f.StringVar(&o.ledger, "ledger", "", "usage ledger YAML (default: an empty cluster)")
	f.StringVar(&o.budgets, "budgets", "", "budgets YAML (default: every account has an equal share)")
	f.StringVar(&o.req.Account, "account", "", "account (budget) of the job (required)")
	f.IntVar(&o.req.GPUs, "gpus", 0, "total GPUs")
	f.IntVar(&o.req.Nodes, "nodes", 0, "whole-node shape: number of nodes (with --gpus-per-node)")
	f.IntVar(&o.req.GPUsPerNode, "gpus-per-node", 0, "whole-node shape: GPUs on each node")
	f.DurationVar(&o.req.Duration, "duration", time.Hour, "expected runtime")
	f.DurationVar(&o.req.MinRuntime, "min-runtime", 0, "protected minimum runtime; 0 makes the job unallocated")
	f.BoolVar(&o.req.Debug, "debug", false, "debug job: min runtime capped at 15 min")
	f.StringVar(&o.within, "within", "", "compactness scope: domain or leaf")
	f.BoolVar(&o.req.Required, "required", false, "make --within a hard constraint")
	f.StringVar(&o.mode, "mode", string(placement.ModeFairTree), "standing mode: fairtree, classic or window")
	f.StringVar(&o.ranking, "ranking", string(placement.RankLexicographic), "ranking: lexicographic or weighted")
	f.DurationVar(&o.horizon, "horizon", placement.DefaultConfig().Horizon, "horizon of the reclaimable-within class")
	f.StringVar(&o.now, "now", "", "evaluation time, RFC 3339 (default: the current time)")
	o.out = addOutputFlags(cmd, " (wide is the table, which has every column)", outTable, outWide, outJSON, outYAML)
	_ = cmd.MarkFlagRequired("account")
	return cmd
}

func runPlace(ctx context.Context, env *Env, o *placeOptions, format string) error {
	now := time.Now().UTC()
	if o.now != "" {
		t, err := time.Parse(time.RFC3339, o.now)
		if err != nil {
			return fmt.Errorf("%w: --now: %w", ErrUsage, err)
		}
		now = t
	}
	cfg := placement.DefaultConfig()
	cfg.Mode, cfg.Ranking, cfg.Horizon = placement.Mode(o.mode), placement.Ranking(o.ranking), o.horizon
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	o.req.Within = placement.Scope(o.within)
	g, err := modelGraph(ctx, env, o.model)
	if err != nil {
		return err
	}
	ledger := &placement.Ledger{}
	if o.ledger != "" {
		if ledger, err = readYAML(o.ledger, placement.ParseLedger); err != nil {
			return err
		}
	}
	var tree *placement.Tree
	if o.budgets != "" {
		b, err := readYAML(o.budgets, placement.ParseBudgets)
		if err != nil {
			return err
		}
		if tree, err = placement.NewTree(b); err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
	} else {
		tree = placement.EqualTree(append(ledger.Accounts(), o.req.Account))
	}
	cl, err := placement.NewCluster(g, ledger.Records, now)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	st, err := placement.Compute(tree, ledger.Records, now, cl.GPUs(), cfg)
	if err != nil {
		return err
	}
	res, err := placement.Place(cl, st, o.req, cfg)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if format == outJSON || format == outYAML {
		return writeData(env.Stdout, format, res)
	}
	return placement.WriteTable(env.Stdout, res)
}

// readYAML reads a file and parses it, mapping errors to usage errors.
func readYAML[T any](path string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	v, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("%w: %s: %w", ErrUsage, path, err)
	}
	return v, nil
}
