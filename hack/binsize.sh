#!/usr/bin/env bash
# binsize.sh — what each cloud SDK and client-go cost in the release binary.
#
# Builds, with the release flags (static, -trimpath, -s -w, the grpcnotrace and nomsgpack
# tags), a base program
# that links the sim provider and the Slurm engine (what a bare-metal Slurm
# site needs), then the base plus one more plugin, and prints each one's
# stripped size and what it adds to the base; last, the real binary
# (bin/toposcope, from `make build-server`). Shared dependencies are counted in
# every plugin that needs them, so the additions sum to more than the
# whole. `make binsize` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly M=github.com/toposcope/toposcope
WORK=.cache/binsize
rm -rf "$WORK"
mkdir -p "$WORK"

# variant NAME IMPORT EXPR writes a program that links the base and EXPR.
variant() {
	local name=$1 imp=$2 expr=$3
	mkdir -p "$WORK/$name"
	cat >"$WORK/$name/main.go" <<GO
// Command $name measures the binary cost of one plugin.
package main

import (
	"fmt"

	"$M/engines/slurm"
	"$M/providers/sim"
	${imp}
)

func main() { fmt.Println(sim.NewFactory(), slurm.NewFactory(), ${expr}) }
GO
}

variant base "" '""'
variant aws "\"$M/providers/aws\"" 'aws.NewFactory()'
variant gcp "\"$M/providers/gcp\"" 'gcp.NewFactory()'
variant oci "\"$M/providers/oci\"" 'oci.NewFactory()'
variant lambda "\"$M/providers/lambda\"" 'lambda.NewFactory()'
variant nscale "\"$M/providers/nscale\"" 'nscale.NewFactory()'
variant kubernetes "\"$M/engines/k8slabels\"" 'k8slabels.NewFactory()'
variant infiniband "\"$M/providers/infiniband\"" 'infiniband.NewFactory()'

build() { CGO_ENABLED=0 go build -trimpath -tags 'grpcnotrace nomsgpack' -ldflags '-s -w' -o "$WORK/$1.bin" "./$WORK/$1"; stat -c %s "$WORK/$1.bin"; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

base=$(build base)
printf '%-12s %10s %12s\n' plugin size "adds to base"
printf '%-12s %10s %12s\n' "base" "$(mb "$base")" "(sim + slurm)"
for v in aws gcp oci lambda nscale kubernetes infiniband; do
	s=$(build "$v")
	printf '%-12s %10s %12s\n' "$v" "$(mb "$s")" "$(mb $((s - base)))"
done
make --no-print-directory build-server >/dev/null
printf '%-12s %10s\n' "toposcope" "$(mb "$(stat -c %s bin/toposcope)")"
rm -rf "$WORK"
