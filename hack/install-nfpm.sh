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

readonly NFPM_VERSION=v2.48.0
readonly PKGS=(lintian rpm dpkg-dev systemd)

CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"
TARGET="$BIN/nfpm-$NFPM_VERSION"

log() { printf '[install-nfpm] %s\n' "$*"; }
die() { printf '[install-nfpm] ERROR: %s\n' "$*" >&2; exit 1; }

apt_ensure "${PKGS[@]}"

if [[ -x "$TARGET" ]]; then
	log "cached: $TARGET"
else
	mkdir -p "$BIN"
	tmp="$(mktemp -d "$BIN/.nfpm-build.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	start=$SECONDS
	log "building nfpm $NFPM_VERSION (a few minutes, once)"
	GOBIN="$tmp" GOFLAGS=-mod=mod nice -n 10 go install -trimpath -ldflags '-s -w' \
		"github.com/goreleaser/nfpm/v2/cmd/nfpm@$NFPM_VERSION" >"$CACHE/nfpm-build.log" 2>&1 || {
		tail -n 25 "$CACHE/nfpm-build.log" >&2
		die "building nfpm failed; full output in $CACHE/nfpm-build.log"
	}
	"$tmp/nfpm" --version >/dev/null 2>&1 || die "built nfpm does not run"
	mv -f "$tmp/nfpm" "$TARGET"
	log "built $TARGET in $((SECONDS - start))s"
fi
ln -sfn "nfpm-$NFPM_VERSION" "$BIN/nfpm"
log "$(lintian --version); $(rpm --version); nfpm $NFPM_VERSION"
