// Package slurmrest reads Slurm's partitions and nodes from slurmrestd,
// Slurm's REST API, with JSON Web Token authentication: for a service
// that runs where no scontrol is (a Slinky cluster's pod), and for
// anyone who would rather not run commands. Every OpenAPI version from
// v0.0.38 (Slurm 22.05) to v0.0.44 (25.11 and later) is read; the
// version is the configured one or the newest the server offers.
package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/httpretry"
)

// ErrResponse is wrapped when slurmrestd's answer cannot be read or
// reports errors.
var ErrResponse = errors.New("slurmrestd answer not usable")

// ErrToken is wrapped when the token file cannot be read or is empty.
var ErrToken = errors.New("slurmrestd token unavailable")

// Client calls one slurmrestd.
type Client struct {
	cfg Config
	hc  *http.Client
	log *slog.Logger

	mu      sync.Mutex
	version string // the API version in use, once known
}

// New validates cfg and builds its HTTP client.
func New(cfg Config, log *slog.Logger) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = httpretry.DefaultTimeout
	}
	hc, err := httpretry.NewHTTPClient(httpretry.TLSOptions{CAFile: cfg.CAFile, InsecureSkipVerify: cfg.InsecureSkipVerify}, timeout, log)
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, hc: hc, log: log, version: cfg.APIVersion}, nil
}

// Partitions returns the node names of every partition, by partition
// name (GET /slurm/VERSION/partitions). A partition without nodes has an
// empty list.
func (c *Client) Partitions(ctx context.Context) (map[string][]string, error) {
	var raw json.RawMessage
	if err := c.get(ctx, "partitions", &raw); err != nil {
		return nil, err
	}
	return DecodePartitions(raw)
}

// DecodePartitions reads slurmrestd's partitions answer (any OpenAPI
// version): the node names of each partition, by name. An error names
// the partition, never a token.
func DecodePartitions(raw []byte) (map[string][]string, error) {
	var doc struct {
		Partitions *[]struct {
			Name  string          `json:"name"`
			Nodes json.RawMessage `json:"nodes"`
		} `json:"partitions"`
		answerErrors
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrResponse, err)
	}
	if err := doc.check(); err != nil {
		return nil, err
	}
	if doc.Partitions == nil {
		return nil, fmt.Errorf("%w: no \"partitions\" in the answer", ErrResponse)
	}
	out := make(map[string][]string, len(*doc.Partitions))
	for i, p := range *doc.Partitions {
		if p.Name == "" {
			return nil, fmt.Errorf("%w: partitions[%d] has no name", ErrResponse, i)
		}
		list, err := partitionNodes(p.Nodes)
		if err != nil {
			return nil, fmt.Errorf("%w: partition %s: nodes: %w", ErrResponse, p.Name, err)
		}
		names, err := hostlist.Expand(list)
		if err != nil {
			return nil, fmt.Errorf("%w: partition %s: nodes: %w", ErrResponse, p.Name, err)
		}
		out[p.Name] = names
	}
	return out, nil
}

// partitionNodes reads a partition's hostlist: a string up to v0.0.38,
// then an object whose "configured" member holds it.
func partitionNodes(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return nullEmpty(s), nil
	}
	var o struct {
		Configured *string `json:"configured"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.Configured == nil {
		return "", errors.New(`want a hostlist or an object with "configured"`)
	}
	return nullEmpty(*o.Configured), nil
}

// nullEmpty maps Slurm's spellings of "no nodes" to "".
func nullEmpty(s string) string {
	switch strings.TrimSpace(s) {
	case "(null)", "NONE":
		return ""
	}
	return strings.TrimSpace(s)
}

// Nodes returns the body of GET /slurm/VERSION/nodes: the JSON document
// `scontrol --json show nodes` also prints.
func (c *Client) Nodes(ctx context.Context) ([]byte, error) {
	var raw json.RawMessage
	if err := c.get(ctx, "nodes", &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// answerErrors is the "errors" list every answer carries.
type answerErrors struct {
	Errors []struct {
		Description string `json:"description"`
		Error       string `json:"error"`
	} `json:"errors"`
}

// check reports the answer's first error.
func (a answerErrors) check() error {
	if len(a.Errors) == 0 {
		return nil
	}
	e := a.Errors[0]
	msg := strings.TrimSpace(strings.Join([]string{e.Error, e.Description}, " "))
	return fmt.Errorf("%w: slurmrestd reports %d errors, the first: %s", ErrResponse, len(a.Errors), msg)
}

// get calls GET /slurm/VERSION/what and decodes the answer into out.
func (c *Client) get(ctx context.Context, what string, out any) error {
	token, err := c.token()
	if err != nil {
		return err
	}
	version, err := c.apiVersion(ctx, token)
	if err != nil {
		return err
	}
	hc := c.retrying(token)
	if err := hc.JSON(ctx, http.MethodGet, c.cfg.Endpoint("/slurm/"+version+"/"+what), c.header(token), nil, out); err != nil {
		return fmt.Errorf("slurmrestd: %w", err)
	}
	return nil
}

// retrying is the retrying client of one call; the token is scrubbed
// from any body its errors quote.
func (c *Client) retrying(token string) *httpretry.Client {
	return httpretry.New(c.hc, c.cfg.Retry, httpretry.WithLogger(c.log), httpretry.WithSecrets(token))
}

// header holds the token and the user name, spelled as slurmrestd
// documents them.
func (c *Client) header(token string) http.Header {
	h := http.Header{"X-SLURM-USER-TOKEN": {token}}
	if c.cfg.User != "" {
		h["X-SLURM-USER-NAME"] = []string{c.cfg.User}
	}
	return h
}

// token reads the token file.
func (c *Client) token() (string, error) {
	data, err := os.ReadFile(c.cfg.TokenFile)
	if err != nil {
		return "", fmt.Errorf("%w: tokenFile: %w", ErrToken, err)
	}
	t := strings.TrimSpace(string(data))
	t = strings.TrimPrefix(t, "SLURM_JWT=")
	if t == "" || strings.ContainsAny(t, " \t\r\n") {
		return "", fmt.Errorf("%w: tokenFile %s holds no single token", ErrToken, c.cfg.TokenFile)
	}
	return t, nil
}

// slurmPathRE matches the partitions path of an OpenAPI version.
var slurmPathRE = regexp.MustCompile(`^/slurm/v0\.0\.([0-9]{2})/partitions/?$`)

// apiVersion returns the configured version, or the newest one whose
// partitions path the server's /openapi/v3 document lists.
func (c *Client) apiVersion(ctx context.Context, token string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != "" {
		return c.version, nil
	}
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := c.retrying(token).JSON(ctx, http.MethodGet, c.cfg.Endpoint("/openapi/v3"), c.header(token), nil, &doc); err != nil {
		return "", fmt.Errorf("slurmrestd: reading the API versions: %w", err)
	}
	best := -1
	for p := range doc.Paths {
		if m := slurmPathRE.FindStringSubmatch(p); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > best {
				best = n
			}
		}
	}
	if best < 0 {
		return "", fmt.Errorf("%w: /openapi/v3 lists no /slurm/v0.0.N/partitions path (is the openapi/slurmctld plugin loaded?)", ErrResponse)
	}
	c.version = fmt.Sprintf("v0.0.%d", best)
	c.log.DebugContext(ctx, "slurmrestd API version", "version", c.version)
	return c.version, nil
}
