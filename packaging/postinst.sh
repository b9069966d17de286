#!/bin/sh
# After install or upgrade: the toposcope system user, its state directory,
# and systemd's view of the units. The service is not started: it needs a
# provider for this cluster first (/etc/toposcope/config.yaml).
set -e
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers /usr/lib/sysusers.d/toposcope.conf
elif ! getent passwd toposcope >/dev/null; then
	useradd --system --user-group --home-dir /var/lib/toposcope --no-create-home \
		--shell /usr/sbin/nologin --comment "toposcope topology service" toposcope
fi
install -d -o toposcope -g toposcope -m 0755 /var/lib/toposcope /var/lib/toposcope/slurm
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	# On upgrade, restart what was running.
	if systemctl is-active --quiet toposcope.service; then
		systemctl try-restart toposcope.service >/dev/null 2>&1 || true
	fi
fi
exit 0
