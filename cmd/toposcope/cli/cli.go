// Package cli implements the toposcope command line. cmd/toposcope is a
// thin wrapper around Main, so the whole CLI runs in-process in tests.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/cmd/toposcope/agentcmd"
	"github.com/toposcope/toposcope/cmd/toposcope/buildinfo"
	"github.com/toposcope/toposcope/cmd/toposcope/logflags"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/plugins"
)

// Exit codes that scripts can rely on.
const (
	// ExitOK means success.
	ExitOK = 0
	// ExitFailure means discovery or publishing failed.
	ExitFailure = 1
	// ExitUsage means the command line or the configuration is invalid.
	ExitUsage = 2
	// ExitInexpressible means the topology cannot be written for the
	// target (for example the Slurm version); nothing was written.
	ExitInexpressible = 3
	// ExitUncovered means --fail-on-uncovered was given and the output
	// leaves nodes out (the output was still written).
	ExitUncovered = 4
)

// ErrUsage is wrapped by command-line errors (logflags.ErrUsage: one
// sentinel for every command).
var ErrUsage = logflags.ErrUsage

// ErrUncovered is returned when --fail-on-uncovered finds uncovered nodes.
var ErrUncovered = errors.New("nodes not covered by the output")

// Env is what the CLI reads from and writes to.
type Env struct {
	Stdout, Stderr io.Writer
	// Registry lists the providers and engines; app.Registry() if nil.
	Registry *plugins.Registry
	// Geteuid returns the effective user ID; os.Geteuid if nil.
	Geteuid func() int
}

// Main runs the CLI with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Registry == nil {
		env.Registry = app.Registry()
	}
	if env.Geteuid == nil {
		env.Geteuid = os.Geteuid
	}
	root := newRoot(&env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "toposcope: %v\n", err)
	if ex, ok := bounded.Excerpt(err); ok {
		// The operator's own terminal: the command's reason, which an API
		// caller never sees, is shown here (bounded, escaped, redacted).
		fmt.Fprintf(env.Stderr, "toposcope: the command's standard error ended with:\n  %s\n", strings.ReplaceAll(ex, "\n", "\n  "))
	}
	return ExitCode(err)
}

// ExitCode maps an error to the documented exit codes.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, engines.ErrInexpressible):
		return ExitInexpressible // even when a setting says so: the target cannot hold it
	case errors.Is(err, ErrUsage), errors.Is(err, config.ErrInvalid), errors.Is(err, plugins.ErrUnknownPlugin),
		errors.Is(err, config.ErrNoFile), strings.HasPrefix(err.Error(), "unknown command "),
		strings.HasPrefix(err.Error(), "required flag"):
		return ExitUsage
	case errors.Is(err, ErrUncovered):
		return ExitUncovered
	}
	return ExitFailure
}

type rootOptions struct {
	logflags.Flags
}

func newRoot(env *Env) *cobra.Command {
	opts := &rootOptions{}
	root := &cobra.Command{
		Use:   "toposcope",
		Short: "Discover GPU-cluster network topology and publish it to schedulers",
		Long: `toposcope discovers the network topology of a GPU cluster (switch tree,
NVLink domains) from a provider and publishes it through engines, such as
Slurm's topology.conf.

Exit codes: 0 success; 1 discovery or publishing failed; 2 invalid command
line or configuration; 3 the topology cannot be expressed for the target
(nothing written); 4 --fail-on-uncovered and some nodes are not covered.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	// --version prints what `toposcope version` prints. It is a flag of
	// its own, not cobra's Version: a version template would make the
	// linker keep every method of every type (text/template).
	var showVersion bool
	root.Flags().BoolVar(&showVersion, "version", false, "print the version, the commit and the build date (as toposcope version does)")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if showVersion {
			return printVersion(env.Stdout)
		}
		return cmd.Help()
	}
	opts.Register(root.PersistentFlags())
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
			var known []string
			cmd.Flags().VisitAll(func(f *pflag.Flag) { known = append(known, f.Name) })
			if s := config.Suggest(name, known); s != "" {
				return fmt.Errorf("%w: %w; did you mean --%s?", ErrUsage, err, s)
			}
		}
		return fmt.Errorf("%w: %w", ErrUsage, err)
	})
	root.AddCommand(
		newGenerateCmd(env, opts),
		newCheckCmd(env),
		newConfigCmd(env),
		newShowCmd(env, opts),
		newTriggerCmd(env),
		newStatusCmd(env),
		newSnapshotsCmd(env),
		newDiffCmd(env),
		newAcceptCmd(env),
		newServeCmd(env, opts),
		newModelCmd(env),
		newModelsCmd(env),
		newPlaceCmd(env),
		newBudgetsCmd(env),
		newSimulateCmd(env),
		withSub(agentcmd.New("agent", env.Stdout, func() (*slog.Logger, error) { return opts.logger(env.Stderr) }), newAgentTokenCmd(env)),
		newFabricReportCmd(env),
		newStoreCmd(env),
		newProvidersCmd(env),
		newEnginesCmd(env),
		newVersionCmd(env),
		newManCmd(env),
	)
	registerCompletions(root, env.Registry)
	return root
}

// withSub returns cmd with the subcommands added.
func withSub(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	return cmd
}

// logger builds the slog logger the flags ask for.
func (o *rootOptions) logger(w io.Writer) (*slog.Logger, error) { return o.Logger(w) }

func newVersionCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the toposcope version, the commit and the build date (as --version does)",
		Args:  noArgs,
		RunE:  func(*cobra.Command, []string) error { return printVersion(env.Stdout) },
	}
}

// printVersion prints the line of `toposcope version` and `toposcope
// --version`.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, "toposcope", buildinfo.Read().String())
	return err
}

// noArgs rejects positional arguments with a usage error; to a command
// with subcommands, the first argument is a misspelt subcommand, and the
// error suggests the closest ones.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.HasAvailableSubCommands() {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", strings.Join(s, `" or "`))
		}
		return fmt.Errorf("%w: %s", ErrUsage, msg)
	}
	if len(args) > 0 {
		return fmt.Errorf("%w: %s takes no arguments, got %q", ErrUsage, cmd.CommandPath(), args)
	}
	return nil
}

// Version returns the toposcope version (see package buildinfo).
func Version() string { return buildinfo.Version() }
