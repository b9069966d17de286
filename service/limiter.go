package service

import (
	"context"
	"os"
	"time"
)

// Limiter bounds the discoveries running at once: the API requests share
// one, the discovery loop has one of its own.
type Limiter struct {
	slots chan struct{}
}

// newLimiter allows n discoveries at once (at least one).
func newLimiter(n int) *Limiter {
	return &Limiter{slots: make(chan struct{}, max(n, 1))}
}

// Acquire waits for a slot or for ctx to end.
func (l *Limiter) Acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release frees a slot taken by Acquire.
func (l *Limiter) Release() { <-l.slots }

// watcher notices changes of size or modification time of files.
type watcher struct {
	files []string
	seen  map[string]fileStamp
}

type fileStamp struct {
	size    int64
	modTime time.Time
	missing bool
}

func newWatcher(files []string) *watcher {
	if len(files) == 0 {
		return nil
	}
	w := &watcher{files: files, seen: map[string]fileStamp{}}
	w.changed()
	return w
}

// changed reports whether any file changed since the last call.
func (w *watcher) changed() bool {
	changed := false
	for _, f := range w.files {
		st := fileStamp{missing: true}
		if fi, err := os.Stat(f); err == nil {
			st = fileStamp{size: fi.Size(), modTime: fi.ModTime()}
		}
		if old, ok := w.seen[f]; ok && old != st {
			changed = true
		}
		w.seen[f] = st
	}
	return changed
}
