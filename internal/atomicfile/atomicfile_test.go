package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
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

// TestWriteThroughSymlink: a link to the real file stays a link, and the
// file it points to (elsewhere, through a relative link, or not yet
// existing) gets the content.
func TestWriteThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(shared, "topology.conf")
	for _, tt := range []struct{ name, dest string }{{"absolute", real}, {"relative", "shared/topology.conf"}} {
		link := filepath.Join(dir, tt.name+".conf")
		if err := os.Symlink(tt.dest, link); err != nil {
			t.Fatal(err)
		}
		want := "via " + tt.name + "\n"
		if _, err := atomicfile.Write(link, []byte(want), 0o644); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced (%v, %v)", tt.name, info.Mode(), err)
		}
		if got, err := os.ReadFile(real); err != nil || string(got) != want {
			t.Errorf("%s: target holds %q, %v; want %q", tt.name, got, err, want)
		}
	}
}

// TestWriteDevicesAndDirectories: a character device is written in place
// and stays a device; a directory is refused.
func TestWriteDevicesAndDirectories(t *testing.T) {
	t.Parallel()
	if _, err := atomicfile.Write(os.DevNull, []byte("x"), 0o644); err != nil {
		t.Fatalf("write %s: %v", os.DevNull, err)
	}
	if info, err := os.Stat(os.DevNull); err != nil || info.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, info.Mode(), err)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	if _, err := atomicfile.Write(link, []byte("x"), 0o644); err != nil {
		t.Fatalf("write through a link to %s: %v", os.DevNull, err)
	}
	if _, err := atomicfile.Write(dir, []byte("x"), 0o644); err == nil {
		t.Error("writing over a directory succeeded")
	}
}

// TestWriteFIFO: a FIFO that no process reads is refused at once (the
// open would otherwise wait for a reader for ever, deaf to signals); one
// that a process reads gets the data.
func TestWriteFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	if _, err := atomicfile.Write(fifo, []byte("x\n"), 0o644); !errors.Is(err, atomicfile.ErrNoReader) {
		t.Fatalf("write to a FIFO without a reader = %v, want ErrNoReader", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	if _, err := atomicfile.Write(fifo, []byte("topology\n"), 0o644); err != nil {
		t.Fatalf("write to a read FIFO: %v", err)
	}
	got, err := io.ReadAll(io.LimitReader(r, 9))
	if err != nil || string(got) != "topology\n" {
		t.Errorf("read %q, %v", got, err)
	}
	if info, err := os.Stat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", info.Mode(), err)
	}
}
