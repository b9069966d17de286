package budget

import (
	"context"
	"errors"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what the test reported, so that a
// budget's failure can be checked without failing this test.
type recorder struct {
	testing.TB
	deadline time.Time
	cleanups []func()
	errors   []string
}

func (r *recorder) Helper()                     {}
func (r *recorder) Name() string                { return "TestSlow" }
func (r *recorder) Cleanup(f func())            { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, a ...any)   { r.errors = append(r.errors, f) }
func (r *recorder) Deadline() (time.Time, bool) { return r.deadline, !r.deadline.IsZero() }
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		budget   time.Duration
		deadline time.Duration // of the test binary, from now; 0 for none
		wait     bool          // wait for the context to end
		fails    bool
		within   time.Duration // the context's deadline is at most this far
	}{
		{name: "used up", budget: 20 * time.Millisecond, wait: true, fails: true, within: 20 * time.Millisecond},
		{name: "not used up", budget: time.Hour, within: time.Hour},
		{name: "cut by the binary's timeout", budget: time.Hour, deadline: margin + 30*time.Millisecond, wait: true, fails: true, within: 30 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{TB: t}
			if tc.deadline > 0 {
				r.deadline = time.Now().Add(tc.deadline)
			}
			before := time.Now()
			ctx := Context(r, tc.budget)
			dl, ok := ctx.Deadline()
			if !ok || dl.Sub(before) > tc.within+time.Second {
				t.Errorf("deadline %v after the start, want at most %v", dl.Sub(before), tc.within)
			}
			if tc.wait {
				<-ctx.Done()
				if !errors.Is(context.Cause(ctx), ErrUsedUp) {
					t.Errorf("cause %v, want ErrUsedUp", context.Cause(ctx))
				}
			}
			r.end()
			if got := len(r.errors) > 0; got != tc.fails {
				t.Errorf("the test failed: %v, want %v (%v)", got, tc.fails, r.errors)
			}
			if ctx.Err() == nil {
				t.Error("the context outlived its test")
			}
		})
	}
}
