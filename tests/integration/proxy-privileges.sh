#!/bin/sh
# proxy-privileges: UNIX listeners (0660, stale file replaced, live one
# refused, removed on exit even after dropping privileges), SO_PEERCRED in
# the audit log, user = UID drops every privilege, SIGUSR1 reopens the log.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

# The service's run directory belongs to the proxy's uid (systemd's
# RuntimeDirectory does that); a directory the proxy makes itself is
# handed to the uid before it drops privileges.
mkdir -p "$WORLD_DIR/run"
chown 65534:65534 "$WORLD_DIR/run"
stale="$WORLD_DIR/run/stale.sock"
sock="$WORLD_DIR/run/postern/proxy.sock"
# A stale socket file: bound, then its owner went away.
in_px "$WORLD_PYTHON" -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$stale')"
[ -S "$stale" ] && ok "a stale socket file is in the way" || fail "could not make a stale socket"
chmod 755 "$WORLD_DIR"
cat >"$WORLD_DIR/p.ini" <<EOF
[proxy]
listen = unix:$sock
listen = unix:$stale
listen = tcp:127.0.0.1:3128
log = $PROXY_LOG
dns_servers = $WORLD_DNS
user = 65534
[defaults]
allow_hosts = allowed.test private
EOF
touch "$PROXY_LOG"; chmod 666 "$PROXY_LOG"
proxy_start "$WORLD_DIR/p.ini" || die "no proxy"
expect_eq 660 "$(stat -c %a "$sock")" "the UNIX socket is created 0660"
expect_eq 660 "$(stat -c %a "$stale")" "the stale socket file was replaced by a live one"
st=/proc/$WORLD_PROXY_PID/status
expect_eq "65534" "$(awk '/^Uid:/{print $2 $3 $4 $5}' "$st" | sed 's/65534655346553465534/65534/')" "real, effective, saved and fs uid are 65534"
expect_eq "65534" "$(awk '/^Gid:/{print $2}' "$st")" "gid is 65534"
expect_eq "" "$(awk '/^Groups:/{print $2}' "$st")" "no supplementary groups"
expect_eq "0000000000000000" "$(awk '/^CapEff:/{print $2}' "$st")" "no effective capabilities"
expect_eq "0000000000000000" "$(awk '/^CapPrm:/{print $2}' "$st")" "no permitted capabilities"
expect_eq 1 "$(awk '/^NoNewPrivs:/{print $2}' "$st")" "no_new_privs is set"

# Through the UNIX socket: the peer is identified with SO_PEERCRED.
px_relay "$sock" 3129
out=$(curl_px -x http://127.0.0.1:3129 https://allowed.test/unix)
expect_match "^sni=allowed\.test$" "$out" "a request through the UNIX listener works"
expect_audit "SO_PEERCRED pid and uid are logged" event=decision host=allowed.test pid~'^[1-9]' uid=0 peer~'^unix:pid='

# SIGUSR1 reopens the audit log (rotation).
mv "$PROXY_LOG" "$PROXY_LOG.1"
touch "$PROXY_LOG"; chmod 666 "$PROXY_LOG"
kill -USR1 "$WORLD_PROXY_PID"
sleep 0.3
curl_px -x http://127.0.0.1:3128 https://allowed.test/rotated >/dev/null
expect_audit "after SIGUSR1 new lines go to the new file" host=allowed.test event=decision peer~'^127'
expect_eq 0 "$(grep -c rotated "$PROXY_LOG.1")" "and none to the rotated one"

# A second proxy on the same live socket refuses to start.
in_px "$top_builddir/postern-proxy" --listen "unix:$sock" >"$WORLD_DIR/second.out" 2>&1
expect_ne 0 $? "a second proxy on a live socket refuses to start"
expect_match "another process is serving" "$(cat "$WORLD_DIR/second.out")" "and says why"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
[ ! -e "$sock" ] && [ ! -e "$stale" ] && ok "the socket files are removed on exit, after the privilege drop" ||
	fail "a socket file was left behind"
