package cloud_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
	"github.com/toposcope/toposcope/testenv/cloudsim"
)

func TestIdentity(t *testing.T) {
	t.Parallel()
	emu := &cloudsim.IMDS{InstanceID: "i-0abc", Name: "gpu001", Region: "us-central1", Zone: "us-central1-a", GCPProjectNumber: "123"}
	tests := []struct {
		name string
		read func(*cloud.Client, context.Context) (cloud.Identity, error)
		want cloud.Identity
	}{
		{"aws", (*cloud.Client).AWS, cloud.Identity{InstanceID: "i-0abc", Region: "us-central1", Zone: "us-central1-a"}},
		{"gcp", (*cloud.Client).GCP, cloud.Identity{InstanceID: "i-0abc", Name: "gpu001", Region: "us-central1", Zone: "us-central1-a"}},
		{"oci", (*cloud.Client).OCI, cloud.Identity{InstanceID: "i-0abc", Name: "gpu001", Region: "us-central1"}},
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.read(cloud.NewClient(srv.Client(), srv.URL+"/"), context.Background())
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestIdentityErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	c := cloud.NewClient(nil, srv.URL)
	for name, read := range map[string]func(context.Context) (cloud.Identity, error){"aws": c.AWS, "gcp": c.GCP, "oci": c.OCI} {
		if _, err := read(context.Background()); !errors.Is(err, cloud.ErrMetadata) {
			t.Errorf("%s: err = %v, want ErrMetadata", name, err)
		}
	}
}

func TestMapping(t *testing.T) {
	t.Parallel()
	m := cloud.Mapping{Names: map[string]string{"i-1": "node1"}, ParseID: func(s string) string { return s[len(s)-3:] }}
	found := []cloud.Instance{
		{ID: "i-1", Path: []string{"leaf", "spine"}, Domain: "d1"},
		{ID: "i-2", Name: "host2", Path: []string{"leaf", "spine"}},
		{ID: "i-3"},
	}
	tests := []struct {
		name         string
		req          providers.Request
		wantNodes    int
		wantUnplaced []string
		allIDs       bool
	}{
		{"all", providers.Request{}, 3, []string{"i-3"}, true},
		{"by provider ID", providers.Request{Nodes: []providers.NodeRef{{Name: "x", InstanceID: "aws:///z/i-2"}}}, 1, nil, true},
		{"by configured name", providers.Request{Nodes: []providers.NodeRef{{Name: "node1"}}}, 1, nil, true},
		{"stranger", providers.Request{Nodes: []providers.NodeRef{{Name: "host2"}, {Name: "stranger"}}}, 2, []string{"stranger"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wanted, all := m.Want(tt.req)
			if len(tt.req.Nodes) > 0 && all != tt.allIDs {
				t.Errorf("allIDs = %v", all)
			}
			g, rep, err := m.Assemble(context.Background(), wanted, found)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Nodes()) != tt.wantNodes || len(g.Unplaced()) != len(tt.wantUnplaced) || rep.Count() != len(tt.wantUnplaced) {
				t.Fatalf("nodes %d unplaced %v report %+v", len(g.Nodes()), g.Unplaced(), rep)
			}
		})
	}
}

// TestOCIHostTopology reads rdmaTopologyData: the three blocks closest
// first and the GPU memory fabric; an incomplete path is no path.
func TestOCIHostTopology(t *testing.T) {
	t.Parallel()
	full := map[string]string{"customerLocalBlock": "ocid1.computelocalblock.x", "customerNetworkBlock": "ocid1.computenetworkblock.x",
		"customerHPCIslandId": "ocid1.hpcisland.x", "customerHostId": "ocid1.computebaremetalhost.x", "customerGpuMemoryFabric": "ocid1.computegpumemoryfabric.x"}
	partial := map[string]string{"customerLocalBlock": "ocid1.computelocalblock.x"}
	for _, tt := range []struct {
		name   string
		host   map[string]string
		path   string
		domain string
		err    bool
	}{
		{"full", full, "ocid1.computelocalblock.x>ocid1.computenetworkblock.x>ocid1.hpcisland.x", "ocid1.computegpumemoryfabric.x", false},
		{"partial", partial, "", "", false},
		{"none", nil, "", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&cloudsim.IMDS{OCIHost: tt.host})
			defer srv.Close()
			got, err := cloud.NewClient(srv.Client(), srv.URL).OCIHostTopology(context.Background())
			if tt.err {
				if !errors.Is(err, cloud.ErrMetadata) {
					t.Fatalf("err = %v, want ErrMetadata", err)
				}
				return
			}
			if err != nil || strings.Join(got.Path, ">") != tt.path || got.Domain != tt.domain {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
}
