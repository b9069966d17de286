// Command toposcope-agent is the node agent alone, for the DaemonSet
// image: the same command as `toposcope agent`, in a binary that links
// no cloud SDK and no provider or engine. See `toposcope-agent --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/toposcope/toposcope/cmd/toposcope/agentcmd"
	"github.com/toposcope/toposcope/cmd/toposcope/buildinfo"
	"github.com/toposcope/toposcope/cmd/toposcope/logflags"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var logs logflags.Flags
	cmd := agentcmd.New("toposcope-agent", os.Stdout, func() (*slog.Logger, error) { return logs.Logger(os.Stderr) })
	logs.Register(cmd.Flags())
	cmd.Version = buildinfo.Read().String()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "toposcope-agent: %v\n", err)
		if errors.Is(err, agentcmd.ErrUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
