package config_test

import (
	"errors"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
)

// FuzzParse feeds arbitrary documents to the configuration decoder: it
// never panics, and every failure is a configuration error (so that the
// CLI exits 2 naming the key) or a YAML syntax error.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"provider: {name: sim, params: {model: nvl72}}\nengines: [{name: slurm, params: {plugin: topology/block}}]\n",
		"server: {listen: 127.0.0.1:0, maxBodyBytes: lots}\n",
		"discovery: {interval: 5m, shrinkGuard: 2, shrinkWindow: -1h}\n",
		"placement: {syncInterval: 0s, sources: [{name: slurm}]}\n",
		"a: &a [*a]\n",
		"kubernetes: {leaderElection: {enabled: true, advertiseURL: x}}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := config.Parse(data)
		if err != nil && !errors.Is(err, config.ErrInvalid) && err.Error() == "" {
			t.Fatalf("an error with no message for %q", data)
		}
	})
}
