# Sourced by the install scripts: go_install_once TARGET PKG@VERSION LDFLAGS
# VERSION_ARG builds a Go program once with `go install -trimpath` into a
# temporary GOBIN beside TARGET, checks that `program VERSION_ARG` runs,
# and only then moves it to TARGET, so that an interrupted build never
# leaves a binary that looks complete. It does nothing when TARGET exists,
# and logs with the caller's log() and die().

go_install_once() {
	local target=$1 pkg=$2 ldflags=$3 version_arg=$4
	local name="${pkg%@*}"
	name="${name##*/}"
	if [[ -x "$target" ]]; then
		log "cached: $target"
		return 0
	fi
	local dir build_log tmp start=$SECONDS
	dir="$(dirname "$target")"
	build_log="$(dirname "$dir")/$name-build.log"
	mkdir -p "$dir"
	tmp="$(mktemp -d "$dir/.$name-build.XXXXXX")"
	log "building $pkg (log: $build_log; a few minutes cold, once)"
	if ! GOBIN="$tmp" GOFLAGS=-mod=mod nice -n 10 go install -trimpath -ldflags "$ldflags" "$pkg" >"$build_log" 2>&1; then
		tail -n 25 "$build_log" >&2
		rm -rf "$tmp"
		die "building $name failed; full output in $build_log"
	fi
	if ! "$tmp/$name" "$version_arg" >/dev/null 2>&1; then
		rm -rf "$tmp"
		die "the built $name does not run"
	fi
	mv -f "$tmp/$name" "$target"
	rm -rf "$tmp"
	log "built $target in $((SECONDS - start))s"
}
