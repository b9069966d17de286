#!/usr/bin/env bash
# install-helm.sh — build the real helm the chart checks (charts/toposcope) run.
#
# Builds helm ${HELM_VERSION} once from the Go module helm.sh/helm/v4 with
# `go install`, into
#   ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/bin/helm-${HELM_VERSION}
# and links bin/helm to it. The binary is built in a temporary GOBIN and moved
# into place only after `helm version` ran, so an interrupted build never leaves
# a binary that looks complete. A cold build takes about 5 minutes on 2 cores.
#
# Safe to run many times: it does nothing when the binary is already cached.
# Environment:
#   TOPOSCOPE_CACHE  cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/toposcope)
set -euo pipefail

readonly HELM_VERSION=v4.3.2

CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"
TARGET="$BIN/helm-$HELM_VERSION"
BUILD_LOG="$CACHE/helm-build.log"

log() { printf '[install-helm] %s\n' "$*"; }
die() { printf '[install-helm] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -x "$TARGET" ]]; then
	log "cached: $TARGET"
else
	mkdir -p "$BIN"
	tmp="$(mktemp -d "$BIN/.helm-build.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	start=$SECONDS
	log "building helm $HELM_VERSION into $tmp (log: $BUILD_LOG; about 5 minutes cold)"
	pkg=helm.sh/helm/v4/internal/version
	GOBIN="$tmp" GOFLAGS=-mod=mod nice -n 10 go install -trimpath \
		-ldflags "-s -w -X $pkg.version=$HELM_VERSION" \
		"helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >"$BUILD_LOG" 2>&1 || {
		tail -n 25 "$BUILD_LOG" >&2
		die "building helm failed; full output in $BUILD_LOG"
	}
	version="$("$tmp/helm" version --short 2>&1)" || die "built helm does not run: $version"
	mv -f "$tmp/helm" "$TARGET"
	log "built $TARGET ($version) in $((SECONDS - start))s"
fi
ln -sfn "helm-$HELM_VERSION" "$BIN/helm"
log "$BIN/helm -> helm-$HELM_VERSION; the chart tests find it there (or set TOPOSCOPE_HELM)"
