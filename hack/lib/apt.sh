# Sourced by the install scripts: apt_ensure PKG... installs the Debian
# packages that are not installed yet, running `apt-get update` first when
# one of them has no install candidate. It logs with the caller's log().

apt_ensure() {
	local missing=() p
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
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
