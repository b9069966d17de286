package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
)

// TestProviderAuthFailure: a cloud that refuses the credentials gives the
// REST caller a 403 provider_auth naming the provider, never a 500, and
// never the token.
func TestProviderAuthFailure(t *testing.T) {
	t.Parallel()
	g, err := sim.LoadGraph("small-tree")
	if err != nil {
		t.Fatal(err)
	}
	emu := cloudsim.NewNebius(cloudsim.FromGraph(g), cloudsim.Faults{}, cloudsim.Token, "project-e00auth")
	addr, err := emu.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()
	s := newStack(t, stackOpts{provider: "nebius",
		params: "url: http://" + addr + "\nallowHTTP: true\nproject: project-e00auth\nmetadataURL: \"-\"\nretry: {maxAttempts: 1}\n"})
	const wrong = "wrong-token-0123456789"
	w := s.do(http.MethodPost, "/v1/generate", `{"provider":{"name":"nebius","creds":{"token":"`+wrong+`"}},"engine":{"name":"slurm"}}`)
	if w.Code != http.StatusAccepted {
		t.Fatalf("generate = %d %s", w.Code, w.Body)
	}
	res := s.poll("/v1/topology?uid=" + w.Body.String())
	e := errorOf(t, res)
	if res.Code != http.StatusForbidden || e.Code != "provider_auth" || !strings.Contains(e.Message, "nebius") || strings.Contains(res.Body.String(), wrong) {
		t.Errorf("topology = %d %s", res.Code, res.Body)
	}
}
