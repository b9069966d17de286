// Package budget gives a slow test (one that builds an image, installs a
// package, starts a real scheduler) a time budget of its own instead of
// the one -timeout of its test binary: when the budget runs out, the
// test's commands are stopped through the context and the test fails
// saying which budget ran out, while the binary goes on with its other
// tests. A budget also ends a minute before the binary's own -timeout,
// so that go test's panic, which loses every test's output, never comes
// first.
package budget

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// margin is how long before the test binary's deadline a budget ends.
const margin = time.Minute

// ErrUsedUp is the cause of a budget context that ran out.
var ErrUsedUp = errors.New("time budget used up")

// deadliner is *testing.T's Deadline.
type deadliner interface {
	Deadline() (time.Time, bool)
}

// Context returns a context that ends after d (from now) or a minute
// before the test binary's deadline, whichever comes first, and is
// cancelled when the test ends. If it ran out before the test ended, the
// test fails with a message that names the budget; context.Cause of the
// context wraps ErrUsedUp.
func Context(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	start := time.Now()
	end := start.Add(d)
	what := fmt.Sprintf("%s's budget of %s", t.Name(), d)
	if dl, ok := t.(deadliner); ok {
		if binEnd, ok := dl.Deadline(); ok && binEnd.Add(-margin).Before(end) {
			end = binEnd.Add(-margin)
			what = fmt.Sprintf("%s's budget (%s, cut to %s by the test binary's -timeout)", t.Name(), d, end.Sub(start).Round(time.Second))
		}
	}
	ctx, cancel := context.WithDeadlineCause(context.Background(), end, fmt.Errorf("%w: %s", ErrUsedUp, what))
	t.Cleanup(func() {
		if errors.Is(context.Cause(ctx), ErrUsedUp) {
			t.Errorf("%v (after %s)", context.Cause(ctx), time.Since(start).Round(time.Second))
		}
		cancel()
	})
	return ctx
}
