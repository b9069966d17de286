package config_test

import (
	"errors"
	"strings"
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

// TestTypeErrorsNameKeyAndLine: a value of the wrong type is reported
// under its key path and line, in words, every one at once.
func TestTypeErrorsNameKeyAndLine(t *testing.T) {
	t.Parallel()
	_, err := config.Parse([]byte("server:\n  listen: 127.0.0.1:0\n  maxBodyBytes: lots\ndiscovery:\n  interval: 5x\n"))
	for _, want := range []string{`server.maxBodyBytes (line 3): want an integer, got "lots"`, `discovery.interval (line 5): want a duration such as 30s or 5m, got "5x"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse error %v lacks %q", err, want)
		}
	}
}
