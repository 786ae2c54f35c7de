#!/bin/sh
# listen-perms: a session's UNIX socket is its credential.  Two sessions
# whose sockets are owned by two uids (listen = unix:PATH owner=UID
# group=GID mode=0600): a sandbox running as session a's owner gets through
# on a.sock, with a plain connect and with the README's recipe (unshare -rn
# postern-bridge --connect a.sock -- curl), and gets EACCES on b.sock, and
# the other way round.  After the privilege drop (user = 65532) a reload
# that would need root for a socket file (a new socket for another uid, a
# changed mode on a socket the proxy does not own) is refused with
# FILE:LINE and 409, nothing changes; a new socket the proxy's own uid can
# make gets its mode at the reload; a restart applies a changed mode.
# Missing directories above a socket are made, every level 0755, at start
# (as root) and at a reload (as the proxy's uid, in a directory it owns);
# where its uid may not make them, the reload is refused and the error
# names the directory and says permission.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"

A=4101
B=4102
S="$WORLD_DIR/run"
mkdir -m 0755 "$S"
# The proxy's own directory, for a socket it makes after the drop.
S2="$WORLD_DIR/own"
mkdir -m 0755 "$S2"
chown 65532:65532 "$S2"
ADMIN_SOCK="$WORLD_DIR/adm/admin.sock"
mkdir -p "$WORLD_DIR/etc"
conf="$WORLD_DIR/etc/postern.ini"
# write_conf MODE_A [LINE...]: the config, session a's socket with mode
# MODE_A, then each LINE.
write_conf() {
	local m l
	m=$1
	shift
	{
		admin_proxy_section "user = 65532"
		echo "[defaults]"
		echo "allow_hosts = allowed.test private"
		echo "[session a]"
		echo "listen = unix:$S/a.sock owner=$A group=$A mode=$m"
		echo "[session b]"
		echo "listen = unix:$S/b.sock owner=$B mode=0600"
		for l in "$@"; do echo "$l"; done
	} >"$conf"
}
perm() { stat -c '%a %u %g' "$1"; }


write_conf 0600
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_eq "600 $A $A" "$(perm "$S/a.sock")" "a.sock: mode 0600, owner $A, group $A, as configured"
expect_eq "600 $B 0" "$(perm "$S/b.sock")" "b.sock: mode 0600, owner $B, group root (no group=)"
expect_eq 200 "$(unix_try $A "$S/a.sock")" "session a's owner gets through on a.sock"
expect_eq EACCES "$(unix_try $A "$S/b.sock")" "session a's owner gets EACCES on b.sock"
expect_eq 200 "$(unix_try $B "$S/b.sock")" "session b's owner gets through on b.sock"
expect_eq EACCES "$(unix_try $B "$S/a.sock")" "session b's owner gets EACCES on a.sock"
expect_eq EACCES "$(unix_try 4103 "$S/a.sock")" "a third uid gets EACCES on a.sock"
expect_audit "the tunnel is in session a, peer uid $A" session=a uid=$A host=allowed.test decision=allow

# The README's recipe, as session a's owner.
if ! world_userns_ok $A; then
	diag "uid $A cannot create a user namespace here: the recipe part is skipped"
else
	bins=$(world_bins_for $A "$top_builddir/postern-bridge") ||
		die "cannot give uid $A the bridge"
	recipe() {
		in_px setpriv --reuid $A --regid $A --clear-groups unshare -rn \
			"$bins/postern-bridge" --connect "$1" -- \
			curl -sS --max-time 10 --cacert "$WORLD_CA" https://allowed.test/recipe 2>&1
	}
	expect_match "^sni=allowed\.test$" "$(recipe "$S/a.sock")" \
		"unshare -rn postern-bridge --connect a.sock -- curl: through, as a's owner"
	out=$(recipe "$S/b.sock")
	expect_no_match "^sni=" "$out" "the same on b.sock does not get through"
	expect_match "503|Permission denied" "$out" "and is refused (503, permission denied)"
fi

# ---- reloads after the drop to 65532
# A changed mode on a socket owned by $A: the proxy cannot chmod it.
write_conf 0660
code=$(admin_curl -o "$WORLD_DIR/r.body" -w '%{http_code}' -X POST http://postern/reload)
expect_eq 409 "$code" "a new mode for a.sock after the drop: the reload is refused (409)"
expect_match "\"$conf:10: cannot listen on unix:$S/a.sock owner=$A group=$A mode=0660: the socket belongs to uid $A and the proxy runs as uid 65532, so it cannot change its owner, group or mode; restart the proxy to apply it" \
	"$(cat "$WORLD_DIR/r.body")" "with FILE:LINE and the need for a restart"
expect_eq 1 "$(generation)" "the old config stays in force"
expect_eq "600 $A $A" "$(perm "$S/a.sock")" "a.sock is unchanged"

# A new session whose socket belongs to another uid: only root can.
write_conf 0600 "[session c]" "listen = unix:$S2/c.sock owner=4103"
code=$(admin_curl -o "$WORLD_DIR/r.body" -w '%{http_code}' -X POST http://postern/reload)
expect_eq 409 "$code" "a new socket owned by 4103 after the drop: refused (409)"
expect_match "$conf:14: cannot listen on unix:$S2/c.sock owner=4103: only root can make a socket owned by uid 4103, and the proxy runs as uid 65532; restart the proxy" \
	"$(cat "$WORLD_DIR/r.body")" "with FILE:LINE"
[ ! -e "$S2/c.sock" ] && ok "c.sock was not made" || fail "c.sock was made"
expect_eq 1 "$(generation)" "the old config still in force"

# A new socket of the proxy's own: its mode is applied at the reload.
write_conf 0600 "[session c]" "listen = unix:$S2/c.sock mode=0666"
code=$(admin_curl -o /dev/null -w '%{http_code}' -X POST http://postern/reload)
expect_eq 200 "$code" "a new socket of the proxy's own uid, mode 0666: the reload is taken"
expect_eq "666 65532 65532" "$(perm "$S2/c.sock")" "c.sock: mode 0666, the proxy's uid and gid"
expect_eq 200 "$(unix_try $A "$S2/c.sock")" "and any uid gets through on it"
expect_eq EACCES "$(unix_try $A "$S/b.sock")" "b.sock still refuses a's owner"

# A restart applies what a reload could not.
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
write_conf 0660
proxy_start "$conf" || die "no proxy after the restart"
expect_eq "660 $A $A" "$(perm "$S/a.sock")" "after a restart a.sock has its new mode 0660"
expect_eq 200 "$(unix_try 4103 "$S/a.sock" $A)" \
	"and a member of group $A gets through"
proxy_stop

# ---- missing directories, two levels deep
D="$WORLD_DIR/deep"
write_dirs_conf() {
	{
		admin_proxy_section "user = 65532"
		echo "[defaults]"
		echo "allow_hosts = allowed.test private"
		echo "[session d]"
		echo "listen = unix:$D/s1/proxy.sock"
		for l in "$@"; do echo "$l"; done
	} >"$conf"
}
write_dirs_conf
proxy_start "$conf" || die "no proxy with two missing directories above its socket"
admin_wait || die "no admin socket"
expect_eq 200 "$(unix_try 0 "$D/s1/proxy.sock")" "start: $D/s1/proxy.sock is made, both directories with it"
expect_eq "755 0" "$(stat -c '%a %u' "$D")" "start: the level above is 0755, root's"
expect_eq "755 65532" "$(stat -c '%a %u' "$D/s1")" "start: the socket's own directory is 0755, given to the proxy's uid"

write_dirs_conf "[session e]" "listen = unix:$S2/x/y/e.sock mode=0666"
code=$(admin_curl -o "$WORLD_DIR/r.body" -w '%{http_code}' -X POST http://postern/reload)
expect_eq 200 "$code" "reload: a new session two missing levels under the proxy's own directory is taken"
expect_eq 200 "$(unix_try $A "$S2/x/y/e.sock")" "reload: $S2/x/y/e.sock is made and serves"
expect_eq "755 755" "$(stat -c '%a' "$S2/x") $(stat -c '%a' "$S2/x/y")" "reload: both new levels are 0755"

gen=$(generation)
write_dirs_conf "[session f]" "listen = unix:$S/z/w/f.sock mode=0666"
code=$(admin_curl -o "$WORLD_DIR/r.body" -w '%{http_code}' -X POST http://postern/reload)
expect_eq 409 "$code" "reload: a new session under root's 0755 $S, as uid 65532: refused (409)"
expect_match "$conf:[0-9]*: cannot listen on unix:$S/z/w/f.sock mode=0666: Permission denied" \
	"$(cat "$WORLD_DIR/r.body")" "the answer says permission"
expect_match "cannot make the directory $S/z: permission denied: the proxy's user \\(uid 65532\\) cannot create it" \
	"$(cat "$WORLD_DIR/proxy.out")" "the log names the directory and says the proxy's user cannot create it"
expect_eq "$gen" "$(generation)" "the old config stays in force"
[ ! -e "$S/z" ] && ok "nothing was made under $S" || fail "$S/z was made"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
