package cloudsim_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/providers/gcp"
	"github.com/toposcope/toposcope/providers/lambda"
	"github.com/toposcope/toposcope/providers/nebius"
	"github.com/toposcope/toposcope/providers/nscale"
	"github.com/toposcope/toposcope/providers/oci"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
)

// emulated is one provider against its emulator.
type emulated struct {
	name    string
	handler func([]cloudsim.Instance, cloudsim.Faults) (http.Handler, func() int)
	// serve, for an emulator that is not HTTP (gRPC), starts it and
	// returns its URL, its call counter and its stop.
	serve func(*testing.T, []cloudsim.Instance, cloudsim.Faults) (string, func() int, func())
	build func(url string, deps providers.Deps) (providers.Provider, error)
	creds func(t *testing.T) providers.Credentials
	byID  bool // request nodes by instance ID
}

var fast = httpretry.Policy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

func ociKey(t *testing.T) providers.Credentials {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	return providers.NewCredentials(map[string]string{oci.CredTenancy: "ocid1.tenancy.oc1..t", oci.CredUser: "ocid1.user.oc1..u",
		oci.CredFingerprint: "20:3b:97:13:55:1c:5b:0d:d3:37:d8:50:4e:c5:3a:34", oci.CredPrivateKey: key})
}

func clouds() []emulated {
	return []emulated{
		{name: aws.Name, byID: true,
			handler: func(in []cloudsim.Instance, f cloudsim.Faults) (http.Handler, func() int) {
				e := cloudsim.NewAWS(in, f)
				return e, e.Calls
			},
			build: func(url string, deps providers.Deps) (providers.Provider, error) {
				cfg := aws.DefaultConfig()
				cfg.Region, cfg.Endpoint, cfg.Retry = "us-west-2", url, fast
				return aws.New(cfg, deps, aws.WithGetenv(func(string) string { return "" }))
			},
			creds: func(*testing.T) providers.Credentials {
				return providers.NewCredentials(map[string]string{aws.CredAccessKeyID: "AKIDSIM", aws.CredSecretAccessKey: "secret"})
			}},
		{name: gcp.Name,
			handler: func(in []cloudsim.Instance, f cloudsim.Faults) (http.Handler, func() int) {
				e := cloudsim.NewGCP("proj-1", in, f)
				return e, e.Calls
			},
			build: func(url string, deps providers.Deps) (providers.Provider, error) {
				cfg := gcp.DefaultConfig()
				cfg.Project, cfg.Endpoint, cfg.Anonymous, cfg.PageSize, cfg.Retry = "proj-1", url, true, 50, fast
				return gcp.New(cfg, deps)
			}},
		{name: oci.Name, byID: true, creds: ociKey,
			handler: func(in []cloudsim.Instance, f cloudsim.Faults) (http.Handler, func() int) {
				e := cloudsim.NewOCI("ocid1.tenancy.oc1..t", in, f)
				return e, e.Calls
			},
			build: func(url string, deps providers.Deps) (providers.Provider, error) {
				cfg := oci.DefaultConfig()
				cfg.Region, cfg.Endpoint, cfg.Retry = "us-ashburn-1", url, fast
				return oci.New(cfg, deps)
			}},
		{name: lambda.Name, byID: true,
			handler: func(in []cloudsim.Instance, f cloudsim.Faults) (http.Handler, func() int) {
				e := cloudsim.NewLambda(in, f)
				return e, e.Calls
			},
			build: func(url string, deps providers.Deps) (providers.Provider, error) {
				cfg := lambda.DefaultConfig()
				cfg.URL, cfg.AllowHTTP, cfg.WorkspaceID, cfg.Region, cfg.Token, cfg.Retry = url, true, "ws-1", "us-east-1", cloudsim.Token, fast
				return lambda.New(cfg, deps)
			}},
		{name: nscale.Name, byID: true,
			handler: func(in []cloudsim.Instance, f cloudsim.Faults) (http.Handler, func() int) {
				e := cloudsim.NewNscale(in, f)
				return e, e.Calls
			},
			build: func(url string, deps providers.Deps) (providers.Provider, error) {
				cfg := nscale.DefaultConfig()
				cfg.URL, cfg.InstanceURL, cfg.AllowHTTP, cfg.Organization, cfg.Region, cfg.Token, cfg.Retry = url, url, true, "org-1", "us-east-1", cloudsim.Token, fast
				return nscale.New(cfg, deps)
			}},
		{name: nebius.Name,
			serve: func(t *testing.T, in []cloudsim.Instance, f cloudsim.Faults) (string, func() int, func()) {
				e := cloudsim.NewNebius(in, f, cloudsim.Token, "project-e00sim")
				e.RetryDelay = time.Millisecond
				addr, err := e.Start()
				if err != nil {
					t.Fatal(err)
				}
				return "http://" + addr, e.Calls, e.Stop
			},
			build: func(url string, deps providers.Deps) (providers.Provider, error) {
				cfg := nebius.DefaultConfig()
				cfg.URL, cfg.AllowHTTP, cfg.Project, cfg.Token, cfg.Retry, cfg.MetadataURL = url, true, "project-e00sim", cloudsim.Token, fast, "-"
				return nebius.New(cfg, deps)
			}},
	}
}

// TestObserverSeesEveryCall runs each cloud provider against its
// emulator, throttled once and with one node omitted and one without
// topology: the observer counts as many HTTP exchanges as the emulator
// answered, one throttled, and the two unplaced nodes.
func TestObserverSeesEveryCall(t *testing.T) {
	t.Parallel()
	g, err := sim.LoadGraph("nvl72")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clouds() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			faults := cloudsim.Faults{Throttle: 1, NoTopology: []string{"gb003"}, Omit: []string{"gb010"}}
			var url string
			var calls func() int
			if c.serve != nil {
				var stop func()
				url, calls, stop = c.serve(t, cloudsim.FromGraph(g), faults)
				defer stop()
			} else {
				var h http.Handler
				h, calls = c.handler(cloudsim.FromGraph(g), faults)
				srv := httptest.NewServer(h)
				defer srv.Close()
				url = srv.URL
			}
			rec := &cloudsim.Recorder{}
			p, err := c.build(url, providers.Deps{Observer: rec})
			if err != nil {
				t.Fatal(err)
			}
			var req providers.Request
			if c.creds != nil {
				req.Credentials = c.creds(t)
			}
			for _, n := range g.Nodes() {
				ref := providers.NodeRef{Name: n.Name}
				if c.byID {
					ref.InstanceID = n.Name
				}
				req.Nodes = append(req.Nodes, ref)
			}
			out, err := p.Discover(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			got, throttled := rec.Calls(c.name)
			if got == 0 || got != calls() || throttled != 1 {
				t.Errorf("observer saw %d calls (%d throttled); the emulator answered %d, one throttled", got, throttled, calls())
			}
			omitted, noTopo := rec.UnplacedOf(c.name)
			if omitted != 1 || noTopo != 1 || len(out.Unplaced()) != 2 {
				t.Errorf("unplaced: observer %d omitted, %d without topology; graph %v", omitted, noTopo, out.Unplaced())
			}
		})
	}
}
