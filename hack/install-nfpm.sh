#!/usr/bin/env bash
# install-nfpm.sh — the packaging tools `make package` and its test use:
# nfpm ${NFPM_VERSION}, built once with `go install` from
# github.com/goreleaser/nfpm/v2 into
#   ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/bin/nfpm-${NFPM_VERSION}
# (linked as bin/nfpm), and the Debian packages that check the result:
# lintian, rpm (rpm -qpl), dpkg-dev, systemd (systemd-analyze). Safe to run
# many times: every step checks first.
set -euo pipefail
# shellcheck source=hack/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
# shellcheck source=hack/lib/goinstall.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/goinstall.sh"

readonly NFPM_VERSION=v2.48.0
readonly PKGS=(lintian rpm dpkg-dev systemd)

CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"
TARGET="$BIN/nfpm-$NFPM_VERSION"

log() { printf '[install-nfpm] %s\n' "$*"; }
die() { printf '[install-nfpm] ERROR: %s\n' "$*" >&2; exit 1; }

apt_ensure "${PKGS[@]}"

go_install_once "$TARGET" "github.com/goreleaser/nfpm/v2/cmd/nfpm@$NFPM_VERSION" "-s -w" --version
ln -sfn "nfpm-$NFPM_VERSION" "$BIN/nfpm"
log "$(lintian --version); $(rpm --version); nfpm $NFPM_VERSION"
