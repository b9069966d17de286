// Package logflags holds the --log-level and --log-format flags that both
// binaries (toposcope and toposcope-agent) take, and the slog logger they
// ask for.
package logflags

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"
)

// ErrUsage is wrapped by command-line errors: a flag's value that is not
// one of its choices, and every command's usage errors.
var ErrUsage = errors.New("usage")

// Flags are the log flags' values.
type Flags struct {
	Level  string
	Format string
}

// Register adds --log-level (default warn) and --log-format (default
// text) to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Level, "log-level", "warn", "log level: debug, info, warn or error")
	fs.StringVar(&f.Format, "log-format", "text", "log format: text or json")
}

// Logger builds the logger the flags ask for, writing to w.
func (f *Flags) Logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.Level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", ErrUsage, f.Level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(f.Format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want text or json", ErrUsage, f.Format)
}
