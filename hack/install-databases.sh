#!/usr/bin/env bash
# Installs the databases the shared store's tests start: PostgreSQL and
# MariaDB from Debian. The tests start their own servers (initdb or
# mariadb-install-db into a temporary folder, on a free loopback port; the
# PostgreSQL server as the package's `postgres` user, since it refuses
# root); the packages' own services are not used, and are stopped where
# the package started them. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'install-databases: %s\n' "$*"; }
# shellcheck source=hack/lib/apt.sh
source hack/lib/apt.sh

apt_ensure --no-install-recommends postgresql mariadb-server mariadb-client
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[[ -x "$pgbin/initdb" && -x "$pgbin/postgres" ]] || { log "no initdb/postgres under /usr/lib/postgresql"; exit 1; }
id postgres >/dev/null 2>&1 || { log "the postgresql package made no postgres user"; exit 1; }
command -v mariadbd >/dev/null 2>&1 || [[ -x /usr/sbin/mariadbd ]] || { log "mariadbd is missing"; exit 1; }
log "$("$pgbin/postgres" --version); $(/usr/sbin/mariadbd --version 2>/dev/null | head -n1)"
