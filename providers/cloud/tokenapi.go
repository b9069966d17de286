package cloud

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// TokenAPI is the discover skeleton of the providers that page a REST
// topology API with a bearer token (lambda, nscale): the token comes from
// the request's credential CredKey, else the configuration; the calls are
// bounded by Deadline; what they return is assembled through Mapping, and
// the instances left out are logged and recorded. With Snapshot set no
// call is made.
type TokenAPI struct {
	// Name is the provider's registered name (errors, logs, metrics).
	Name string
	// CredKey is the request credential that overrides Token.
	CredKey string
	// Token is the configured token; empty when none is configured.
	Token string
	// Deadline bounds one discovery.
	Deadline time.Duration
	// Mapping maps instances to node names and assembles the graph.
	Mapping Mapping
	// Snapshot, when not nil, is the saved answer used instead of Fetch.
	Snapshot []Instance
	// Fetch pages the API with token; it returns the instances and the
	// number of calls made.
	Fetch func(ctx context.Context, token string) ([]Instance, int, error)
	// Resolve, when set, finds the token for a discovery (within its
	// deadline) in place of the request's CredKey, then Token: for a
	// provider with more sources than those.
	Resolve func(ctx context.Context, c providers.Credentials) (string, error)
	// Log and Observer are the provider's.
	Log      *slog.Logger
	Observer providers.Observer
}

// NewTokenAPI builds the skeleton of a TokenAPI provider from its
// settings: with a saved snapshot (not nil) it makes no call; otherwise
// it resolves the configured token and builds the HTTP client (the token
// scrubbed from its errors, every exchange observed under name). parseID
// reads instance IDs from Kubernetes providerIDs (nil: as they are). The
// caller sets Fetch.
func NewTokenAPI(name, credKey string, s TokenSettings, parseID func(string) string, snapshot []Instance,
	deps providers.Deps, opts ...httpretry.Option,
) (TokenAPI, *httpretry.Client, error) {
	deps = deps.WithDefaults()
	t, err := TokenAPIOf(name, credKey, s, parseID, snapshot, deps)
	if err != nil || snapshot != nil {
		return t, nil, err
	}
	c, err := providers.HTTPClient(name, s.Connection, deps, []string{t.Token}, opts...)
	return t, c, err
}

// TokenAPIOf is NewTokenAPI without the HTTP client, for a provider
// that speaks another protocol (it sets Fetch).
func TokenAPIOf(name, credKey string, s TokenSettings, parseID func(string) string, snapshot []Instance,
	deps providers.Deps,
) (TokenAPI, error) {
	deps = deps.WithDefaults()
	t := TokenAPI{
		Name: name, CredKey: credKey, Deadline: s.Deadline, Mapping: Mapping{Names: s.Nodes, ParseID: parseID},
		Snapshot: snapshot, Log: deps.Logger, Observer: deps.Observer,
	}
	if snapshot != nil {
		return t, nil
	}
	tok, err := s.Secret().Resolve()
	if err != nil {
		return t, &config.FieldError{Field: "tokenFile", Err: err}
	}
	t.Token = tok
	return t, nil
}

// Discover implements providers.Provider.
func (t *TokenAPI) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, t.Deadline)
	defer cancel()
	wanted, _ := t.Mapping.Want(req)
	found, calls := t.Snapshot, 0
	if t.Snapshot == nil {
		tok, err := t.token(ctx, req.Credentials)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		found, calls, err = t.Fetch(ctx, tok)
		if err != nil {
			return nil, httpretry.ScrubError(fmt.Errorf("%s: %w", t.Name, err), tok)
		}
	}
	g, rep, err := t.Mapping.Assemble(ctx, wanted, found)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	rep.Log(t.Log, t.Name)
	rep.Record(t.Observer, t.Name)
	t.Log.Debug(t.Name+" discovery", "calls", calls, "instances", len(found), "nodes", len(g.Nodes()), "unplaced", rep.Count())
	return g, nil
}

// token returns the token of one discovery: Resolve's, or the request's
// CredKey, else Token.
func (t *TokenAPI) token(ctx context.Context, c providers.Credentials) (string, error) {
	if t.Resolve != nil {
		return t.Resolve(ctx, c)
	}
	tok := t.Token
	if v, ok := c.Get(t.CredKey); ok {
		tok = v
	}
	if tok == "" {
		return "", fmt.Errorf("%w: give request creds %q, params.token or params.tokenFile", providers.ErrNoCredentials, t.CredKey)
	}
	return tok, nil
}

// Defaults of TokenSettings.
const (
	DefaultPageSize = 100
	DefaultDeadline = 5 * time.Minute
	// MaxPages bounds the pages of one discovery.
	MaxPages = 100_000
)

// TokenSettings are the settings every TokenAPI provider has; its Config
// inlines them.
type TokenSettings struct {
	// Connection holds url (the API base, also the endpoint override),
	// caFile, insecureSkipVerify, allowHTTP, timeout and retry.
	httpretry.Connection `yaml:",inline"`
	// Token (or TokenFile) is the API token; a request's "token"
	// credential overrides it.
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"tokenFile,omitempty" path:"read"`
	// PageSize is the page size asked for, 1-1000 (default 100).
	PageSize int `yaml:"pageSize,omitempty"`
	// Deadline bounds one discovery (default 5m).
	Deadline time.Duration `yaml:"deadline,omitempty"`
	// Nodes maps instance IDs to node names (default: the ID).
	Nodes map[string]string `yaml:"nodes,omitempty" request:"true"`
}

// DefaultTokenSettings returns the defaults.
func DefaultTokenSettings() TokenSettings {
	return TokenSettings{PageSize: DefaultPageSize, Deadline: DefaultDeadline}
}

// Validate reports every invalid field as config.FieldErrors; offline
// (the provider answers from a saved snapshot) skips the connection.
func (t TokenSettings) Validate(offline bool) error {
	var errs []error
	if !offline {
		errs = append(errs, t.Connection.Validate())
	}
	errs = append(errs, t.Secret().Check("token", "tokenFile", false))
	if t.PageSize < 1 || t.PageSize > 1000 {
		errs = append(errs, config.Errorf("pageSize", "must be between 1 and 1000, not %d", t.PageSize))
	}
	if t.Deadline <= 0 {
		errs = append(errs, config.Errorf("deadline", "must be positive"))
	}
	return errors.Join(errs...)
}

// Secret is the configured token.
func (t TokenSettings) Secret() httpretry.Secret {
	return httpretry.Secret{Value: t.Token, File: t.TokenFile}
}
