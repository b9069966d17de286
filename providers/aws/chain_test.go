package aws_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/testenv/cloudsim"
)

// twoRegions are instances in us-east-1 and eu-west-1.
func twoRegions() []cloudsim.Instance {
	return []cloudsim.Instance{
		{ID: "i-east1", Zone: "us-east-1a", Path: []string{"nn-e-leaf", "nn-e-spine"}},
		{ID: "i-east2", Zone: "us-east-1b", Path: []string{"nn-e-leaf", "nn-e-spine"}},
		{ID: "i-west1", Zone: "eu-west-1a", Path: []string{"nn-w-leaf", "nn-w-spine"}},
	}
}

// TestRegionFromNodes: each requested node is looked up in its own
// region (Topograph's nodes[].region), else in params.region; with none
// at all the discovery fails naming the region.
func TestRegionFromNodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		region     string
		nodes      []providers.NodeRef
		wantSigned []string
		wantErr    error
	}{
		{name: "each node in its region", nodes: []providers.NodeRef{
			{Name: "a", InstanceID: "i-east1", Region: "us-east-1"}, {Name: "b", InstanceID: "i-east2", Region: "us-east-1"},
			{Name: "c", InstanceID: "i-west1", Region: "eu-west-1"}},
			wantSigned: []string{testKeyID + "/eu-west-1", testKeyID + "/us-east-1"}},
		{name: "params.region for nodes without one", region: "us-east-1", nodes: []providers.NodeRef{
			{Name: "a", InstanceID: "i-east1"}, {Name: "b", InstanceID: "i-east2"}, {Name: "c", InstanceID: "i-west1", Region: "eu-west-1"}},
			wantSigned: []string{testKeyID + "/eu-west-1", testKeyID + "/us-east-1"}},
		{name: "no region anywhere", nodes: []providers.NodeRef{{Name: "a", InstanceID: "i-east1"}}, wantErr: config.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			emu := cloudsim.NewAWS(twoRegions(), cloudsim.Faults{})
			emu.ByRegion()
			srv := httptest.NewServer(emu)
			defer srv.Close()
			p := newProvider(t, srv.URL, nil, nil, func(c *aws.Config) { c.Region = tt.region })
			g, err := p.Discover(context.Background(), providers.Request{Nodes: tt.nodes, Credentials: creds()})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), "region") {
					t.Fatalf("err = %v, want %v naming the region", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.nodes {
				if len(g.Path(n.Name)) != 2 {
					t.Errorf("node %s: path %s; the instance is in %s", n.Name, cloudsim.PathIDs(g.Path(n.Name)), n.Region)
				}
			}
			signed := emu.Signed()
			slices.Sort(signed)
			if !slices.Equal(slices.Compact(signed), tt.wantSigned) {
				t.Errorf("signed %v, want %v", signed, tt.wantSigned)
			}
		})
	}
}

// chainEnv clears every variable the SDK's chain reads and points its
// files at nothing, then sets env; the test must not be parallel.
func chainEnv(t *testing.T, env map[string]string) {
	t.Helper()
	dir := t.TempDir()
	base := map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "no-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "no-credentials"),
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ROLE_ARN": "", "AWS_ROLE_SESSION_NAME": "", "AWS_ENDPOINT_URL_STS": "",
		"AWS_ENDPOINT_URL": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN": "", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": "",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_EC2_METADATA_SERVICE_ENDPOINT": "", "AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "",
	}
	for k, v := range env {
		base[k] = v
	}
	for k, v := range base {
		t.Setenv(k, v)
	}
}

func writeSecret(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDefaultChainSources runs the SDK's default chain (no request
// credentials, no credentialsFile) with each source it reads, against
// emulators of STS, the container endpoint and IMDS: EC2 must see the
// key that source hands out. Not parallel: it sets the environment.
func TestDefaultChainSources(t *testing.T) {
	roleKey := cloudsim.Key{AccessKeyID: "ASIAROLEKEY000001", SecretAccessKey: "role/secret+1", SessionToken: "role-session-token"}
	sts := httptest.NewServer(&cloudsim.STS{RoleARN: "arn:aws:iam::000000000000:role/toposcope", Token: "irsa-jwt", Key: roleKey})
	defer sts.Close()
	podKey := cloudsim.Key{AccessKeyID: "ASIAPODIDENTITY01", SecretAccessKey: "pod/secret+2", SessionToken: "pod-session-token"}
	pod := httptest.NewServer(&cloudsim.ContainerCredentials{AuthToken: "pod-identity-token", Key: podKey})
	defer pod.Close()
	imdsKey := cloudsim.Key{AccessKeyID: "ASIAINSTANCEROLE1", SecretAccessKey: "imds/secret+3", SessionToken: "imds-session-token"}
	imds := httptest.NewServer(&cloudsim.IMDS{InstanceID: "i-0abc", Region: "eu-west-1", Zone: "eu-west-1a", Role: "toposcope-node", RoleKey: imdsKey})
	defer imds.Close()

	tests := []struct {
		name    string
		env     map[string]string
		wantKey string
		region  string // the region EC2 is asked in
	}{
		{name: "environment", env: map[string]string{"AWS_ACCESS_KEY_ID": testKeyID, "AWS_SECRET_ACCESS_KEY": testSecret},
			wantKey: testKeyID, region: "us-west-2"},
		{name: "shared credentials file", env: map[string]string{"AWS_SHARED_CREDENTIALS_FILE": writeSecret(t, "credentials",
			"[default]\naws_access_key_id = AKIASHAREDFILE001\naws_secret_access_key = shared/secret\n")},
			wantKey: "AKIASHAREDFILE001", region: "us-west-2"},
		{name: "web identity (IRSA)", env: map[string]string{"AWS_WEB_IDENTITY_TOKEN_FILE": writeSecret(t, "token", "irsa-jwt"),
			"AWS_ROLE_ARN": "arn:aws:iam::000000000000:role/toposcope", "AWS_ENDPOINT_URL_STS": sts.URL},
			wantKey: roleKey.AccessKeyID, region: "us-west-2"},
		{name: "container credentials (EKS Pod Identity)", env: map[string]string{"AWS_CONTAINER_CREDENTIALS_FULL_URI": pod.URL + "/v1/credentials",
			"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": writeSecret(t, "pod-token", "pod-identity-token")},
			wantKey: podKey.AccessKeyID, region: "us-west-2"},
		{name: "instance role and region from IMDS", env: map[string]string{"AWS_EC2_METADATA_DISABLED": "false",
			"AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL, "AWS_REGION": ""},
			wantKey: imdsKey.AccessKeyID, region: "eu-west-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chainEnv(t, tt.env)
			emu := cloudsim.NewAWS(twoRegions(), cloudsim.Faults{})
			emu.RequireKeys(tt.wantKey)
			srv := httptest.NewServer(emu)
			defer srv.Close()
			cfg := aws.DefaultConfig()
			cfg.Endpoint = srv.URL
			p, err := aws.New(cfg, providers.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Discover(context.Background(), providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Nodes()) != 3 {
				t.Errorf("%d nodes, want 3", len(g.Nodes()))
			}
			if signed := emu.Signed(); len(signed) == 0 || signed[0] != tt.wantKey+"/"+tt.region {
				t.Errorf("EC2 saw %v, want %s/%s", signed, tt.wantKey, tt.region)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		chainEnv(t, nil)
		cfg := aws.DefaultConfig()
		cfg.Endpoint = "http://127.0.0.1:1"
		p, err := aws.New(cfg, providers.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Discover(context.Background(), providers.Request{})
		if !errors.Is(err, providers.ErrNoCredentials) {
			t.Fatalf("err = %v, want ErrNoCredentials", err)
		}
	})
	t.Run("a refused web identity token", func(t *testing.T) {
		chainEnv(t, map[string]string{"AWS_WEB_IDENTITY_TOKEN_FILE": writeSecret(t, "token", "stolen-jwt"),
			"AWS_ROLE_ARN": "arn:aws:iam::000000000000:role/toposcope", "AWS_ENDPOINT_URL_STS": sts.URL})
		cfg := aws.DefaultConfig()
		cfg.Endpoint = "http://127.0.0.1:1"
		p, err := aws.New(cfg, providers.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Discover(context.Background(), providers.Request{})
		if !errors.Is(err, providers.ErrNoCredentials) || strings.Contains(err.Error(), "stolen-jwt") {
			t.Fatalf("err = %v, want ErrNoCredentials without the token", err)
		}
	})
}
