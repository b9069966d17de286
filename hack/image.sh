#!/usr/bin/env bash
# image.sh — build the toposcope container image on this machine, with no
# registry and no daemon: Debian's buildah (vfs storage, chroot isolation)
# builds Containerfile with BINARY=prebuilt from the binary `make build`
# made, and saves the image as an OCI archive.
#
#   bash hack/image.sh [OUTPUT]     (default bin/toposcope-image.tar; `make image`)
#   bash hack/image.sh --tools      only install the tools (hack/setup.sh)
#
# Installs buildah, skopeo and umoci when they are missing (apt-get update
# first, only when a package has no install candidate). Prints the binary's
# and the image's sizes. Environment:
#   VERSION          the version stamped into the binary and the image label
#   TOPOSCOPE_CACHE  cache folder; buildah's storage lives in $TOPOSCOPE_CACHE/containers
set -euo pipefail
# shellcheck source=hack/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
cd "$(dirname "$0")/.."

readonly PKGS=(buildah skopeo umoci)
OUT="${1:-bin/toposcope-image.tar}"
CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}"
TAG="localhost/toposcope:${VERSION//[^A-Za-z0-9_.-]/-}"

log() { printf '[image] %s\n' "$*"; }
die() { printf '[image] ERROR: %s\n' "$*" >&2; exit 1; }

apt_ensure "${PKGS[@]}"
apt_ensure ca-certificates
if [[ "$OUT" == --tools ]]; then
	log "$(buildah --version); $(skopeo --version); $(umoci --version)"
	exit 0
fi

# The same tree the compile stage makes.
make --no-print-directory build VERSION="$VERSION"
rm -rf bin/image
mkdir -p bin/image/root/usr/bin bin/image/root/etc/ssl/certs bin/image/home/nonroot
cp bin/toposcope bin/image/root/usr/bin/toposcope
cp /etc/ssl/certs/ca-certificates.crt bin/image/root/etc/ssl/certs/
cp hack/image/passwd hack/image/group bin/image/root/etc/
chmod 0755 bin/image/root/usr/bin/toposcope
chmod 0644 bin/image/root/etc/passwd bin/image/root/etc/group bin/image/root/etc/ssl/certs/ca-certificates.crt

# buildah keeps its layers in the cache, apart from any system storage.
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
STORE=(--root "$CACHE/containers/storage" --runroot "$CACHE/containers/run" --storage-driver vfs)
mkdir -p "$CACHE/containers"
log "buildah build $TAG"
buildah "${STORE[@]}" build --isolation chroot --layers=false --quiet \
	--build-arg BINARY=prebuilt --build-arg VERSION="$VERSION" \
	-f Containerfile -t "$TAG" . >/dev/null
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT.tmp"
buildah "${STORE[@]}" push --quiet "$TAG" "oci-archive:$OUT.tmp:$TAG"
mv -f "$OUT.tmp" "$OUT"
buildah "${STORE[@]}" rmi --force "$TAG" >/dev/null 2>&1 || true
log "binary bin/toposcope: $(stat -c %s bin/toposcope) bytes; image $OUT: $(stat -c %s "$OUT") bytes ($TAG)"
