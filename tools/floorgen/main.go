// Command floorgen is the start-up floor of `toposcope generate --provider
// sim --engine slurm`: the same model file to the same Slurm output, by
// the same sim provider and Slurm engine, in a program that links nothing
// else. toposcope's own binary links every provider's SDK and client-go,
// whose package initialisation Go runs before any command; the difference
// between the two is what that costs. It takes the arguments the
// side-by-side script passes to toposcope, so that the script can time it
// in toposcope's place:
//
//	go build -trimpath -ldflags '-s -w' -o /tmp/floorgen ./tools/floorgen
//	/tmp/floorgen generate --provider sim --model fat-100000.yaml --engine slurm --plugin topology/tree
//	TOPOGRAPH_SRC=... bash ../shared/bench/topograph-pair/run.sh /tmp/floorgen 1000 100000 300000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/sim"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "floorgen:", err)
		os.Exit(1)
	}
}

// errUsage is returned for arguments other than generate's.
var errUsage = errors.New("usage: floorgen generate --provider sim --model FILE --engine slurm [--plugin P] [--slurm-version V]")

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "generate" {
		return errUsage
	}
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	provider := fs.String("provider", "sim", "provider: sim only")
	engine := fs.String("engine", "slurm", "engine: slurm only")
	model := fs.String("model", "", "sim model: bundled name or file")
	plugin := fs.String("plugin", "", "topology/tree, topology/block or topology/yaml")
	version := fs.String("slurm-version", "", "target Slurm version")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *provider != sim.Name || *engine != slurm.Name || *model == "" || fs.NArg() > 0 {
		return errUsage
	}
	m, err := sim.Load(*model)
	if err != nil {
		return err
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		return err
	}
	cfg := slurm.DefaultConfig()
	if *plugin != "" {
		cfg.Plugin = *plugin
	}
	if *version != "" {
		cfg.SlurmVersion = *version
	}
	e, err := slurm.New(cfg, engines.Deps{Stdout: stdout})
	if err != nil {
		return err
	}
	return e.Publish(ctx, g)
}
