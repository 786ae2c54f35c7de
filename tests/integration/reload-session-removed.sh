#!/bin/sh
# reload-session-removed: with revoke = yes, a reload that removes a session
# closes that session's open tunnel and logs the revoke with its own
# reason, session_removed, not host_not_allowed (which says a rule refused
# the host, and would send an admin looking for a rule that is not there).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
# write_conf SESSION-LINES...: [proxy] (revoke = yes) and [defaults], then
# the lines.
write_conf() {
	{
		admin_proxy_section "revoke = yes"
		echo "[defaults]"
		echo "allow_hosts = allowed.test private"
		for l in "$@"; do echo "$l"; done
	} >"$conf"
}
reload() { admin_curl -X POST -o /dev/null -w '%{http_code}' http://postern/reload; }

write_conf "[session a]" "listen = tcp:127.0.0.1:3130" "allow_hosts = other.test:7 private"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" hold --proxy 127.0.0.1:3130 --target other.test:7 \
	--ready "$WORLD_DIR/hold.ready" --stop "$WORLD_DIR/hold.stop" --max-seconds 30 \
	>"$WORLD_DIR/hold.out" 2>&1 &
hold=$!
i=0
while [ ! -e "$WORLD_DIR/hold.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/hold.ready" ] || die "the held tunnel did not open"

write_conf
expect_eq 200 "$(reload)" "reload without session a (revoke = yes)"
expect_audit "the tunnel's revoke is logged" event=revoke session=a host=other.test port=7 \
	reason=session_removed
expect_eq 0 "$(audit_count event=revoke reason=host_not_allowed)" "not as host_not_allowed"
touch "$WORLD_DIR/hold.stop"
wait "$hold"
expect_eq 1 $? "the tunnel of the removed session was closed"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
