package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/server"
)

// ErrService is wrapped when a running service answers a request with an
// error (its status and message are in the error).
var ErrService = errors.New("the service refused the request")

// maxAnswerBytes caps an answer of the service other than the graph.
const maxAnswerBytes = 64 << 20

// serviceFlags are the flags of every command that talks to a running
// service: --server, --token-file and --timeout.
type serviceFlags struct {
	server, tokenFile string
	timeout           time.Duration
}

// addServiceFlags registers the serviceFlags on cmd; scope is the token
// the command needs ("read" or "write"), timeout the default of
// --timeout.
func addServiceFlags(cmd *cobra.Command, scope string, timeout time.Duration) *serviceFlags {
	s := &serviceFlags{}
	f := cmd.Flags()
	addServerFlag(f, &s.server, defaultServer)
	f.StringVar(&s.tokenFile, "token-file", "", "file holding a "+scope+" token (when the service has tokens)")
	f.DurationVar(&s.timeout, "timeout", timeout, "give up after this long")
	return s
}

// client is the REST client of one running service.
type client struct {
	base, token string
	// limit caps the bytes read of an answer; 0 means maxAnswerBytes.
	limit int64
}

// client reads the token and returns the service's client, and a context
// bounded by --timeout.
func (s *serviceFlags) client(cmd *cobra.Command) (*client, context.Context, context.CancelFunc, error) {
	token, err := readToken(s.tokenFile)
	if err != nil {
		return nil, nil, nil, err
	}
	if !strings.HasPrefix(s.server, "http://") && !strings.HasPrefix(s.server, "https://") {
		return nil, nil, nil, fmt.Errorf("%w: --server %q: want an http:// or https:// URL", ErrUsage, s.server)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), s.timeout)
	return &client{base: strings.TrimRight(s.server, "/"), token: token}, ctx, cancel, nil
}

// do sends method path (with a JSON body when body is not nil) and
// decodes a 2xx answer into out (when not nil). Another answer is an
// error wrapping ErrService that names the status and the service's
// message, never the token.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%w: --server: %w", ErrUsage, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, c.base+path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	limit := c.limit
	if limit == 0 {
		limit = maxAnswerBytes
	}
	rb := io.LimitReader(resp.Body, limit)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e server.ErrorBody
		_ = json.NewDecoder(io.LimitReader(rb, 1<<16)).Decode(&e)
		msg := e.Error.Message
		if msg == "" {
			msg = "(no message)"
		}
		return fmt.Errorf("%w: %s %s answered %s: %s", ErrService, method, path, resp.Status, msg)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, rb)
		return nil
	}
	if err := json.NewDecoder(rb).Decode(out); err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return nil
}
