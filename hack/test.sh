#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs every package and
# tool the tests need (Debian packages, munge, Slurm 22.05 on the host,
# Slurm 24.11 in a cached Debian trixie chroot, ibsim and the real
# ibnetdiscover, etcd and a kube-apiserver
# built once from k8s.io/kubernetes, golangci-lint), starts what must run
# (munged; the tests start slurmctld, etcd and kube-apiserver themselves),
# then runs `make verify` (gofmt, go vet, golangci-lint,
# go test). With CI=true, tests of real components never skip.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
export TOPOSCOPE_CACHE="$CACHE"

bash hack/install-tools.sh
bash hack/install-slurm.sh
bash hack/install-kube.sh
bash hack/install-ibsim.sh

export PATH="$CACHE/bin:$PATH"
# Real components must run: a test that cannot find one fails instead of
# skipping.
export CI="${CI:-true}"
make verify
