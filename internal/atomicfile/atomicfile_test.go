package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toposcope/toposcope/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "topology.conf")
	changed, err := atomicfile.Write(path, []byte("one\n"), 0o644)
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	changed, err = atomicfile.Write(path, []byte("one\n"), 0o644)
	if err != nil || changed {
		t.Fatalf("same content: changed=%v err=%v", changed, err)
	}
	if _, err := atomicfile.Write(path, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "two\n" {
		t.Errorf("content = %q", got)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v", st.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left files behind: %v", entries)
	}
}

func TestWriteFailureKeepsOldFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory where the file should be replaced makes rename fail.
	target := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := atomicfile.Write(target, []byte("new"), 0o644); err == nil {
		t.Fatal("want an error replacing a non-empty directory")
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Errorf("old file changed: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary file left behind: %v", entries)
	}
}
