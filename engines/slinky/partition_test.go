package slinky

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/internal/slurmrest"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/slurmtest"
)

// TestPartitionFromSlurmrestd: with no scontrol at hand, a topology that
// names a partition reads it from a real slurmrestd (22.05, beside its
// slurmctld, with a token slurmctld issued): the node annotations give
// the partition's topology to its nodes only, and topology.yaml lists
// only them in it.
func TestPartitionFromSlurmrestd(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := kubetest.Fabric{Prefix: "p", Nodes: 36, NodesPerLeaf: 9, DomainSize: 9}
	g := f.MustGraph(t)
	names := f.NodeNames()
	gpu := names[:18]
	ctl, err := slurmtest.Start(ctx, t, slurmtest.Options{Version: slurmtest.V2205, Nodes: names, JWT: true,
		Topology:   "SwitchName=s Nodes=" + strings.Join(names, ",") + "\n",
		Partitions: []slurmtest.Partition{{Name: "gpu", Nodes: strings.Join(gpu, ",")}}})
	if err != nil {
		t.Fatal(err)
	}
	restd, err := ctl.StartRESTD(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := ctl.TokenFile(ctx, t, "nobody")
	cfg := withMode(DefaultConfig(), kube.ModePrint)
	cfg.Slurm.Topologies = []slurm.TopologyConfig{
		{Name: "default", Plugin: slurm.KindTree, ClusterDefault: true},
		{Name: "gpu", Plugin: slurm.KindBlock, Partition: "gpu"},
	}
	cfg.Slurm.Slurmrestd = &slurmrest.Config{Connection: httpretry.Connection{URL: restd.URL, AllowHTTP: true}, TokenFile: tokenFile, User: "nobody"}
	e, err := New(cfg, nil, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	specs, err := e.nodeSpecs(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	inGPU := map[string]bool{}
	for _, n := range gpu {
		inGPU[n] = true
	}
	for _, n := range names {
		has := strings.Contains(specs[n], "gpu:")
		if has != inGPU[n] {
			t.Errorf("node %s: spec %q; in partition gpu: %v", n, specs[n], inGPU[n])
		}
		if !strings.HasPrefix(specs[n], "default:") {
			t.Errorf("node %s: spec %q lacks the default tree", n, specs[n])
		}
	}
	doc, err := e.slurm.Render(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	gpuPart := string(doc)[strings.Index(string(doc), "topology: gpu"):]
	if !strings.Contains(gpuPart, "nodes: p-n[00001-00009]") || !strings.Contains(gpuPart, "nodes: p-n[00010-00018]") || strings.Contains(gpuPart, "p-n00019") || strings.Contains(gpuPart, "p-n[00019") {
		t.Errorf("topology.yaml:\n%s", doc)
	}

	t.Run("no source is an error naming the way out", func(t *testing.T) {
		cfg.Slurm.Slurmrestd = nil
		e, err := New(cfg, nil, engines.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.nodeSpecs(ctx, g); err == nil || !strings.Contains(err.Error(), "neither slurmrestd nor partitionCommand") {
			t.Fatalf("error %v", err)
		}
	})
}
