#!/usr/bin/env bash
# install-ibsim.sh — install what the real-tool InfiniBand tests (testenv/ibsim,
# providers/infiniband) need: the fabric simulator ibsim with its LD_PRELOAD
# wrapper ibsim-run (package ibsim-utils), and the real ibnetdiscover (package
# infiniband-diags).
#
# Idempotent: it installs nothing when both packages are installed, and
# runs apt-get update only when a missing one has no install candidate
# yet (hack/lib/apt.sh). Needs root (apt-get).
set -euo pipefail

readonly PKGS=(ibsim-utils infiniband-diags)
readonly BINS=(/usr/bin/ibsim /usr/bin/ibsim-run /usr/sbin/ibnetdiscover)

log() { printf '[install-ibsim] %s\n' "$*"; }
die() { printf '[install-ibsim] ERROR: %s\n' "$*" >&2; exit 1; }
# shellcheck source=lib/apt.sh
source "$(cd "$(dirname "$0")" && pwd)/lib/apt.sh"

apt_ensure --no-install-recommends "${PKGS[@]}"
log "${PKGS[*]}: installed"

for b in "${BINS[@]}"; do
	[ -x "$b" ] || die "$b is missing after installing ${PKGS[*]}"
done
log "ibsim: $(command -v ibsim); ibsim-run: $(command -v ibsim-run); ibnetdiscover: $(command -v ibnetdiscover || echo /usr/sbin/ibnetdiscover)"
