// Command floorgen is the start-up floor of `toposcope generate --provider
// sim --engine slurm`: the same model file to the same Slurm output, by
// the same sim provider and Slurm engine, in a program that links nothing
// else. toposcope's own binary links every provider's SDK and client-go,
// whose package initialisation Go runs before any command; the difference
// between the two is what that costs. It takes the arguments the
// side-by-side script passes to toposcope (generate, and model generate
// for the script's model files), so that the script can time it in
// toposcope's place:
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

// errUsage is returned for arguments other than generate's and model
// generate's.
var errUsage = errors.New("usage: floorgen generate --provider sim --model FILE --engine slurm [--plugin P] [--slurm-version V]\n" +
	"       floorgen model generate --nodes N [--shape S] [--nodes-per-leaf N] [--leaves-per-spine N] [--domain-size N] [--prefix P] [--output FILE] [--quiet]")

func run(ctx context.Context, args []string, stdout io.Writer) error {
	switch {
	case len(args) > 1 && args[0] == "model" && args[1] == "generate":
		return modelGenerate(args[2:], stdout)
	case len(args) == 0 || args[0] != "generate":
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

// modelGenerate writes a generated model, as toposcope model generate
// does.
func modelGenerate(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("model generate", flag.ContinueOnError)
	var o sim.GenerateOptions
	shape := fs.String("shape", string(sim.ShapeFatTree), "fat-tree or nvl72")
	fs.IntVar(&o.Nodes, "nodes", 0, "exact number of nodes")
	fs.IntVar(&o.NodesPerLeaf, "nodes-per-leaf", 0, "nodes under each leaf (0: the shape's default)")
	fs.IntVar(&o.LeavesPerSpine, "leaves-per-spine", 0, "leaves under each spine (0: the shape's default)")
	fs.IntVar(&o.DomainSize, "domain-size", 0, "nodes per NVLink domain (0: the shape's default)")
	fs.StringVar(&o.Prefix, "prefix", "", "node name prefix (default: the shape's)")
	output := fs.String("output", "", "file to write; default standard output")
	fs.Bool("quiet", false, "accepted for toposcope's arguments; floorgen prints no progress")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errUsage
	}
	o.Shape = sim.Shape(*shape)
	data, err := sim.Generate(o)
	if err != nil {
		return err
	}
	if *output == "" {
		_, err = stdout.Write(data)
		return err
	}
	return os.WriteFile(*output, data, 0o644)
}
