package bounded

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small"), filepath.Join(dir, "big")
	if err := os.WriteFile(small, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(small, 10); err != nil || string(data) != "abc" {
		t.Errorf("small: %q, %v", data, err)
	}
	if _, err := ReadFile(big, 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: %v, want ErrTooLarge", err)
	}
	for _, p := range []string{"/dev/zero", dir} {
		if _, err := ReadFile(p, 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v, want not a regular file", p, err)
		}
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if out, err := Run(ctx, []string{"printf", "hello"}, 10); err != nil || string(out) != "hello" {
		t.Errorf("printf: %q, %v", out, err)
	}
	if _, err := Run(ctx, []string{"printf", "hello world"}, 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("overflow: %v, want ErrTooLarge", err)
	}
	// The secret the command prints on stderr never reaches the error.
	_, err := Run(ctx, []string{"sh", "-c", "echo root:secret-hash >&2; exit 3"}, 10)
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failure: %v", err)
	}
	// No shell: the argument is passed as it is.
	if out, err := Run(ctx, []string{"printf", "%s", "$(id)"}, 10); err != nil || string(out) != "$(id)" {
		t.Errorf("no shell: %q, %v", out, err)
	}
}
