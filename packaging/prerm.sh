#!/bin/sh
# Before removal (not before an upgrade): stop the service and the path unit.
set -e
case "${1:-}" in
remove | purge | 0)
	if [ -d /run/systemd/system ]; then
		systemctl stop toposcope-reconfigure.path toposcope.service >/dev/null 2>&1 || true
		systemctl disable toposcope-reconfigure.path toposcope.service >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
