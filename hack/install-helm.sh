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
# shellcheck source=hack/lib/goinstall.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/goinstall.sh"

readonly HELM_VERSION=v4.3.2

CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"
TARGET="$BIN/helm-$HELM_VERSION"

log() { printf '[install-helm] %s\n' "$*"; }
die() { printf '[install-helm] ERROR: %s\n' "$*" >&2; exit 1; }

go_install_once "$TARGET" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" version
ln -sfn "helm-$HELM_VERSION" "$BIN/helm"
log "$BIN/helm -> helm-$HELM_VERSION; the chart tests find it there (or set TOPOSCOPE_HELM)"
