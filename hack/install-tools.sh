#!/usr/bin/env bash
# Installs the developer tools that `make verify` needs and that a fresh
# machine (Go, gcc and git only) lacks: make and golangci-lint. Idempotent.
set -euo pipefail

CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
GOLANGCI_VERSION="v2.15.0"
BIN="$CACHE/bin"
mkdir -p "$BIN"

log() { printf 'install-tools: %s\n' "$*"; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    log "apt-get update"
    apt-get update -qq
    apt_updated=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v make >/dev/null 2>&1 || apt_install make

want="$BIN/golangci-lint-$GOLANGCI_VERSION"
if [ ! -x "$want" ]; then
  log "building golangci-lint $GOLANGCI_VERSION (a few minutes, once)"
  tmp=$(mktemp -d)
  GOBIN="$tmp" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_VERSION"
  mv "$tmp/golangci-lint" "$want"
  rm -rf "$tmp"
fi
ln -sf "$want" "$BIN/golangci-lint"
log "golangci-lint: $("$BIN/golangci-lint" version --short 2>/dev/null || echo "$GOLANGCI_VERSION")"
