package progress_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/progress"
)

// clock is a test clock moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLine(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(0, 0)}
	var b bytes.Buffer
	l := progress.New(&b, "simulate bestfit", 400, c.now)
	l.Set(10)
	if b.Len() != 0 {
		t.Fatalf("drawn before the delay: %q", b.String())
	}
	c.t = c.t.Add(progress.Delay)
	l.Set(100)
	if got := b.String(); got != "\rsimulate bestfit: 100/400 (25%) 300ms\x1b[K" {
		t.Fatalf("first draw = %q", got)
	}
	b.Reset()
	c.t = c.t.Add(progress.Interval / 2)
	l.Set(150)
	if b.Len() != 0 {
		t.Fatalf("drawn again within the interval: %q", b.String())
	}
	c.t = c.t.Add(progress.Interval)
	l.Set(400)
	if got := b.String(); !strings.Contains(got, "400/400 (100%)") {
		t.Fatalf("second draw = %q", got)
	}
	b.Reset()
	l.Finish()
	if got := b.String(); got != "\r\x1b[K" {
		t.Fatalf("finish = %q; want the line cleared", got)
	}
}

func TestUnknownTotal(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(0, 0)}
	var b bytes.Buffer
	l := progress.New(&b, "discover with aws", 0, c.now)
	c.t = c.t.Add(2 * time.Second)
	l.Set(0)
	if got := b.String(); got != "\rdiscover with aws… 2s\x1b[K" {
		t.Fatalf("draw = %q", got)
	}
}

func TestQuiet(t *testing.T) {
	t.Parallel()
	l := progress.New(nil, "x", 10, nil)
	l.Set(5) // a nil line draws nothing and does not panic
	l.Tick(time.Millisecond)
	l.Finish()
	if progress.Terminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if progress.Terminal(f) {
		t.Error("a regular file is a terminal")
	}
}
