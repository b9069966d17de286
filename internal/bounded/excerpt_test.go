package bounded

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRunExcerpt(t *testing.T) {
	t.Parallel()
	many := ""
	for i := range 30 {
		many += fmt.Sprintf("echo line%02d >&2; ", i)
	}
	cases := []struct {
		name, script string
		want, not    []string
	}{
		{"reason", "echo 'scontrol: fatal: Could not establish a configuration source' >&2; exit 1",
			[]string{"scontrol: fatal: Could not establish a configuration source"}, nil},
		{"secrets", "echo 'login password=hunter2 token: abc.def Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig' >&2; " +
			"echo 'url https://admin:s3cr3t@db.example/x key AKIAIOSFODNN7EXAMPLE0aB1cD2eF3gH4iJ5kL6 on gpu-node-0001.cluster.example.internal' >&2; exit 2",
			[]string{"password=[redacted]", "token: [redacted]", "https://[redacted]@db.example/x", "gpu-node-0001.cluster.example.internal"},
			[]string{"hunter2", "abc.def", "eyJ", "s3cr3t", "admin:", "AKIAIOSFODNN7EXAMPLE0aB1cD2eF3gH4iJ5kL6"}},
		{"control", `printf 'bad\033[2Jclear\rover\000nul\377x\n' >&2; exit 1`,
			[]string{`bad\x1b[2Jclear\rover\x00nul\xffx`}, []string{"\033", "\r", "\x00"}},
		{"last lines", many + "exit 1", []string{"line10", "line29"}, []string{"line09"}},
		{"last bytes", "head -c 5000 /dev/zero | tr '\\0' a >&2; echo; echo end >&2; exit 1",
			[]string{"...aaa", "end"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Run(context.Background(), []string{"sh", "-c", tc.script}, 10)
			var ce *CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("Run = %v, want a *CommandError", err)
			}
			if !strings.Contains(err.Error(), "bytes on standard error, not shown") {
				t.Errorf("message %q does not say the output is not shown", err)
			}
			ex, ok := Excerpt(fmt.Errorf("wrapped: %w", err))
			if !ok {
				t.Fatalf("no excerpt in %v", err)
			}
			if len(ex) > ExcerptBytes*4+3 || strings.Count(ex, "\n") >= ExcerptLines {
				t.Errorf("excerpt of %d bytes, %d lines: too long", len(ex), strings.Count(ex, "\n")+1)
			}
			for _, w := range tc.want {
				if !strings.Contains(ex, w) {
					t.Errorf("excerpt lacks %q:\n%s", w, ex)
				}
				if strings.Contains(err.Error(), w) && w != "end" {
					t.Errorf("message %q quotes the output %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(ex, n) {
					t.Errorf("excerpt shows %q:\n%s", n, ex)
				}
			}
		})
	}
	if _, ok := Excerpt(errors.New("plain")); ok {
		t.Error("Excerpt found one in a plain error")
	}
}
