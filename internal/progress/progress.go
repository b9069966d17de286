// Package progress draws the progress of long command-line work on one
// terminal line: a count with its percentage, or an elapsed time when the
// total is unknown. It draws nothing until the work has run for a
// moment, and nothing at all when the output is not a terminal, so that
// quick commands and scripts see no difference.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Defaults of a Line.
const (
	// Delay is how long work runs before the first draw.
	Delay = 300 * time.Millisecond
	// Interval is the least time between two draws.
	Interval = 100 * time.Millisecond
)

// Terminal reports whether w is a terminal (a character device).
func Terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Line is one progress line. A nil *Line draws nothing, so callers need
// not check whether progress is shown.
type Line struct {
	w      io.Writer
	label  string
	total  int
	now    func() time.Time
	start  time.Time
	mu     sync.Mutex
	last   time.Time
	drawn  bool
	done   int
	stop   chan struct{}
	ticker sync.WaitGroup
}

// New returns a Line that draws on w, or nil when w is nil. total is the
// count that completes the work; 0 when unknown. now is the clock
// (time.Now if nil).
func New(w io.Writer, label string, total int, now func() time.Time) *Line {
	if w == nil {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &Line{w: w, label: label, total: total, now: now, start: now()}
}

// Set records that done units are complete and redraws when due.
func (l *Line) Set(done int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = done
	t := l.now()
	if t.Sub(l.start) < Delay || (l.drawn && t.Sub(l.last) < Interval) {
		return
	}
	l.draw(t)
}

// Tick redraws the elapsed time every interval until Finish, for work
// whose count is unknown (a discovery waiting on a slow API).
func (l *Line) Tick(interval time.Duration) {
	if l == nil {
		return
	}
	l.stop = make(chan struct{})
	l.ticker.Add(1)
	go func() {
		defer l.ticker.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.redraw()
			}
		}
	}()
}

// redraw draws the line again when due, with the count unchanged.
func (l *Line) redraw() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.now(); t.Sub(l.start) >= Delay && (!l.drawn || t.Sub(l.last) >= Interval) {
		l.draw(t)
	}
}

// draw writes the line; l.mu is held.
func (l *Line) draw(t time.Time) {
	el := t.Sub(l.start).Round(100 * time.Millisecond)
	if l.total > 0 {
		fmt.Fprintf(l.w, "\r%s: %d/%d (%d%%) %v\x1b[K", l.label, l.done, l.total, 100*l.done/l.total, el)
	} else {
		fmt.Fprintf(l.w, "\r%s… %v\x1b[K", l.label, el)
	}
	l.drawn, l.last = true, t
}

// Finish stops the ticker and clears the line if it was drawn.
func (l *Line) Finish() {
	if l == nil {
		return
	}
	if l.stop != nil {
		close(l.stop)
		l.ticker.Wait()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
}
