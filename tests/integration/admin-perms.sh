#!/bin/sh
# admin-perms: the admin socket file is 0600 (only root and the proxy's own
# uid may connect) unless admin_group opens it, 0660, to that one group; a
# stale socket file is replaced, a live one or a file that is not a socket
# is never touched and the proxy refuses to start.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"

conf="$WORLD_DIR/postern.ini"
# write_conf EXTRA...: a config with EXTRA lines in [proxy].
write_conf() {
	{
		admin_proxy_section "$@"
		echo "[defaults]"
		echo "allow_hosts = allowed.test private"
	} >"$conf"
}
# as UID [GROUPS] -- CMD...: run CMD with that uid and gid, and only the
# supplementary GROUPS (comma-separated; "-" for none).
as() {
	local u g
	u=$1
	g=$2
	shift 3
	if [ "$g" = - ]; then
		setpriv --reuid "$u" --regid "$u" --clear-groups "$@"
	else
		setpriv --reuid "$u" --regid "$u" --groups "$g" "$@"
	fi
}
can_status() {
	as "$@" -- curl -sS --max-time 5 -o /dev/null -w '%{http_code}' --unix-socket "$ADMIN_SOCK" \
		http://postern/status 2>/dev/null
}
perm() { stat -c '%a %u %g' "$1"; }

# ---- 0600 by default
write_conf
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_eq "600 0 0" "$(perm "$ADMIN_SOCK")" "default: mode 0600, owned by root"
expect_eq 200 "$(admin_get /status >/dev/null && echo 200)" "default: root may use it"
expect_ne 200 "$(can_status 4243 - --)" "default: another uid may not"
expect_ne 200 "$(can_status 4243 4242 --)" "default: another uid may not, whatever its groups"
out=$(as 4243 - -- "$POSTERN_PROXY" ctl status --admin "$ADMIN_SOCK" 2>&1)
expect_eq 1 $? "default: ctl as another uid exits 1"
expect_match "Permission denied" "$out" "default: and says permission denied"
proxy_stop

# ---- admin_group: 0660, that group
write_conf "admin_group = 4242"
proxy_start "$conf" || die "no proxy with admin_group"
admin_wait || die "no admin socket"
expect_eq "660 0 4242" "$(perm "$ADMIN_SOCK")" "admin_group: mode 0660, group 4242"
expect_eq 200 "$(can_status 4243 4242 --)" "admin_group: a member of 4242 may use it"
expect_ne 200 "$(can_status 4243 - --)" "admin_group: a non-member may not"
expect_ne 200 "$(can_status 4243 4241 --)" "admin_group: a member of another group may not"
out=$(as 4243 4242 -- "$POSTERN_PROXY" ctl reload --admin "$ADMIN_SOCK")
expect_eq 0 $? "admin_group: a member may reload with ctl"
proxy_stop

# ---- user: the proxy's own uid keeps the file, and removes it on exit
# after the privilege drop (it made the directory, so it owns that too).
ADMIN_SOCK="$WORLD_DIR/run/admin.sock"
write_conf "user = 4244"
proxy_start "$conf" || die "no proxy with user"
admin_wait || die "no admin socket"
expect_eq "600 4244 0" "$(perm "$ADMIN_SOCK")" "user: mode 0600, owned by the proxy's uid"
expect_eq "4244" "$(stat -c %u "$WORLD_DIR/run")" "user: the directory made for it is the proxy's"
expect_eq 200 "$(can_status 4244 - --)" "user: the proxy's uid may use it"
expect_ne 200 "$(can_status 4243 - --)" "user: another uid may not"
admin_curl -X POST -o /dev/null http://postern/reload
expect_eq 2 "$(generation)" "user: reload works after the privilege drop"
proxy_stop
expect_eq 0 $? "user: the proxy exits cleanly"
[ ! -e "$ADMIN_SOCK" ] && ok "user: the socket file is removed after the drop" ||
	fail "user: the socket file is left behind"
ADMIN_SOCK="$WORLD_DIR/admin.sock"

# ---- a stale socket file (its server died) is replaced
write_conf
"$WORLD_PYTHON" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); s.close()' \
	"$ADMIN_SOCK"
[ -S "$ADMIN_SOCK" ] || die "could not make a stale socket"
proxy_start "$conf" || die "no proxy over a stale socket"
admin_wait && ok "a stale socket file is replaced"
expect_eq "600 0 0" "$(perm "$ADMIN_SOCK")" "and the new one is 0600"

# ---- a live socket is never taken over
sed 's/127\.0\.0\.1:3128/127.0.0.1:3138/' "$conf" >"$WORLD_DIR/second.ini"
timeout 10 ip netns exec "$WORLD_NS_PX" "$POSTERN_PROXY" -c "$WORLD_DIR/second.ini" \
	>"$WORLD_DIR/second.out" 2>&1
rc=$?
expect_eq 1 "$rc" "a second proxy on a live admin socket refuses to start"
expect_match "another process is serving this socket" "$(cat "$WORLD_DIR/second.out")" "and says why"
expect_eq 1 "$(generation)" "the first proxy still answers on it"
proxy_stop

# ---- a file that is not a socket is never removed
echo "precious" >"$ADMIN_SOCK"
timeout 10 ip netns exec "$WORLD_NS_PX" "$POSTERN_PROXY" -c "$conf" >"$WORLD_DIR/third.out" 2>&1
expect_eq 1 $? "the proxy refuses to start over a regular file"
expect_eq precious "$(cat "$ADMIN_SOCK")" "and leaves the file alone"
expect_match "exists and is not a socket" "$(cat "$WORLD_DIR/third.out")" "and says why"
rm -f "$ADMIN_SOCK"
