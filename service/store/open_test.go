package store_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "PID "+pid) || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("Open = %v, want ErrInUse naming PID %s and --store", err, pid)
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
