package aws_test

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }

func yamlNode(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	if len(n.Content) == 0 {
		return nil
	}
	return n.Content[0]
}
