#!/bin/sh
# admin-sessions-perms: with admin_group, a member of that group reads
# GET /sessions but may not make or end a session (403): a session is a
# config section, written by root and the proxy's own uid alone.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"

conf="$WORLD_DIR/postern.ini"
{ admin_proxy_section "admin_group = 4242"; cat <<EOF2; } >"$conf"
[defaults]
allow_hosts = allowed.test private
EOF2
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# member CMD...: CMD as uid 4243 in group 4242 only.
member() {
	setpriv --reuid 4243 --regid 4243 --groups 4242 "$@"
}
# code [CURL ARGS...]: the status of a request to the admin socket as the member.
code() {
	member curl -sS --max-time 5 -o "$WORLD_DIR/body" -w '%{http_code}' --unix-socket "$ADMIN_SOCK" \
		"$@" 2>/dev/null
}

: >"$WORLD_DIR/body"
chmod 666 "$WORLD_DIR/body"
expect_eq 200 "$(code http://postern/sessions)" "a member of admin_group reads GET /sessions"
expect_eq 403 "$(code -X PUT --data-binary "listen = unix:$WORLD_DIR/m.sock" http://postern/sessions/m)" \
	"but may not make a session"
expect_match "only root and the proxy's own uid may make or end a session" "$(cat "$WORLD_DIR/body")" \
	"and is told why"
[ -e "$WORLD_DIR/m.sock" ] && fail "a refused session was bound"
out=$(member "$top_builddir/postern-proxy" ctl --admin "$ADMIN_SOCK" session add m \
	"listen=unix:$WORLD_DIR/m.sock" 2>&1)
expect_eq 1 $? "ctl session add as a member exits 1"
expect_match "only root and the proxy's own uid" "$out" "with the reason"
expect_eq 1 "$(generation)" "nothing was made"

# Root (the socket's owner here) may; the member still may not end it.
expect_eq 200 "$(admin_curl -X PUT --data-binary "listen = unix:$WORLD_DIR/m.sock" -o /dev/null \
	-w '%{http_code}' http://postern/sessions/m)" "root makes the session"
expect_eq 403 "$(code -X DELETE http://postern/sessions/m)" "a member may not end it"
expect_eq 200 "$(admin_curl -X DELETE -o /dev/null -w '%{http_code}' http://postern/sessions/m)" \
	"root ends it"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
