package placement

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestWriteTableGolden(t *testing.T) {
	t.Parallel()
	small := model(t, "small-tree")
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"small-tree-reclaim", Request{Account: "a", GPUs: 64, MinRuntime: time.Hour, Duration: 2 * time.Hour}},
		{"small-tree-free", Request{Account: "a", GPUs: 16, Within: ScopeLeaf}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := place(t, small, smallTreeLedger(), tc.req, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteTable(&buf, res); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("output differs from %s (run with -update):\n%s", path, buf.String())
			}
		})
	}
}
