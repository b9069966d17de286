# Sourced by the install scripts:
#   go_build_once TARGET MODDIR PKG LDFLAGS BUILD_LOG CHECK_ARG WANT PREP...
# builds the Go program PKG in the small module MODDIR (its tools.go pins
# PKG's module) into TARGET, once: PREP (the go command that readies the
# module, e.g. go mod tidy) and then go build run under a temporary name,
# with their output appended to BUILD_LOG; the binary must run with
# CHECK_ARG and print WANT before it is moved into place, so an
# interrupted or broken build never leaves a binary that looks complete.
# It does nothing when TARGET exists, and logs with the caller's log() and
# die() (hack/lib/log.sh).

go_build_once() {
	local target=$1 moddir=$2 pkg=$3 ldflags=$4 build_log=$5 check_arg=$6 want=$7
	shift 7
	if [[ -x "$target" ]]; then
		log "    cached: $target"
		return
	fi
	mkdir -p "$(dirname "$target")"
	local tmp="$target.tmp.$$"
	# shellcheck disable=SC2064 # expand $tmp now: it is local to this call
	trap "rm -f '$tmp'" EXIT
	log "    building into $tmp (log: $build_log)"
	(
		cd "$moddir"
		printf '\n$ %s\n' "$*"
		"$@"
		printf '\n$ go build -o %s %s\n' "$tmp" "$pkg"
		nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg"
	) >>"$build_log" 2>&1 || {
		tail -n 25 "$build_log" >&2
		die "building $pkg failed; full output in $build_log"
	}
	local out
	out="$("$tmp" "$check_arg" 2>&1)" || die "built $(basename "$target") does not run: $(head -n 5 <<<"$out")"
	[[ "$out" == *"$want"* ]] || die "built $(basename "$target") $check_arg does not show '$want': $(head -n 5 <<<"$out")"
	mv -f "$tmp" "$target"
	trap - EXIT
	log "    built $target"
}
