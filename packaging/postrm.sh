#!/bin/sh
# After removal: systemd forgets the units; purge also deletes the state
# (store and written topology files). The user is kept, as Debian does for
# system users, so that files it owned elsewhere keep a name.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
if [ "${1:-}" = purge ]; then
	rm -rf /var/lib/toposcope
fi
exit 0
