package topology_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

// BenchmarkBuild builds a 3-tier fat tree (32 nodes per leaf, 16 leaves per
// spine, one core) with 18-node domains from per-node paths.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000, 300000} {
		names, domains := make([]string, n), make([]string, n)
		paths := make([][]topology.SwitchInfo, n)
		core := topology.SwitchInfo{ID: "core"}
		for i := range n {
			names[i] = fmt.Sprintf("node%06d", i+1)
			domains[i] = "nvl" + strconv.Itoa(i/18)
			leaf := i / 32
			paths[i] = []topology.SwitchInfo{
				{ID: "leaf" + strconv.Itoa(leaf)}, {ID: "spine" + strconv.Itoa(leaf/16)}, core,
			}
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bld := topology.NewBuilder()
				bld.Grow(n)
				for i, name := range names {
					bld.AddNode(topology.Node{Name: name, GPUs: 8})
					bld.AddPath(name, paths[i])
					bld.AddToDomain(name, domains[i], "")
				}
				if _, err := bld.Build(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
