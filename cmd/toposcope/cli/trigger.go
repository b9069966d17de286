package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/toposcope/toposcope/server"
	"github.com/toposcope/toposcope/service/store"
)

// defaultServer is the base URL of a service on this host, the default
// of --server for the commands that only talk to a service.
const defaultServer = "http://127.0.0.1:49021"

// addServerFlag registers --server, the base URL of a running service,
// with def as its default.
func addServerFlag(f *pflag.FlagSet, url *string, def string) {
	help := "the base URL of a running toposcope service"
	if def == "" {
		help = "read from a running toposcope service at this base URL instead"
	}
	f.StringVar(url, "server", def, help)
}

// addFormerServerFlag registers --url, the former name of --server on
// trigger (the only command that had it), as a hidden alias setting url,
// with def as its default; warnFormerServerFlag says it is deprecated.
func addFormerServerFlag(f *pflag.FlagSet, url *string, def string) {
	f.StringVar(url, "url", def, "the former name of --server")
	_ = f.MarkHidden("url")
}

// warnFormerServerFlag says on w that --url is the former name of
// --server, when it was given.
func warnFormerServerFlag(cmd *cobra.Command, w io.Writer) {
	if cmd.Flags().Changed("url") {
		fmt.Fprintln(w, "toposcope: --url has been deprecated, use --server")
	}
}

// ErrTrigger is wrapped when the service did not take a discovery request.
var ErrTrigger = errors.New("the service did not queue a discovery")

// ErrRefused is wrapped when the discovery that trigger queued ran and
// was refused (by the shrink guard) or failed.
var ErrRefused = errors.New("the discovery did not publish")

// newTriggerCmd returns `toposcope trigger`: ask a running service to
// discover now (POST /v1/discover) and wait for the outcome of that
// discovery. Slurm's strigger runs it through
// /usr/lib/toposcope/slurm-trigger when a node goes down or up; requests
// that arrive while a discovery is queued are merged into it.
func newTriggerCmd(env *Env) *cobra.Command {
	var svc *serviceFlags
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "trigger",
		Short: "Ask a running toposcope service to discover now, and report the outcome",
		Long: `Ask a running service to discover now (POST /v1/discover), then wait (up
to --wait) for that discovery's run and report its outcome: published or
unchanged is success; a discovery the shrink guard refused (the snapshot
is pending, nothing was published) or that failed is exit 1, naming the
snapshot and the commands that show and accept it. --wait 0 only queues.`,
		Example: `  toposcope trigger
  toposcope trigger --server https://head01:49021 --token-file /etc/toposcope/trigger.token`,
		Args: cobra.ArbitraryArgs, // strigger passes the affected nodes; the whole fabric is rediscovered
		RunE: func(cmd *cobra.Command, _ []string) error {
			warnFormerServerFlag(cmd, env.Stderr)
			c, ctx, cancel, err := svc.client(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			last, err := lastRunID(ctx, c)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrTrigger, err)
			}
			if err := c.do(ctx, http.MethodPost, "/v1/discover", struct{}{}, nil); err != nil {
				return fmt.Errorf("%w: %w", ErrTrigger, err)
			}
			fmt.Fprintln(env.Stdout, "toposcope: discovery queued")
			if wait <= 0 {
				return nil
			}
			wctx, wcancel := context.WithTimeout(cmd.Context(), wait)
			defer wcancel()
			run, err := waitRun(wctx, c, last)
			if err != nil {
				fmt.Fprintf(env.Stderr, "toposcope: no outcome yet (%v); toposcope status shows it\n", err)
				return nil
			}
			return reportRun(wctx, env.Stdout, c, run)
		},
	}
	svc = addServiceFlags(cmd, "write", 10*time.Second)
	addFormerServerFlag(cmd.Flags(), &svc.server, defaultServer)
	cmd.Flags().DurationVar(&wait, "wait", 2*time.Minute, "wait this long for the outcome of the discovery (0: only queue it)")
	return cmd
}

// getRuns returns the newest limit discovery runs, newest first (GET
// /v1/runs).
func getRuns(ctx context.Context, c *client, limit int) ([]store.Run, error) {
	var a struct {
		Runs []store.Run `json:"runs"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/runs?limit="+strconv.Itoa(limit), nil, &a); err != nil {
		return nil, err
	}
	return a.Runs, nil
}

// lastRunID returns the ID of the newest discovery run (0 when none).
func lastRunID(ctx context.Context, c *client) (uint64, error) {
	runs, err := getRuns(ctx, c, 1)
	if err != nil || len(runs) == 0 {
		return 0, err
	}
	return runs[0].ID, nil
}

// waitRun polls GET /v1/runs until a run newer than after that the API
// triggered is recorded, and returns it.
func waitRun(ctx context.Context, c *client, after uint64) (*store.Run, error) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		runs, err := getRuns(ctx, c, 20)
		if err != nil {
			return nil, err
		}
		for i := len(runs) - 1; i >= 0; i-- { // oldest first: the first run after the request
			if r := runs[i]; r.ID > after && r.Trigger == "api" {
				return &r, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no run of the discovery: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// reportRun prints the outcome of run; a refused or failed discovery is
// an error wrapping ErrRefused that says how to see and accept it.
func reportRun(ctx context.Context, w io.Writer, c *client, run *store.Run) error {
	switch run.Outcome {
	case store.OutcomePublished, store.OutcomeUnchanged:
		_, err := fmt.Fprintf(w, "toposcope: discovery run %d: %s\n", run.ID, run.Outcome)
		return err
	case store.OutcomeRefused:
		var st server.Status
		if err := c.do(ctx, http.MethodGet, "/v1/status", nil, &st); err == nil && st.Pending != nil {
			return fmt.Errorf("%w: discovery run %d was refused by the shrink guard: %s; the current topology stays and nothing was published. "+
				"Snapshot %d is pending: toposcope diff %d shows what it changes, toposcope accept %d accepts it",
				ErrRefused, run.ID, st.Pending.Reason, st.Pending.ID, st.Pending.ID, st.Pending.ID)
		}
		return fmt.Errorf("%w: discovery run %d was refused by the shrink guard: %s (toposcope status shows the pending snapshot)", ErrRefused, run.ID, run.Error)
	}
	return fmt.Errorf("%w: discovery run %d: %s: %s", ErrRefused, run.ID, run.Outcome, run.Error)
}

// readToken reads the bearer token in path (--token-file); "" for no
// path. The error names the flag, never the file's content.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: --token-file: %w", ErrUsage, err)
	}
	return strings.TrimSpace(string(b)), nil
}
