package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// defaultServer is the base URL of a service on this host, the default
// of --server for the commands that only talk to a service.
const defaultServer = "http://127.0.0.1:49021"

// addServerFlag registers --server, the base URL of a running service,
// with def as its default, and --url, its former name on trigger, as a
// hidden deprecated alias.
func addServerFlag(f *pflag.FlagSet, url *string, def string) {
	help := "the base URL of a running toposcope service"
	if def == "" {
		help = "read from a running toposcope service at this base URL instead"
	}
	f.StringVar(url, "server", def, help)
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

// newTriggerCmd returns `toposcope trigger`: ask a running service to
// discover now (POST /v1/discover). Slurm's strigger runs it through
// /usr/lib/toposcope/slurm-trigger when a node goes down or up; requests
// that arrive while a discovery is queued are merged into it.
func newTriggerCmd(env *Env) *cobra.Command {
	var url, tokenFile string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "trigger",
		Short: "Ask a running toposcope service to discover now",
		Example: `  toposcope trigger
  toposcope trigger --server https://head01:49021 --token-file /etc/toposcope/trigger.token`,
		Args: cobra.ArbitraryArgs, // strigger passes the affected nodes; the whole fabric is rediscovered
		RunE: func(cmd *cobra.Command, _ []string) error {
			warnFormerServerFlag(cmd, env.Stderr)
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			token, err := readToken(tokenFile)
			if err != nil {
				return err
			}
			if err := postDiscover(ctx, strings.TrimRight(url, "/"), token); err != nil {
				return err
			}
			_, err = fmt.Fprintln(env.Stdout, "toposcope: discovery queued")
			return err
		},
	}
	f := cmd.Flags()
	addServerFlag(f, &url, defaultServer)
	f.StringVar(&tokenFile, "token-file", "", "file holding a write token (when the service has tokens)")
	f.DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long")
	return cmd
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

// postDiscover sends POST /v1/discover; any answer but 202 is an error
// that names the status, never the body.
func postDiscover(ctx context.Context, base, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/discover", strings.NewReader("{}"))
	if err != nil {
		return fmt.Errorf("%w: --server: %w", ErrUsage, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrTrigger, err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("%w: %s answered %s", ErrTrigger, base, resp.Status)
	}
	return nil
}
