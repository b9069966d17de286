package store

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestFullNamesTheFile: a write that failed for want of space is
// ErrFull naming the store file; other errors pass as they are. (A full
// file system cannot be made without privileges, so the error is made.)
func TestFullNamesTheFile(t *testing.T) {
	t.Parallel()
	s := &boltBackend{path: "/var/lib/toposcope/toposcope.db"}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT} {
		err := s.full(&os.PathError{Op: "write", Path: s.path, Err: errno})
		if !errors.Is(err, ErrFull) || !errors.Is(err, errno) || !strings.Contains(err.Error(), s.path) {
			t.Errorf("full(%v) = %v", errno, err)
		}
	}
	if err := s.full(syscall.EIO); errors.Is(err, ErrFull) {
		t.Errorf("full(EIO) = %v, want it passed as it is", err)
	}
}
