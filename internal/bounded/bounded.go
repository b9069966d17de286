// Package bounded reads files and runs commands with a cap on how much
// they may produce, and without echoing what they produced in errors: a
// topology source that is too large, or a command that fails, must not
// exhaust memory or leak its contents into messages, logs or the store.
package bounded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// ErrTooLarge is wrapped when a file or a command's output exceeds its
// cap.
var ErrTooLarge = errors.New("larger than allowed")

// ReadFile reads the regular file path, refusing one of more than limit
// bytes (and a device, FIFO or directory, which have no size to check).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to flush
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, info.Mode().Type())
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes: %w (%d)", path, info.Size(), ErrTooLarge, limit)
	}
	return readAll(f, limit, path)
}

// readAll reads r to its end, failing past limit bytes.
func readAll(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes)", what, ErrTooLarge, limit)
	}
	return data, nil
}

// limitWriter keeps up to limit bytes and notes an overflow.
type limitWriter struct {
	buf      []byte
	limit    int64
	overflow bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	room := w.limit - int64(len(w.buf))
	if int64(len(p)) > room {
		w.buf = append(w.buf, p[:max(room, 0)]...)
		w.overflow = true
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Run executes argv directly (no shell) and returns its standard output,
// of at most limit bytes. The process is killed when ctx ends. A failure
// is a *CommandError when the command wrote on standard error: its
// message says how the command ended and how much it wrote, never what;
// its Excerpt (the end of standard error, bounded, escaped and redacted)
// is for the operator's own CLI and log, never for an API caller.
func Run(ctx context.Context, argv []string, limit int64) ([]byte, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stdout, stderr := &limitWriter{limit: limit}, &tailWriter{limit: ExcerptBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the pipes open must not hang us
	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("%w (%w)", ctxErr, err)
	}
	if err != nil {
		if stderr.n > 0 {
			return nil, &CommandError{Err: err, StderrBytes: stderr.n, Excerpt: excerpt(stderr.buf, stderr.n > int64(len(stderr.buf)))}
		}
		return nil, err
	}
	if stdout.overflow {
		return nil, fmt.Errorf("standard output: %w (%d bytes)", ErrTooLarge, limit)
	}
	return stdout.buf, nil
}
