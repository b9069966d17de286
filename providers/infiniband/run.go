package infiniband

import (
	"context"

	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/providers"
)

// Runner runs a command and returns what it printed on standard output.
// Tests substitute a fake; the provider uses ExecRunner.
type Runner interface {
	Run(ctx context.Context, argv []string) ([]byte, error)
}

// ExecRunner runs commands as child processes.
type ExecRunner struct{}

// Run executes argv directly (no shell), its standard output capped at
// providers.MaxSourceBytes. The process is killed when ctx ends. A
// failure says how the command ended, never what it printed.
func (ExecRunner) Run(ctx context.Context, argv []string) ([]byte, error) {
	return bounded.Run(ctx, argv, providers.MaxSourceBytes)
}
