package server

import (
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/toposcope/toposcope/service/store"
)

// TestStoreFullStatus: a store write that found no space is 507
// store_full, not 500 internal.
func TestStoreFullStatus(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("append ledger: %w", fmt.Errorf("%w: /x/toposcope.db: %w", store.ErrFull, &os.PathError{Op: "write", Path: "/x/toposcope.db", Err: syscall.ENOSPC}))
	if status, code := statusOf(err); status != http.StatusInsufficientStorage || code != "store_full" {
		t.Errorf("statusOf = %d %s, want 507 store_full", status, code)
	}
}
