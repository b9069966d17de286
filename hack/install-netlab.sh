#!/usr/bin/env bash
# Installs what the LLDP tests build their networks with: iproute2 (ip
# netns, veth), lldpd and Net-SNMP's snmpd (the switches' LLDP-MIB) from
# Debian. The tests run lldpd and snmpd themselves, one per network
# namespace with a control socket and configuration of their own; the
# packages' own services are not used, and are stopped where the packages
# started them. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'install-netlab: %s\n' "$*"; }
# shellcheck source=hack/lib/apt.sh
source hack/lib/apt.sh

apt_ensure --no-install-recommends iproute2 lldpd snmpd
for svc in lldpd snmpd; do
  if pgrep -x "$svc" >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
done
for bin in /usr/sbin/ip /usr/sbin/lldpd /usr/sbin/lldpcli /usr/sbin/snmpd; do
  [[ -x "$bin" ]] || { log "$bin is missing"; exit 1; }
done
log "lldpd $(/usr/sbin/lldpd -v), $(/usr/sbin/snmpd -v | awk '/version/ {print "snmpd " $NF; exit}') ($(/usr/sbin/ip -V))"
