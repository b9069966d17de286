#!/usr/bin/env bash
# Everything the test suite needs, on a fresh Debian machine with only Go,
# gcc and git (run as root): make, golangci-lint, munge, Slurm 22.05 on the
# host (slurmctld, slurmd, slurm-client), Slurm 24.11 in a cached Debian
# trixie chroot, PostgreSQL and MariaDB for the shared store's tests (which
# start servers of their own), iproute2 and lldpd for the LLDP tests (which
# build networks of namespaces), ibsim and the real ibnetdiscover, etcd and a kube-apiserver
# and kube-scheduler built once from k8s.io/kubernetes, Kueue built once from
# sigs.k8s.io/kueue (with its CRDs; 3-11 minutes cold), the KAI scheduler built
# once from github.com/NVIDIA/KAI-scheduler (with its CRDs; 3-7 minutes
# cold), and helm built once from helm.sh/helm/v4,
# buildah, skopeo and umoci for the container image, and nfpm, lintian,
# rpm and systemd-analyze for the system packages, and chromium and
# graphviz for the web view and graph output. It starts what must already run
# (munged; the tests start slurmctld, slurmd, etcd and kube-apiserver
# themselves). Every step checks first, so a second run does nothing.
# The README's test command is `bash hack/setup.sh && CI=true make verify`.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
export TOPOSCOPE_CACHE="$CACHE"

bash hack/install-tools.sh
bash hack/install-slurm.sh
bash hack/install-databases.sh
bash hack/install-netlab.sh
bash hack/install-kube.sh
bash hack/install-kueue.sh
bash hack/install-kai.sh
bash hack/install-ibsim.sh
bash hack/install-helm.sh
bash hack/image.sh --tools
bash hack/install-nfpm.sh
bash hack/install-browser.sh
