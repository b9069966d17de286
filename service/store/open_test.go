package store_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toposcope/toposcope/service/store"
)

// TestOpenInUse: a store locked by another live process that wrote its
// PID fails at once, naming the PID and --store.
func TestOpenInUse(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("flock"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("flock (util-linux) is not installed")
		}
		t.Skip("flock (util-linux) is not installed")
	}
	path := filepath.Join(t.TempDir(), "toposcope.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	holder := exec.CommandContext(ctx, "flock", "-x", path, "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Wait() }()
	defer cancel()
	pid := strconv.Itoa(holder.Process.Pid)
	if err := os.WriteFile(path+".pid", []byte(pid+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // flock takes the lock
	start := time.Now()
	_, err = store.Open(path, store.Options{LockTimeout: 30 * time.Second})
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "PID "+pid) || !strings.Contains(err.Error(), "--store") ||
		!strings.Contains(err.Error(), "store.path") || strings.Contains(err.Error(), "server.store.path") {
		t.Fatalf("Open = %v, want ErrInUse naming PID %s, --store and the configuration key store.path", err, pid)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("Open waited %s; a store held by a known process fails at once", time.Since(start))
	}
}

// TestOpenCorrupt: garbage where the store should be is ErrCorrupt, not
// a panic.
func TestOpenCorrupt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toposcope.db")
	junk := make([]byte, 16<<10)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(path, store.Options{}); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Open(junk) = %v, want ErrCorrupt", err)
	}
}

// TestOpenPIDFileSymlink: a symbolic link where the PID file goes is
// refused, and its target is left alone.
func TestOpenPIDFileSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "toposcope.db")
	if err := os.Symlink(target, path+".pid"); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(path, store.Options{})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open followed a symbolic link at the PID file")
	}
	if !strings.Contains(err.Error(), "PID file") {
		t.Errorf("Open = %v, want it to name the PID file", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep me\n" {
		t.Errorf("the link's target was overwritten: %q", data)
	}
}

// TestCorruptSnapshotHint: a snapshot or graph record of random bytes
// is ErrCorrupt with the same "move it aside" hint as a corrupt header.
func TestCorruptSnapshotHint(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toposcope.db")
	s := open(t, path)
	_, j := graph(t, "n1", "n2")
	snap := &store.Snapshot{CreatedAt: time.Now(), Status: store.StatusAccepted}
	if err := s.AddSnapshot(t.Context(), snap, j, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte{0x1f, 0x8b, 0x08, 0x00, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0x42}
	err = db.Update(func(tx *bolt.Tx) error {
		k := binary.BigEndian.AppendUint64(nil, snap.ID)
		return errors.Join(tx.Bucket([]byte("graphs")).Put(k, junk), tx.Bucket([]byte("snapshots")).Put(k, junk))
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer func() { _ = s.Close() }()
	if _, err := s.Graph(t.Context(), snap.ID); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "aside") {
		t.Errorf("Graph = %v, want ErrCorrupt with the hint", err)
	}
	if _, err := s.Snapshot(t.Context(), snap.ID); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), path+" aside") {
		t.Errorf("Snapshot = %v, want ErrCorrupt with the hint", err)
	}
	if _, err := s.Snapshot(t.Context(), snap.ID+1); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Snapshot(absent) = %v, want ErrNotFound only", err)
	}
}
