// Command toposcope discovers GPU-cluster network topology and publishes it
// to schedulers. See `toposcope --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
