#!/usr/bin/env bash
# Installs what the web view's and the graph output's tests use: Debian's
# chromium (driven headless over the DevTools protocol by
# testenv/browser) and graphviz (its `dot` lays out the
# aggregated DOT). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'install-browser: %s\n' "$*"; }
# shellcheck source=hack/lib/apt.sh
source hack/lib/apt.sh

apt_ensure chromium graphviz fonts-dejavu-core
log "$(chromium --version 2>/dev/null || echo 'chromium: not runnable')"
log "$(dot -V 2>&1)"
