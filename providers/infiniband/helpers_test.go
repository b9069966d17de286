package infiniband

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
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
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run go test -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
