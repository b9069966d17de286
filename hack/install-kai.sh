#!/usr/bin/env bash
# install-kai.sh — build the KAI scheduler the KAI tests (testenv/kaitest) run.
#
# Builds github.com/NVIDIA/KAI-scheduler/cmd/scheduler ${KAI_VERSION} once, in the small
# module hack/kai-scheduler (its own go.mod, outside toposcope's build), into
#   ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/bin/kai-scheduler-${KAI_VERSION}
# with a symlink kai-scheduler beside it, and copies KAI's CRDs (Queue, PodGroup,
# BindRequest, Topology, ...) from the module's deployments/kai-scheduler/crds into
#   $TOPOSCOPE_CACHE/kai-crds-${KAI_VERSION}/
# The binary is built under a temporary name and renamed into place only after it ran
# `--help`, so an interrupted build never leaves a binary that looks complete.
# KAI's go.mod pins every k8s.io staging module at a released version, so, unlike
# hack/kube-apiserver, the module needs no replace directives.
# A cold build compiles about 1,450 packages: 382 s measured with an empty Go build cache
# on 2 shared cores (user 350 s; expect 5-15 minutes under load); Go's build
# cache makes a rebuild on the same machine much faster.
#
# Safe to run many times: every step checks first and does nothing when already done.
# Environment:
#   TOPOSCOPE_CACHE  cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/toposcope)
#   KAI_BUILD_LOG    build log (default $TOPOSCOPE_CACHE/kai-scheduler-build.log)
set -euo pipefail

readonly KAI_MODULE=github.com/NVIDIA/KAI-scheduler
readonly KAI_VERSION=v0.12.0

HERE="$(cd "$(dirname "$0")" && pwd)"
LOG_NAME=install-kai
# shellcheck source=lib/log.sh
source "$HERE/lib/log.sh"
# shellcheck source=lib/gobuild.sh
source "$HERE/lib/gobuild.sh"
CACHE="${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}"
BIN="$CACHE/bin"
TARGET="$BIN/kai-scheduler-$KAI_VERSION"
CRDS="$CACHE/kai-crds-$KAI_VERSION"
BUILD_LOG="${KAI_BUILD_LOG:-$CACHE/kai-scheduler-build.log}"



build_scheduler() {
	go_build_once "$TARGET" "$HERE/kai-scheduler" "$KAI_MODULE/cmd/scheduler" "-s -w" "$BUILD_LOG" --help plugin-server-port \
		go mod download "$KAI_MODULE"
}

copy_crds() {
	if [[ -s "$CRDS/scheduling.run.ai_podgroups.yaml" && -s "$CRDS/kai.scheduler_topologies.yaml" ]]; then
		log "    cached: $CRDS"
		return
	fi
	local dir
	dir="$(cd "$HERE/kai-scheduler" && go mod download -json "$KAI_MODULE@$KAI_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[[ -d "$dir/deployments/kai-scheduler/crds" ]] || die "no CRDs in the module's folder '$dir'"
	local tmp="$CRDS.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	cp "$dir"/deployments/kai-scheduler/crds/*.yaml "$tmp"/
	chmod -R u+w "$tmp"
	rm -rf "$CRDS"
	mv "$tmp" "$CRDS"
	log "    copied $(ls "$CRDS" | wc -l) CRDs into $CRDS"
}

link_scheduler() {
	ln -sfn "kai-scheduler-$KAI_VERSION" "$BIN/kai-scheduler"
	ln -sfn "kai-crds-$KAI_VERSION" "$CACHE/kai-crds"
	log "    $BIN/kai-scheduler -> kai-scheduler-$KAI_VERSION"
}

step "KAI scheduler $KAI_VERSION" build_scheduler
step "KAI CRDs" copy_crds
step "link" link_scheduler
log "done; the tests find kai-scheduler in $BIN (or set TOPOSCOPE_KAI_SCHEDULER)"
