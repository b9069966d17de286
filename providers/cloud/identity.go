// Package cloud is the kit of toposcope's cloud providers: reading an
// instance's identity from its cloud's metadata service (AWS IMDSv2, GCP
// metadata server, OCI IMDS v2; the endpoint is configurable so that the
// same code runs against an emulator), mapping cloud instances to the
// nodes of a discovery request and assembling their graph (Mapping), and
// the discover skeleton of bearer-token REST APIs (TokenAPI).
package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Default metadata endpoints.
const (
	DefaultAWSEndpoint = "http://169.254.169.254"
	DefaultGCPEndpoint = "http://metadata.google.internal"
	DefaultOCIEndpoint = "http://169.254.169.254"
	// DefaultNebiusEndpoint is Nebius's metadata service.
	DefaultNebiusEndpoint = "http://metadata.nebius.internal"
)

// maxBody caps one metadata answer.
const maxBody = 64 << 10

// ErrMetadata is wrapped by every failure to read the metadata service.
var ErrMetadata = errors.New("metadata service")

// Identity is who the local instance is.
type Identity struct {
	// InstanceID is the cloud's instance ID.
	InstanceID string
	// Region is the instance's region (GCP: derived from the zone).
	Region string
	// Zone is the availability zone, where the service gives it.
	Zone string
	// Name is the instance name, where the service gives it.
	Name string
}

// Client reads a metadata service.
type Client struct {
	http     *http.Client
	endpoint string
}

// NewClient returns a client of the service at endpoint (scheme and
// host, e.g. DefaultAWSEndpoint). A nil hc uses a client with a 5-second
// timeout.
func NewClient(hc *http.Client, endpoint string) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	return &Client{http: hc, endpoint: strings.TrimSuffix(endpoint, "/")}
}

func (c *Client) get(ctx context.Context, method, path string, header http.Header) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+path, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrMetadata, path, err)
	}
	req.Header = header
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrMetadata, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrMetadata, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: %s: HTTP %d", ErrMetadata, path, resp.StatusCode)
	}
	return strings.TrimSpace(string(body)), nil
}

// AWS reads the identity with IMDSv2: a session token first (PUT
// /latest/api/token), then instance-id, placement/region and
// placement/availability-zone with the token.
func (c *Client) AWS(ctx context.Context) (Identity, error) {
	tok, err := c.get(ctx, http.MethodPut, "/latest/api/token",
		http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"60"}})
	if err != nil {
		return Identity{}, fmt.Errorf("aws imdsv2 token: %w", err)
	}
	h := http.Header{"X-Aws-Ec2-Metadata-Token": {tok}}
	var id Identity
	for _, f := range []struct {
		path string
		dst  *string
	}{
		{"/latest/meta-data/instance-id", &id.InstanceID},
		{"/latest/meta-data/placement/region", &id.Region},
		{"/latest/meta-data/placement/availability-zone", &id.Zone},
	} {
		if *f.dst, err = c.get(ctx, http.MethodGet, f.path, h); err != nil {
			return Identity{}, fmt.Errorf("aws imdsv2: %w", err)
		}
	}
	return id, nil
}

// GCP reads instance/id, instance/name and instance/zone with
// "Metadata-Flavor: Google"; the region is the zone without its last
// "-x" part.
func (c *Client) GCP(ctx context.Context) (Identity, error) {
	h := http.Header{"Metadata-Flavor": {"Google"}}
	var id Identity
	var err error
	for _, f := range []struct {
		path string
		dst  *string
	}{
		{"/computeMetadata/v1/instance/id", &id.InstanceID},
		{"/computeMetadata/v1/instance/name", &id.Name},
		{"/computeMetadata/v1/instance/zone", &id.Zone},
	} {
		if *f.dst, err = c.get(ctx, http.MethodGet, f.path, h); err != nil {
			return Identity{}, fmt.Errorf("gcp metadata: %w", err)
		}
	}
	id.Zone = id.Zone[strings.LastIndex(id.Zone, "/")+1:]
	if i := strings.LastIndex(id.Zone, "-"); i > 0 {
		id.Region = id.Zone[:i]
	}
	return id, nil
}

// OCI reads /opc/v2/instance/id, region and displayName with
// "Authorization: Bearer Oracle".
func (c *Client) OCI(ctx context.Context) (Identity, error) {
	h := http.Header{"Authorization": {"Bearer Oracle"}}
	var id Identity
	var err error
	for _, f := range []struct {
		path string
		dst  *string
	}{
		{"/opc/v2/instance/id", &id.InstanceID},
		{"/opc/v2/instance/region", &id.Region},
		{"/opc/v2/instance/displayName", &id.Name},
	} {
		if *f.dst, err = c.get(ctx, http.MethodGet, f.path, h); err != nil {
			return Identity{}, fmt.Errorf("oci imds: %w", err)
		}
	}
	return id, nil
}

// nebiusHeader is the header every Nebius metadata request carries.
var nebiusHeader = http.Header{"Metadata": {"true"}}

// NebiusProject reads the instance's project (/v1/instance-data/parent_id).
func (c *Client) NebiusProject(ctx context.Context) (string, error) {
	p, err := c.get(ctx, http.MethodGet, "/v1/instance-data/parent_id", nebiusHeader)
	if err != nil {
		return "", fmt.Errorf("nebius metadata: %w", err)
	}
	return p, nil
}

// NebiusToken reads an IAM access token of the instance's service
// account (/v1/iam/sa/token/access_token).
func (c *Client) NebiusToken(ctx context.Context) (string, error) {
	t, err := c.get(ctx, http.MethodGet, "/v1/iam/sa/token/access_token", nebiusHeader)
	if err != nil {
		return "", fmt.Errorf("nebius metadata token: %w", err)
	}
	return t, nil
}

// HostTopology is where a host sits in its cloud's fabric, as the host's
// own metadata service tells it.
type HostTopology struct {
	// Path lists the fabric units closest first; empty when the service
	// gave an incomplete path.
	Path []string
	// Domain is the accelerator (GPU memory fabric) domain, if any.
	Domain string
}

// OCIHostTopology reads /opc/v2/host/rdmaTopologyData ("Authorization:
// Bearer Oracle"): customerLocalBlock, customerNetworkBlock and
// customerHPCIslandId are the path, closest first (all three or none, as
// the oci provider places hosts), customerGpuMemoryFabric the domain.
func (c *Client) OCIHostTopology(ctx context.Context) (HostTopology, error) {
	body, err := c.get(ctx, http.MethodGet, "/opc/v2/host/rdmaTopologyData", http.Header{"Authorization": {"Bearer Oracle"}})
	if err != nil {
		return HostTopology{}, fmt.Errorf("oci imds: %w", err)
	}
	var d struct {
		Local   string `json:"customerLocalBlock"`
		Network string `json:"customerNetworkBlock"`
		Island  string `json:"customerHPCIslandId"`
		Fabric  string `json:"customerGpuMemoryFabric"`
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		return HostTopology{}, fmt.Errorf("%w: oci imds rdmaTopologyData: %w", ErrMetadata, err)
	}
	t := HostTopology{Domain: d.Fabric}
	if d.Local != "" && d.Network != "" && d.Island != "" {
		t.Path = []string{d.Local, d.Network, d.Island}
	}
	return t, nil
}
