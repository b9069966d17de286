#!/usr/bin/env bash
# install-kube.sh — install everything the Kubernetes tests (testenv/kubetest) need.
#
# On a fresh Debian bookworm machine (root, with Go, gcc and git) this:
#   1. installs the Debian packages etcd-server (etcd 3.4) and openssl, running
#      apt-get update only when a package has no install candidate yet;
#   2. builds kube-apiserver and kube-scheduler ${KUBE_VERSION} from the Go module
#      k8s.io/kubernetes, in the small module hack/kube-apiserver (its own go.mod, outside
#      toposcope's build), once each, into
#        ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/bin/NAME-${KUBE_VERSION}
#      The binary is built under a temporary name and renamed into place only after it
#      ran `--version`, so an interrupted build never leaves a binary that looks complete.
#      A cold kube-apiserver build takes 10-40 minutes on 2 busy cores (33 min measured); with
#      its build cache warm, kube-scheduler adds only ~66 packages. Go's build cache makes a
#      rebuild on the same machine much faster.
#
# Safe to run many times: every step checks first and does nothing when already done.
# Environment:
#   TOPOSCOPE_CACHE  cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/toposcope)
#   KUBE_BUILD_LOG   build log (default $TOPOSCOPE_CACHE/NAME-build.log)
set -euo pipefail

readonly KUBE_VERSION=v1.37.2
readonly PKGS=(etcd-server openssl)

HERE="$(cd "$(dirname "$0")" && pwd)"
LOG_NAME=install-kube
# shellcheck source=lib/log.sh
source "$HERE/lib/log.sh"
CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"

# shellcheck source=lib/apt.sh
source "$HERE/lib/apt.sh"
# shellcheck source=lib/gobuild.sh
source "$HERE/lib/gobuild.sh"

# 1. Debian packages.
install_packages() {
	apt_ensure --no-install-recommends "${PKGS[@]}"
	command -v etcd >/dev/null || die "etcd not on PATH after installing etcd-server"
	log "    ${PKGS[*]} installed ($(etcd --version 2>/dev/null | head -n 1))"
}

# 2. kube-apiserver and kube-scheduler from k8s.io/kubernetes.
# build_kube NAME builds k8s.io/kubernetes/cmd/NAME into $BIN/NAME-$KUBE_VERSION.
build_kube() {
	local name=$1
	local pkg=k8s.io/component-base/version
	local ldflags="-s -w -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1"
	ldflags+=" -X $pkg.gitMinor=$(cut -d. -f2 <<<"${KUBE_VERSION#v}") -X $pkg.gitTreeState=clean"
	go_build_once "$BIN/$name-$KUBE_VERSION" "$HERE/kube-apiserver" "k8s.io/kubernetes/cmd/$name" "$ldflags" \
		"${KUBE_BUILD_LOG:-$CACHE/$name-build.log}" --version "$KUBE_VERSION" go mod tidy
}

# link_kube NAME points $BIN/NAME at the versioned binary.
link_kube() {
	ln -sfn "$1-$KUBE_VERSION" "$BIN/$1"
	log "    $BIN/$1 -> $1-$KUBE_VERSION"
}

step "Debian packages (${PKGS[*]})" install_packages
step "kube-apiserver $KUBE_VERSION" build_kube kube-apiserver
step "kube-scheduler $KUBE_VERSION" build_kube kube-scheduler
step "link" link_kube kube-apiserver
step "link" link_kube kube-scheduler
log "done; the tests find kube-apiserver and kube-scheduler in $BIN (or set TOPOSCOPE_KUBE_APISERVER)"
