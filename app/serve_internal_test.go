package app

import (
	"net"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
)

// TestBanner: the first line says which provider and engines run, "none"
// when nothing is published (never "[]"), and where the store is.
func TestBanner(t *testing.T) {
	t.Parallel()
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 49021}
	for _, tc := range []struct {
		name    string
		engines []string
		want    string
	}{
		{"no engines", nil, "toposcope 1.0.0: listening on http://127.0.0.1:49021 (provider sim; engines none)\n"},
		{"two engines", []string{"slurm", "k8s-labels"}, "toposcope 1.0.0: listening on http://127.0.0.1:49021 (provider sim; engines slurm, k8s-labels)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			printWhere(&out, "1.0.0", config.Default(), addr, "sim", tc.engines, "/var/lib/toposcope/toposcope.db")
			first, rest, _ := strings.Cut(out.String(), "\n")
			if first+"\n" != tc.want {
				t.Errorf("banner %q, want %q", first, strings.TrimSuffix(tc.want, "\n"))
			}
			if !strings.Contains(rest, "store:") || !strings.Contains(rest, "/var/lib/toposcope/toposcope.db") {
				t.Errorf("banner does not name the store:\n%s", rest)
			}
		})
	}
}
