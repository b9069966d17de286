#!/usr/bin/env bash
# install-slurm.sh — install everything the Slurm tests (testenv/slurmtest) need.
#
# On a fresh Debian bookworm machine (root, with Go, gcc and git) this:
#   1. installs the host packages slurmctld, slurmd, slurm-client, slurmrestd (the REST API,
#      read with JWT by internal/slurmrest), munge, slurmdbd, mariadb-server
#      and debootstrap (Slurm 22.05: topology/tree, jobs that run for the ledger source, and the
#      accounting database that `sacctmgr load` of the budgets tree is checked against; the tests
#      run their own mariadbd and slurmdbd, the packages' services are not used), running
#      apt-get update only when one is missing;
#   2. prepares munge (/run/munge, ownerships, /etc/munge/munge.key) and starts munged
#      unless it is already running and answering;
#   3. builds, once each, Debian minbase chroots with the newer Slurm releases, in
#        ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/slurm-24.11-trixie
#          (Slurm 24.11: topology/block)
#        ${TOPOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toposcope}/slurm-26.05-forky
#          (Slurm 26.05: topology.yaml, the 25.05+ block rules; debootstrap uses sid's
#          script for forky, which bookworm's debootstrap does not know by name)
#      Each chroot is built in a temporary folder beside it and renamed into place only
#      after its slurmctld version has been checked and the marker file .complete written,
#      so an interrupted build never leaves a chroot that looks complete.
#
# Safe to run many times: every step checks first and does nothing when already done.
# Environment:
#   TOPOSCOPE_CACHE   cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/toposcope)
#   TOPOSCOPE_MIRROR  Debian mirror URL for the chroot (default: the host's apt sources)
set -euo pipefail

# The chroots: Debian suite, Slurm series, debootstrap script ("-" for the suite's own),
# and how Slurm goes in, HOW:PACKAGES: "apt" (apt-get inside the chroot) or "include"
# (debootstrap --include: the mirror's forky Release file is past its Valid-Until
# date, which apt refuses and debootstrap, which checks the signatures, does not look
# at; forky's systemd-standalone-sysusers does not install at that stage).
readonly CHROOTS=(
	"trixie 24.11 - apt:slurmctld,systemd-standalone-sysusers"
	"forky 26.05 sid include:slurmctld,slurm-client"
)
readonly HOST_PKGS=(slurmctld slurmd slurm-client slurmrestd munge slurmdbd mariadb-server debootstrap)

HERE="$(cd "$(dirname "$0")" && pwd)"
LOG_NAME=install-slurm
# shellcheck source=lib/log.sh
source "$HERE/lib/log.sh"

# logged LOGFILE CMD... appends CMD's output to LOGFILE and dies with its tail on failure.
logged() {
	local logfile=$1
	shift
	printf '\n$ %s\n' "$*" >>"$logfile"
	"$@" >>"$logfile" 2>&1 && return 0
	local rc=$?
	tail -n 25 "$logfile" >&2
	die "'$*' failed with exit status $rc; full output in $logfile"
}

pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# ---------------------------------------------------------------------------------------
# 1. Host packages.
install_host_packages() {
	local missing=() p
	for p in "${HOST_PKGS[@]}"; do
		pkg_installed "$p" || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		log "    host packages already installed: ${HOST_PKGS[*]}"
		return
	fi
	log "    missing host packages: ${missing[*]}"
	log "    apt-get update"
	apt-get update -q || die "apt-get update failed"
	log "    apt-get install -y ${HOST_PKGS[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${HOST_PKGS[@]}" ||
		die "apt-get install ${HOST_PKGS[*]} failed"
	for p in "${HOST_PKGS[@]}"; do
		pkg_installed "$p" || die "package $p is still not installed after apt-get install"
	done
	[[ -x /usr/sbin/slurmctld && -x /usr/sbin/slurmd && -x /usr/sbin/slurmrestd && -x /usr/bin/scontrol && -x /usr/bin/squeue ]] ||
		die "slurmctld/slurmd/slurmrestd/scontrol/squeue not found after installing the packages"
}

# ---------------------------------------------------------------------------------------
# 2. munge.
munge_answers() {
	local cred
	cred=$(munge -n 2>/dev/null) || return 1
	printf '%s' "$cred" | unmunge >/dev/null 2>&1
}

# munged_pid prints the pid of a running munged (pidfile first, then pgrep).
munged_pid() {
	local pid
	if [[ -r /run/munge/munged.pid ]]; then
		pid=$(<"/run/munge/munged.pid")
		if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
			printf '%s\n' "$pid"
			return 0
		fi
	fi
	command -v pgrep >/dev/null && pgrep -x munged | head -n 1 | grep .
}

prepare_munge() {
	getent passwd munge >/dev/null || die "user munge does not exist (is the munge package installed?)"
	mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge
	chown munge:munge /run/munge
	chmod 0755 /run/munge
	chown -R munge:munge /var/log/munge /var/lib/munge
	chmod 0700 /var/log/munge /var/lib/munge
	if [[ ! -s /etc/munge/munge.key ]]; then
		log "    creating /etc/munge/munge.key"
		if command -v mungekey >/dev/null; then
			mungekey --create --force --keyfile=/etc/munge/munge.key
		else
			dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
		fi
	fi
	chown munge:munge /etc/munge /etc/munge/munge.key
	chmod 0700 /etc/munge
	chmod 0400 /etc/munge/munge.key

	if munge_answers; then
		log "    munged is running and answers on its socket"
		return
	fi
	local pid
	if pid=$(munged_pid); then
		log "    munged is running (pid $pid) but does not answer yet; waiting"
	else
		log "    starting munged"
		su -s /bin/sh munge -c "munged --force" || die "munged failed to start (see /var/log/munge/munged.log)"
	fi
	local i
	for ((i = 0; i < 50; i++)); do
		munge_answers && { log "    munged answers (munge -n | unmunge works)"; return; }
		sleep 0.1
	done
	die "munged does not answer: 'munge -n | unmunge' fails (see /var/log/munge/munged.log)"
}

# ---------------------------------------------------------------------------------------
# 3. Slurm chroots (24.11 on trixie, 26.05 on forky).
cache_dir() {
	if [[ -n ${TOPOSCOPE_CACHE:-} ]]; then
		printf '%s\n' "$TOPOSCOPE_CACHE"
	elif [[ -n ${XDG_CACHE_HOME:-} ]]; then
		printf '%s\n' "$XDG_CACHE_HOME/toposcope"
	else
		[[ -n ${HOME:-} ]] || die "neither TOPOSCOPE_CACHE, XDG_CACHE_HOME nor HOME is set"
		printf '%s\n' "$HOME/.cache/toposcope"
	fi
}

# debian_mirror prints the main Debian mirror the host's apt uses.
debian_mirror() {
	local m=""
	if [[ -n ${TOPOSCOPE_MIRROR:-} ]]; then
		m=$TOPOSCOPE_MIRROR
	elif [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
		m=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
			/etc/apt/sources.list.d/debian.sources)
	fi
	if [[ -z $m && -r /etc/apt/sources.list ]]; then
		# deb [options] URI suite components...
		m=$(awk '$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if (i <= NF && $i !~ /security/) { print $i; exit }
			}' /etc/apt/sources.list)
	fi
	[[ -n $m ]] || die "cannot find a Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list (set TOPOSCOPE_MIRROR)"
	printf '%s\n' "$m"
}

# chroot_version ROOT prints the version of slurmctld installed in ROOT.
chroot_version() {
	chroot "$1" /usr/sbin/slurmctld -V 2>/dev/null | awk '{ print $2 }'
}

chroot_ok() {
	local root=$1 series=$2 v
	[[ -f $root/.complete && -x $root/usr/sbin/slurmctld && -x $root/usr/bin/scontrol ]] || return 1
	v=$(chroot_version "$root") || return 1
	[[ $v == "${series}".* ]]
}

# unmount_under DIR unmounts anything debootstrap left mounted below DIR (deepest first).
unmount_under() {
	local dir mnt
	dir=$(realpath -m "$1")
	awk -v d="$dir/" 'index($2 "/", d) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r mnt; do
			log "    unmounting leftover $mnt"
			umount -l "$mnt" || true
		done
}

remove_tree() {
	[[ -e $1 ]] || return 0
	unmount_under "$1"
	rm -rf --one-file-system -- "$1"
}

# build_chroot SUITE SERIES SCRIPT HOW:PACKAGES builds the Slurm SERIES chroot of Debian
# SUITE (SCRIPT: the debootstrap script to use, "-" for the suite's own; HOW: apt or
# include, PACKAGES comma-separated).
build_chroot() {
	local suite=$1 series=$2 script=$3 how=${4%%:*} pkgs=${4#*:} cache root tmp mirror v t0
	cache=$(cache_dir)
	root="$cache/slurm-${series}-${suite}"
	mkdir -p "$cache"

	# One build at a time; a second run waits for the first.
	exec 9>"$cache/.install-slurm.lock"
	flock 9 || die "cannot lock $cache/.install-slurm.lock"

	if chroot_ok "$root" "$series"; then
		log "    chroot already built: $root (slurmctld $(chroot_version "$root"))"
		return
	fi
	if [[ -e $root ]]; then
		log "    $root exists but is not a complete Slurm ${series} chroot; removing it"
		remove_tree "$root"
	fi
	local stale
	for stale in "$cache/.slurm-${series}-${suite}.tmp."*; do
		[[ -e $stale ]] || continue
		log "    removing leftover partial build $stale"
		remove_tree "$stale"
	done

	mirror=$(debian_mirror)
	tmp=$(mktemp -d "$cache/.slurm-${series}-${suite}.tmp.XXXXXX")
	chmod 0755 "$tmp" # it becomes the chroot's /: users such as munge and _apt must traverse it
	local dlog="$cache/debootstrap-${suite}.log" alog="$cache/chroot-apt-${suite}.log"
	: >"$dlog"
	: >"$alog"
	# shellcheck disable=SC2064 # expand $tmp now
	trap "log 'build interrupted; removing $tmp'; remove_tree '$tmp'" EXIT

	t0=$SECONDS
	local args=(--variant=minbase)
	[[ $how == include ]] && args+=(--include="$pkgs")
	args+=("$suite" "$tmp" "$mirror")
	if [[ $script != - ]]; then
		[[ -r /usr/share/debootstrap/scripts/$script ]] || die "debootstrap has no script $script"
		args+=("/usr/share/debootstrap/scripts/$script")
	fi
	log "    debootstrap ${args[*]}"
	logged "$dlog" debootstrap "${args[@]}"
	log "    debootstrap: $((SECONDS - t0))s"

	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod +x "$tmp/usr/sbin/policy-rc.d"

	if [[ $how == apt ]]; then
		t0=$SECONDS
		log "    chroot apt-get update"
		logged "$alog" chroot "$tmp" apt-get update -q
		log "    chroot apt-get install --no-install-recommends ${pkgs//,/ }"
		# shellcheck disable=SC2046 # the package list splits at commas
		logged "$alog" chroot "$tmp" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends $(tr , ' ' <<<"$pkgs")
		log "    apt inside the chroot: $((SECONDS - t0))s"
	fi
	chroot "$tmp" apt-get clean
	rm -rf "$tmp"/var/lib/apt/lists/*

	[[ -x $tmp/usr/bin/scontrol ]] || die "scontrol is missing from the chroot"
	v=$(chroot_version "$tmp") || true
	[[ $v == "${series}".* ]] ||
		die "the chroot's slurmctld reports version '${v}', want ${series}.x (did $suite move on?)"
	log "    chroot slurmctld version: $v"

	date -u +%Y-%m-%dT%H:%M:%SZ >"$tmp/.complete"
	mv -T "$tmp" "$root"
	trap - EXIT
	log "    chroot ready: $root ($(du -sh "$root" | cut -f1))"
}

main() {
	# Without a trap, bash carries on after Ctrl-C once a child that ignores SIGINT
	# (debootstrap does) has finished. With it, the script stops after that child and
	# the EXIT trap of build_chroot removes the partial chroot.
	trap 'die "interrupted by a signal"' INT TERM HUP
	[[ $(id -u) -eq 0 ]] || die "must run as root (apt-get, munged setup, debootstrap and chroot need it)"
	command -v apt-get >/dev/null && command -v dpkg-query >/dev/null ||
		die "apt-get/dpkg-query not found: this script targets Debian bookworm"
	local start=$SECONDS
	step "host packages (${HOST_PKGS[*]})" install_host_packages
	step "munge" prepare_munge
	local c
	for c in "${CHROOTS[@]}"; do
		# shellcheck disable=SC2086 # four words: suite, series, script, how
		step "Slurm chroot ($c)" build_chroot $c
	done
	log "all done in $((SECONDS - start))s"
}

main "$@"
