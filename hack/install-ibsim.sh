#!/usr/bin/env bash
# install-ibsim.sh — install what the real-tool InfiniBand tests (internal/testenv/ibsim,
# providers/infiniband) need: the fabric simulator ibsim with its LD_PRELOAD
# wrapper ibsim-run (package ibsim-utils), and the real ibnetdiscover (package
# infiniband-diags).
#
# Idempotent: it does nothing when both packages are installed, and runs
# apt-get update only when one of them is missing. Needs root (apt-get).
set -euo pipefail

readonly PKGS=(ibsim-utils infiniband-diags)
readonly BINS=(/usr/bin/ibsim /usr/bin/ibsim-run /usr/sbin/ibnetdiscover)

log() { printf '[install-ibsim] %s\n' "$*"; }
die() { printf '[install-ibsim] ERROR: %s\n' "$*" >&2; exit 1; }

pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

missing=()
for p in "${PKGS[@]}"; do
	pkg_installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
	[ "$(id -u)" -eq 0 ] || die "installing ${missing[*]} needs root"
	log "apt-get update"
	apt-get update -qq
	log "apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	log "${PKGS[*]}: already installed"
fi

for b in "${BINS[@]}"; do
	[ -x "$b" ] || die "$b is missing after installing ${PKGS[*]}"
done
log "ibsim: $(command -v ibsim); ibsim-run: $(command -v ibsim-run); ibnetdiscover: $(command -v ibnetdiscover || echo /usr/sbin/ibnetdiscover)"
