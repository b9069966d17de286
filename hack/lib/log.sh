# Sourced by the install scripts after they set LOG_NAME: log MSG... prints
# a line tagged [LOG_NAME]; die MSG... prints an error and exits 1; step
# NAME CMD... runs CMD between a header and a line saying how long it took.

log() { printf '[%s] %s\n' "$LOG_NAME" "$*"; }
die() {
	printf '[%s] ERROR: %s\n' "$LOG_NAME" "$*" >&2
	exit 1
}
step() {
	local name=$1 start=$SECONDS
	shift
	log "==> ${name}"
	"$@"
	log "    ${name}: done in $((SECONDS - start))s"
}
