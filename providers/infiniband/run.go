package infiniband

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// Runner runs a command and returns what it printed on standard output.
// Tests substitute a fake; the provider uses ExecRunner.
type Runner interface {
	Run(ctx context.Context, argv []string) ([]byte, error)
}

// ExecRunner runs commands as child processes.
type ExecRunner struct{}

// stderrTail is how much of a failed command's standard error an error
// quotes.
const stderrTail = 2048

// Run executes argv. The process is killed when ctx ends. A non-zero exit
// is an error quoting the end of the command's standard error.
func (ExecRunner) Run(ctx context.Context, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the pipes open must not hang us
	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("%w (%w)", ctxErr, err)
	}
	if err != nil {
		tail := bytes.TrimSpace(stderr.Bytes())
		if len(tail) > stderrTail {
			tail = append([]byte("..."), tail[len(tail)-stderrTail:]...)
		}
		if len(tail) == 0 {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s", err, tail)
	}
	return stdout.Bytes(), nil
}
