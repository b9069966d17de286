#!/usr/bin/env bash
# package.sh — build the toposcope .deb and .rpm (`make package`):
#   dist/toposcope_<version>_amd64.deb and dist/toposcope-<version>.x86_64.rpm
# from the release binary (`make build-server`), packaging/ (unit files, default
# configuration, scripts) and nfpm (hack/install-nfpm.sh installs it).
#
#   bash hack/package.sh [OUTDIR]     (default dist)
# Environment:
#   VERSION   the version (default: git describe; one that does not start
#             with a digit becomes 0.1.0~git<it>, as deb and rpm need)
#   BIN       a folder holding a release toposcope already built (`make
#             build BIN=...`): it is packaged as it is; without BIN the
#             binary is built into a private folder for this run.
# Everything it stages is in a folder of its own, so runs side by side
# (the tests build two versions) never mix their files.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-dist}"
CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}"
VERSION="${VERSION#v}"
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+ ]] || VERSION="0.1.0~git$VERSION"
VERSION="${VERSION//-/\~}" # rpm allows no dash in a version; ~ sorts before the release in both

log() { printf '[package] %s\n' "$*"; }

bash hack/install-nfpm.sh >/dev/null
mkdir -p .cache
STAGE="$(mktemp -d "$PWD/.cache/package.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
if [[ -z "${BIN:-}" ]]; then
	make --no-print-directory build-server VERSION="$VERSION" BIN="$STAGE/bin"
	BIN="$STAGE/bin"
fi
[[ -x "$BIN/toposcope" ]] || { printf '[package] ERROR: no executable toposcope in BIN=%s\n' "$BIN" >&2; exit 1; }
cp "$BIN/toposcope" "$STAGE/toposcope"
# packaging/nfpm.yaml names the staged files .cache/package/...; this run's are in $STAGE.
sed "s|src: \.cache/package/|src: $STAGE/|" packaging/nfpm.yaml >"$STAGE/nfpm.yaml"
grep -q "src: $STAGE/toposcope\$" "$STAGE/nfpm.yaml" || { printf '[package] ERROR: packaging/nfpm.yaml names no .cache/package/toposcope\n' >&2; exit 1; }
date="$(date -u -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")"

# A manual page for every command, from the built binary's own command
# tree (toposcope man), dated like the changelog.
"$STAGE/toposcope" man --date "$(date -u -d "$date" +%Y-%m-%d)" "$STAGE/man" >/dev/null
[[ -f "$STAGE/man/toposcope.1" ]] || { printf '[package] ERROR: toposcope man wrote no toposcope.1\n' >&2; exit 1; }
gzip -9n "$STAGE"/man/*.1

cat >"$STAGE/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: toposcope
Source: https://github.com/toposcope/toposcope

Files: *
Copyright: 2026 toposcope maintainers
License: Apache-2.0
 On Debian systems, the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT

printf 'toposcope (%s-1) unstable; urgency=medium\n\n  * Release %s.\n\n -- toposcope maintainers <maintainers@toposcope.io>  %s\n' \
	"$VERSION" "$VERSION" "$date" | gzip -9n >"$STAGE/changelog.gz"

mkdir -p "$OUT"
export VERSION
"$CACHE/bin/nfpm" package --config "$STAGE/nfpm.yaml" --packager deb --target "$OUT/toposcope_${VERSION}_amd64.deb" >/dev/null
"$CACHE/bin/nfpm" package --config "$STAGE/nfpm.yaml" --packager rpm --target "$OUT/toposcope-${VERSION}.x86_64.rpm" >/dev/null
log "$OUT/toposcope_${VERSION}_amd64.deb ($(stat -c %s "$OUT/toposcope_${VERSION}_amd64.deb") bytes)"
log "$OUT/toposcope-${VERSION}.x86_64.rpm ($(stat -c %s "$OUT/toposcope-${VERSION}.x86_64.rpm") bytes)"
