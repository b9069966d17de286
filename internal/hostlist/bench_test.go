package hostlist

import (
	"fmt"
	"testing"
)

var benchSizes = []int{1_000, 10_000, 100_000, 300_000}

func BenchmarkCompress(b *testing.B) {
	for _, n := range benchSizes {
		names := clusterNames(n, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Compress(names)
			}
		})
	}
}

func BenchmarkExpand(b *testing.B) {
	for _, n := range benchSizes {
		expr := Compress(clusterNames(n, 1))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Expand(expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSort(b *testing.B) {
	names := clusterNames(100_000, 1)
	buf := make([]string, len(names))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, names)
		Sort(buf)
	}
}
