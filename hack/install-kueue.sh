#!/usr/bin/env bash
# install-kueue.sh — build the real Kueue controller manager the consumer tests
# (engines/schedtopo/consumertest) place gangs with.
#
# Builds sigs.k8s.io/kueue/cmd/kueue ${KUEUE_VERSION} once, in the small module
# hack/kueue (its own go.mod, outside toposcope's build), into
#   ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/bin/kueue-${KUEUE_VERSION}
# and copies the module's CRDs (config/components/crd/bases/*.yaml) and webhook
# manifest (config/components/webhook/manifests.yaml) beside it, into
#   .../bin/kueue-${KUEUE_VERSION}-config/{crd,webhook}/
# The links bin/kueue and bin/kueue-config point at them. The binary is built
# under a temporary name and moved into place only after `--help` ran, and the
# config folder is filled under a temporary name too, so an interrupted run
# never leaves anything that looks complete.
#
# Kueue pins its own Kubernetes libraries (0.35), so nothing is shared with the
# kube-apiserver build: a cold build is long (run it under
# `flock /work/.coldbuild.lock` on a shared machine); a rebuild with Go's
# build cache warm is quick.
#
# Safe to run many times: it does nothing when both are already cached.
# Environment:
#   TOPOSCOPE_CACHE  cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/toposcope)
#   KUEUE_BUILD_LOG  build log (default $TOPOSCOPE_CACHE/kueue-build.log)
set -euo pipefail

readonly KUEUE_VERSION=v0.17.0

HERE="$(cd "$(dirname "$0")" && pwd)"
LOG_NAME=install-kueue
# shellcheck source=lib/log.sh
source "$HERE/lib/log.sh"
# shellcheck source=lib/gobuild.sh
source "$HERE/lib/gobuild.sh"
CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"
TARGET="$BIN/kueue-$KUEUE_VERSION"
CONFIG="$BIN/kueue-$KUEUE_VERSION-config"
BUILD_LOG="${KUEUE_BUILD_LOG:-$CACHE/kueue-build.log}"



build_kueue() {
	go_build_once "$TARGET" "$HERE/kueue" sigs.k8s.io/kueue/cmd/kueue \
		"-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" "$BUILD_LOG" --help -config \
		go mod download sigs.k8s.io/kueue
}

copy_config() {
	if [[ -s "$CONFIG/webhook/manifests.yaml" ]]; then
		log "    cached: $CONFIG"
		return
	fi
	local dir
	dir="$(cd "$HERE/kueue" && go mod download -json sigs.k8s.io/kueue | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[[ -d "$dir/config/components/crd/bases" ]] || die "no CRDs in the module folder '$dir'"
	local tmp="$CONFIG.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp/crd" "$tmp/webhook"
	cp "$dir"/config/components/crd/bases/*.yaml "$tmp/crd/"
	cp "$dir/config/components/webhook/manifests.yaml" "$tmp/webhook/"
	chmod -R u+w "$tmp"
	rm -rf "$CONFIG"
	mv "$tmp" "$CONFIG"
	log "    copied $(find "$CONFIG/crd" -name '*.yaml' | wc -l) CRDs and the webhook manifest into $CONFIG"
}

link_kueue() {
	ln -sfn "kueue-$KUEUE_VERSION" "$BIN/kueue"
	ln -sfn "kueue-$KUEUE_VERSION-config" "$BIN/kueue-config"
	log "    $BIN/kueue -> kueue-$KUEUE_VERSION, $BIN/kueue-config -> kueue-$KUEUE_VERSION-config"
}

step "kueue $KUEUE_VERSION" build_kueue
step "CRDs and webhook manifest" copy_config
step "link" link_kueue
log "done; the tests find kueue and its CRDs in $BIN (or set TOPOSCOPE_KUEUE)"
