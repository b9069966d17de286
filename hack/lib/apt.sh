# Sourced by the install scripts: apt_ensure [--no-install-recommends]
# PKG... installs the Debian packages that are not installed yet, running
# `apt-get update` first when one of them has no install candidate. It
# returns 0 and logs nothing when all are installed, and logs with the
# caller's log().

apt_ensure() {
	local missing=() opts=() p
	if [[ "${1:-}" == --no-install-recommends ]]; then
		opts+=("$1")
		shift
	fi
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
	done
	((${#missing[@]} > 0)) || return 0
	for p in "${missing[@]}"; do
		if ! apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
			log "apt-get update"
			apt-get update -qq
			break
		fi
	done
	log "apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${opts[@]}" "${missing[@]}" >/dev/null
}
