package packaging_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// TestShippedConfig checks packaging/config.yaml as shipped with
// `toposcope check`; the chroot test checks it with its commented provider
// and engine enabled, where the package made /var/lib/toposcope.
func TestShippedConfig(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), []string{"check", "--config", "config.yaml"}, cli.Env{Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("check: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "provider sim; engines none") {
		t.Errorf("check: %q", out.String())
	}
}

// enabledConfig is config.yaml with its commented infiniband provider and
// slurm engine enabled, as docs/install-slurm.md says to.
func enabledConfig(t *testing.T, shipped string) string {
	t.Helper()
	doc := uncomment(t, shipped, "# engines:", "engines: []")
	return uncomment(t, doc, "# provider:", "provider:\n  name: sim\n  params:\n    model: small-tree\n")
}

// uncomment removes the replaced text and turns the commented block that
// starts with marker (lines starting "# " up to the first other line)
// into YAML.
func uncomment(t *testing.T, doc, marker, replaced string) string {
	t.Helper()
	if !strings.Contains(doc, replaced) || !strings.Contains(doc, marker) {
		t.Fatalf("config.yaml lacks %q or %q", replaced, marker)
	}
	doc = strings.Replace(doc, replaced, "", 1)
	lines := strings.Split(doc, "\n")
	for i := range lines {
		if !strings.HasPrefix(lines[i], marker) {
			continue
		}
		for j := i; j < len(lines) && strings.HasPrefix(lines[j], "# "); j++ {
			line := strings.TrimPrefix(lines[j], "# ")
			if k := strings.Index(line, " #"); k >= 0 {
				line = strings.TrimRight(line[:k], " ")
			}
			lines[j] = line
		}
		break
	}
	return strings.Join(lines, "\n")
}
