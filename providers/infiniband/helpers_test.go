package infiniband

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	goldenfile "github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files and real-tool fixtures under testdata/")

func itoa(i int) string { return strconv.Itoa(i) }

// hostRange is the hostlist gpu[a-b], three digits.
func hostRange(a, b int) string {
	if a == b {
		return fmt.Sprintf("gpu%03d", a)
	}
	return fmt.Sprintf("gpu[%03d-%03d]", a, b)
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}
