package server

import (
	"fmt"
	"sync"

	"github.com/toposcope/toposcope/service"
)

// errSnapshotReads is refused when the older snapshots' graphs in
// memory are at server.maxSnapshotReads: 429 with Retry-After.
var errSnapshotReads = fmt.Errorf("%w: server.maxSnapshotReads reads of older snapshots are in progress", service.ErrBusy)

// readSlots is a weighted semaphore over work that holds much memory: the
// reads that hold an older snapshot's graph (decoded from the store, and
// for pretty or DOT answers its document too), one unit per graph, and
// the scheduler extender's calls, one unit each. It never waits: work
// that does not fit is refused, so memory stays bounded by the units
// times one unit's size whatever the clients do.
type readSlots struct {
	mu   sync.Mutex
	free int
	size int
}

func newReadSlots(size int) *readSlots { return &readSlots{free: size, size: size} }

// tryAcquire takes n units (at most the whole size, so that any read
// can run alone) and returns how many to release, or false.
func (r *readSlots) tryAcquire(n int) (int, bool) {
	n = min(n, r.size)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.free < n {
		return 0, false
	}
	r.free -= n
	return n, true
}

func (r *readSlots) release(n int) {
	r.mu.Lock()
	r.free += n
	r.mu.Unlock()
}

// olderGraphs counts the ids that are not the current snapshot (their
// graphs are read from the store).
func (h *handlers) olderGraphs(ids ...uint64) int {
	n := 0
	st := h.Loop.State()
	for _, id := range ids {
		if st.Snapshot == nil || st.Snapshot.ID != id {
			n++
		}
	}
	return n
}
