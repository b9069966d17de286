package placement

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"
	"time"

	goldenfile "github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestWriteTableGolden(t *testing.T) {
	t.Parallel()
	small := model(t, "small-tree")
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"small-tree-reclaim", Request{Account: "a", GPUs: 64, MinRuntime: time.Hour, Duration: 6 * time.Hour}},
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
			goldenfile.Check(t, path, buf.Bytes(), *update)
		})
	}
}
