package charts_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestValuesSchemaDefaults: every value that the README's table lists is
// described by values.schema.json, whose default is the one of
// values.yaml.
func TestValuesSchemaDefaults(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rows, err := valueDocs(doc.Content[0], "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		node := schema
		for _, part := range strings.Split(r.key, ".") {
			props, _ := node["properties"].(map[string]any)
			node, _ = props[part].(map[string]any)
			if node == nil {
				break
			}
		}
		if node == nil {
			t.Errorf("%s: not in values.schema.json", r.key)
			continue
		}
		def, ok := node["default"]
		if !ok {
			t.Errorf("%s: no default in values.schema.json (values.yaml: %s)", r.key, r.def)
			continue
		}
		got, err := json.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(r.def)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: schema default %s, values.yaml %s", r.key, got, want.Bytes())
		}
	}
}

// TestImagesNotice: the chart README's first line says that the default
// images are not published and copies what `make image` writes
// (hack/image.sh's default archive) to a registry; the install page's
// skopeo command copies the same archive to the repository and tag its
// helm install sets.
func TestImagesNotice(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile("../hack/image.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^OUT="\$\{1:-([^}]+)\}"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("hack/image.sh: no default OUT archive")
	}
	archive := "oci-archive:" + string(m[1])

	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(readme), "\n")
	for _, want := range []string{"not published anywhere", "make image", "skopeo copy " + archive + " docker://REGISTRY/toposcope:TAG", "image.repository"} {
		if !strings.Contains(first, want) {
			t.Errorf("the chart README's first line lacks %q:\n%s", want, first)
		}
	}

	page, err := os.ReadFile(gettingStarted)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "not published anywhere") {
		t.Errorf("%s does not say that the default images are not published", gettingStarted)
	}
	copyCmd := pageCommand(t, string(page), "skopeo copy ")
	install := pageCommand(t, string(page), "helm install ")
	var repo, tag string
	for i, w := range install {
		if i > 0 && install[i-1] == "--set" {
			if v, ok := strings.CutPrefix(w, "image.repository="); ok {
				repo = v
			}
			if v, ok := strings.CutPrefix(w, "image.tag="); ok {
				tag = v
			}
		}
	}
	if len(copyCmd) != 4 || copyCmd[2] != archive || copyCmd[3] != "docker://"+repo+":"+tag {
		t.Errorf("%s: %q, want skopeo copy %s docker://%s:%s (the image its helm install sets)", gettingStarted, copyCmd, archive, repo, tag)
	}
}
