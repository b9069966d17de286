package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/providers"
)

// newCheckCmd returns `toposcope check`: validate a configuration file
// the way `serve` does when it starts (keys, types, values, paths roots)
// and build its provider, engines and ledger sources, without discovering,
// publishing or opening the store. Every problem is reported in one run.
func newCheckCmd(env *Env) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:     "check",
		Short:   "Validate a configuration file and build its plugins, without running them",
		Example: `  toposcope check --config /etc/toposcope/config.yaml`,
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			return runCheck(env, path)
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "YAML configuration file (the service's format)")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// runCheck reports every problem of the file at path in one run: those of
// the file itself, then those of each plugin's parameters (a plugin whose
// name is unknown is reported and skipped), at most config.MaxReported.
func runCheck(env *Env, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w: %w", config.ErrNoFile, err)
	}
	cfg, err := config.ParseAll(data)
	if cfg == nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	var probs []error
	probs = append(probs, problems(err)...)
	if cfg.Provider.Name == "" { // as serve does
		cfg.Provider = app.DefaultProvider()
	}
	probs = append(probs, problems(env.Registry.CheckPaths(cfg))...)
	quiet := slog.New(slog.DiscardHandler)
	if _, err := env.Registry.NewProvider(cfg.Provider.Name, "provider", &cfg.Provider.Params, providers.Deps{Logger: quiet}); err != nil {
		probs = append(probs, problems(err)...)
	}
	names := make([]string, 0, len(cfg.Engines))
	for i := range cfg.Engines {
		e := &cfg.Engines[i]
		if _, err := env.Registry.NewEngine(e.Name, fmt.Sprintf("engines[%d]", i), &e.Params, engines.Deps{Logger: quiet}); err != nil {
			probs = append(probs, problems(err)...)
		}
		names = append(names, e.Name)
	}
	for i := range cfg.Placement.Sources {
		s := &cfg.Placement.Sources[i]
		if _, err := env.Registry.NewLedgerSource(s.Name, fmt.Sprintf("placement.sources[%d]", i), &s.Params, placement.SourceDeps{Logger: quiet}); err != nil {
			probs = append(probs, problems(err)...)
		}
	}
	if len(probs) > 0 {
		return newProblemList(path, probs)
	}
	if len(names) == 0 {
		names = append(names, "none")
	}
	fmt.Fprintf(env.Stdout, "%s: valid (provider %s; engines %s)\n", path, cfg.Provider.Name, strings.Join(names, ", "))
	return nil
}

// problemList is every problem check found in one file, one a line.
type problemList struct {
	path string
	errs []error
	// more counts the problems a capped list left out (a
	// *config.MoreProblems), which errs does not hold.
	more int
}

// newProblemList returns the problems of the file at path: each
// *config.MoreProblems in probs is added to the count, not listed.
func newProblemList(path string, probs []error) *problemList {
	p := &problemList{path: path}
	for _, e := range probs {
		var mp *config.MoreProblems
		if errors.As(e, &mp) {
			p.more += mp.N
			continue
		}
		p.errs = append(p.errs, e)
	}
	return p
}

// Error implements error: a count, then at most config.MaxReported
// problems, each on its own indented line.
func (p *problemList) Error() string {
	var b strings.Builder
	n := len(p.errs) + p.more
	fmt.Fprintf(&b, "%s: %d problem", p.path, n)
	if n != 1 {
		b.WriteString("s")
	}
	b.WriteString(":")
	for i, e := range p.errs {
		if i == config.MaxReported {
			fmt.Fprintf(&b, "\n  and %d more problems", n-i)
			break
		}
		b.WriteString("\n  " + strings.ReplaceAll(e.Error(), "\n", "\n    "))
	}
	if len(p.errs) <= config.MaxReported && p.more > 0 {
		fmt.Fprintf(&b, "\n  and %d more problems", p.more)
	}
	return b.String()
}

// Unwrap returns the problems, for errors.Is (the exit code).
func (p *problemList) Unwrap() []error { return p.errs }

// problems lists the problems joined in err. A wrapped join ("provider
// sim: " around the fields of its parameters) is opened: each field error
// names its path already; any other error keeps the wrapper's words.
func problems(err error) []error {
	if err == nil {
		return nil
	}
	var fe *config.FieldError
	if errors.As(err, &fe) && fe == err { //nolint:errorlint // the error itself, not what it wraps
		return []error{err}
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, problems(e)...)
		}
		return out
	}
	inner := errors.Unwrap(err)
	if _, ok := inner.(interface{ Unwrap() []error }); !ok {
		return []error{err}
	}
	prefix, _ := strings.CutSuffix(err.Error(), inner.Error())
	var out []error
	for _, e := range problems(inner) {
		if errors.As(e, &fe) {
			out = append(out, e)
			continue
		}
		out = append(out, fmt.Errorf("%s%w", prefix, e))
	}
	return out
}
