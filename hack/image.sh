#!/usr/bin/env bash
# image.sh — build the toposcope container images on this machine, with no
# registry and no daemon: Debian's buildah (vfs storage, chroot isolation)
# builds Containerfile with BINARY=prebuilt from the binaries `make build`
# made, and saves the images as OCI archives: the service's image and the
# node agent's (the Containerfile's stage "agent"). The build context is a
# folder of this run's own holding just the prebuilt tree (bin/image in it),
# so runs side by side never mix their files and no large file of the
# checkout is sent to buildah.
#
#   bash hack/image.sh [OUTPUT [AGENT_OUTPUT]]
#                                   (default bin/toposcope-image.tar and
#                                   bin/toposcope-agent-image.tar; `make image`)
#   bash hack/image.sh --tools      only install the tools (hack/setup.sh)
#
# Installs buildah, skopeo and umoci when they are missing (apt-get update
# first, only when a package has no install candidate). Prints the binary's
# and the image's sizes. Environment:
#   VERSION          the version stamped into the binary and the image label
#   BIN              a folder holding toposcope and toposcope-agent already
#                    built (`make build BIN=...`): they go into the images as
#                    they are (their own version); without BIN, `make build`
#                    builds them into bin/
#   TOPOSCOPE_CACHE  cache folder; buildah's storage lives in $TOPOSCOPE_CACHE/containers
set -euo pipefail
# shellcheck source=hack/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
cd "$(dirname "$0")/.."

readonly PKGS=(buildah skopeo umoci)
OUT="${1:-bin/toposcope-image.tar}"
AGENT_OUT="${2:-bin/toposcope-agent-image.tar}"
CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}"
TAG="localhost/toposcope:${VERSION//[^A-Za-z0-9_.-]/-}"
AGENT_TAG="localhost/toposcope-agent:${VERSION//[^A-Za-z0-9_.-]/-}"

log() { printf '[image] %s\n' "$*"; }
die() { printf '[image] ERROR: %s\n' "$*" >&2; exit 1; }

apt_ensure "${PKGS[@]}"
apt_ensure ca-certificates
if [[ "$OUT" == --tools ]]; then
	log "$(buildah --version); $(skopeo --version); $(umoci --version)"
	exit 0
fi

if [[ -z "${BIN:-}" ]]; then
	make --no-print-directory build VERSION="$VERSION"
	BIN=bin
fi
for p in toposcope toposcope-agent; do
	[[ -x "$BIN/$p" ]] || die "no executable $p in BIN=$BIN"
done

# The same tree the compile stage makes, in this run's own build context.
mkdir -p .cache
CTX="$(mktemp -d "$PWD/.cache/image.XXXXXX")"
trap 'rm -rf "$CTX"' EXIT
TREE="$CTX/bin/image"
mkdir -p "$TREE/home/nonroot"
for p in toposcope toposcope-agent; do
	mkdir -p "$TREE/$p/usr/bin" "$TREE/$p/etc/ssl/certs"
	cp "$BIN/$p" "$TREE/$p/usr/bin/$p"
	cp /etc/ssl/certs/ca-certificates.crt "$TREE/$p/etc/ssl/certs/"
	cp hack/image/passwd hack/image/group "$TREE/$p/etc/"
	chmod 0755 "$TREE/$p/usr/bin/$p"
	chmod 0644 "$TREE/$p/etc/passwd" "$TREE/$p/etc/group" "$TREE/$p/etc/ssl/certs/ca-certificates.crt"
done

export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
STORE=(--root "$CACHE/containers/storage" --runroot "$CACHE/containers/run" --storage-driver vfs)
mkdir -p "$CACHE/containers"
# image TARGET TAG OUT builds one stage of the Containerfile ("" for the
# last) and writes it as an OCI archive.
image() {
	local target=() tag="$2" out="$3"
	[[ -n "$1" ]] && target=(--target "$1")
	log "buildah build $tag"
	buildah "${STORE[@]}" build --isolation chroot --layers=false --quiet "${target[@]}" \
		--build-arg BINARY=prebuilt --build-arg VERSION="$VERSION" \
		-f "$PWD/Containerfile" -t "$tag" "$CTX" >/dev/null
	mkdir -p "$(dirname "$out")"
	rm -f "$out.tmp"
	buildah "${STORE[@]}" push --quiet "$tag" "oci-archive:$out.tmp:$tag"
	mv -f "$out.tmp" "$out"
	buildah "${STORE[@]}" rmi --force "$tag" >/dev/null 2>&1 || true
}
image "" "$TAG" "$OUT"
image agent "$AGENT_TAG" "$AGENT_OUT"
log "binary $BIN/toposcope: $(stat -c %s "$BIN/toposcope") bytes; image $OUT: $(stat -c %s "$OUT") bytes ($TAG)"
log "binary $BIN/toposcope-agent: $(stat -c %s "$BIN/toposcope-agent") bytes; image $AGENT_OUT: $(stat -c %s "$AGENT_OUT") bytes ($AGENT_TAG)"
