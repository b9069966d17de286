#!/usr/bin/env bash
# Installs what the LLDP tests build their networks with: iproute2 (ip
# netns, veth) and lldpd from Debian. The tests run lldpd themselves, one
# per network namespace with a control socket of its own; the package's
# own service is not used, and is stopped where the package started it.
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'install-netlab: %s\n' "$*"; }
# shellcheck source=hack/lib/apt.sh
source hack/lib/apt.sh

apt_ensure --no-install-recommends iproute2 lldpd
if pgrep -x lldpd >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl disable --now lldpd >/dev/null 2>&1 || true
fi
for bin in /usr/sbin/ip /usr/sbin/lldpd /usr/sbin/lldpcli; do
  [[ -x "$bin" ]] || { log "$bin is missing"; exit 1; }
done
log "$(/usr/sbin/lldpd -v) ($(/usr/sbin/ip -V))"
