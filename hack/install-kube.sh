#!/usr/bin/env bash
# install-kube.sh — install everything the Kubernetes tests (testenv/kubetest) need.
#
# On a fresh Debian bookworm machine (root, with Go, gcc and git) this:
#   1. installs the Debian packages etcd-server (etcd 3.4) and openssl, running
#      apt-get update only when a package has no install candidate yet;
#   2. builds kube-apiserver ${KUBE_VERSION} from the Go module k8s.io/kubernetes, in the
#      small module hack/kube-apiserver (its own go.mod, outside toposcope's build), once, into
#        ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/bin/kube-apiserver-${KUBE_VERSION}
#      The binary is built under a temporary name and renamed into place only after it
#      ran `--version`, so an interrupted build never leaves a binary that looks complete.
#      A cold build takes 10-40 minutes on 2 busy cores (33 min measured); Go's build cache makes a rebuild
#      on the same machine much faster.
#
# Safe to run many times: every step checks first and does nothing when already done.
# Environment:
#   TOPOSCOPE_CACHE  cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/toposcope)
#   KUBE_BUILD_LOG   build log (default $TOPOSCOPE_CACHE/kube-apiserver-build.log)
set -euo pipefail

readonly KUBE_VERSION=v1.37.2
readonly PKGS=(etcd-server openssl)

HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"
TARGET="$BIN/kube-apiserver-$KUBE_VERSION"
BUILD_LOG="${KUBE_BUILD_LOG:-$CACHE/kube-apiserver-build.log}"

log() { printf '[install-kube] %s\n' "$*"; }
# shellcheck source=lib/apt.sh
source "$HERE/lib/apt.sh"
die() { printf '[install-kube] ERROR: %s\n' "$*" >&2; exit 1; }

# step NAME CMD... runs CMD and reports how long it took.
step() {
	local name=$1 start=$SECONDS
	shift
	log "==> ${name}"
	"$@"
	log "    ${name}: done in $((SECONDS - start))s"
}

# 1. Debian packages.
install_packages() {
	apt_ensure --no-install-recommends "${PKGS[@]}"
	command -v etcd >/dev/null || die "etcd not on PATH after installing etcd-server"
	log "    ${PKGS[*]} installed ($(etcd --version 2>/dev/null | head -n 1))"
}

# 2. kube-apiserver from k8s.io/kubernetes.
build_apiserver() {
	if [[ -x "$TARGET" ]]; then
		log "    cached: $TARGET"
		return
	fi
	mkdir -p "$BIN"
	local tmp="$TARGET.tmp.$$"
	trap 'rm -f "$tmp"' EXIT
	log "    building into $tmp (log: $BUILD_LOG; 10-40 minutes cold on 2 busy cores)"
	local pkg=k8s.io/component-base/version
	local ldflags="-s -w -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1"
	ldflags+=" -X $pkg.gitMinor=$(cut -d. -f2 <<<"${KUBE_VERSION#v}") -X $pkg.gitTreeState=clean"
	(
		cd "$HERE/kube-apiserver"
		printf '\n$ go mod tidy\n'
		go mod tidy
		printf '\n$ go build -o %s k8s.io/kubernetes/cmd/kube-apiserver\n' "$tmp"
		nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp" k8s.io/kubernetes/cmd/kube-apiserver
	) >>"$BUILD_LOG" 2>&1 || {
		tail -n 25 "$BUILD_LOG" >&2
		die "building kube-apiserver failed; full output in $BUILD_LOG"
	}
	local version
	version="$("$tmp" --version 2>&1)" || die "built kube-apiserver does not run: $version"
	[[ "$version" == *"$KUBE_VERSION"* ]] || die "built kube-apiserver reports '$version', want $KUBE_VERSION"
	mv -f "$tmp" "$TARGET"
	trap - EXIT
	log "    built $TARGET ($version)"
}

link_apiserver() {
	ln -sfn "kube-apiserver-$KUBE_VERSION" "$BIN/kube-apiserver"
	log "    $BIN/kube-apiserver -> kube-apiserver-$KUBE_VERSION"
}

step "Debian packages (${PKGS[*]})" install_packages
step "kube-apiserver $KUBE_VERSION" build_apiserver
step "link" link_apiserver
log "done; the tests find kube-apiserver in $BIN (or set TOPOSCOPE_KUBE_APISERVER)"
