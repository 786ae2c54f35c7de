#!/bin/sh
# reload-address: what was vetted before a reload is judged again, on the
# full decision (name, port, the connected address, "private"), by what
# the reload brings.  A keep-alive client's next request after a reload
# that adds deny_hosts = the upstream's address is refused and never sent
# on the pooled upstream; so is one under a rule without "private" after a
# request under a rule with it; and with revoke = yes a tunnel to a newly
# denied address is closed while one to another address stays, and so is
# one that was still being looked up when the reload landed.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
# write_conf REVOKE LINE...: a config with those [defaults] lines.
write_conf() {
	local r
	r=$1
	shift
	{
		admin_proxy_section "revoke = $r"
		echo "[defaults]"
		for l in "$@"; do echo "$l"; done
	} >"$conf"
	[ -z "${DNS:-}" ] || sed -i "s/^dns_servers = .*/dns_servers = $DNS/" "$conf"
}
reload() {
	ctl reload -c "$conf" >/dev/null
}

# ka NAME PATH1 PATH2: one keep-alive client connection, a request for
# PATH1, then (once NAME.go exists) one for PATH2; prints "STATUS REASON"
# per request, and touches NAME.first after the first answer.
ka() {
	in_px "$WORLD_PYTHON" -c '
import os, socket, sys, time
def req(s, path):
    s.sendall(b"GET http://allowed.test" + path.encode() + b" HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d: return "closed -"
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    n, why = 0, "-"
    for ln in head.split(b"\r\n")[1:]:
        k, _, v = ln.partition(b":")
        k = k.strip().lower()
        if k == b"content-length": n = int(v)
        if k == b"x-postern-reason": why = v.strip().decode()
    while len(rest) < n:
        d = s.recv(65536)
        if not d: break
        rest += d
    return head.split(b" ")[1].decode() + " " + why
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
print(req(s, sys.argv[2]), flush=True)
open(sys.argv[1] + ".first", "w").close()
while not os.path.exists(sys.argv[1] + ".go"): time.sleep(0.05)
print(req(s, sys.argv[3]), flush=True)
' "$WORLD_DIR/$1" "$2" "$3" >"$WORLD_DIR/$1.out" 2>&1 &
	eval "pid_$1=\$!"
	i=0
	while [ ! -e "$WORLD_DIR/$1.first" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$WORLD_DIR/$1.first" ] || die "the keep-alive client $1 got no first answer"
}
# ka_go NAME: send the second request and wait for the client (not in a
# subshell: wait needs the job); ka_out NAME: both results on one line.
ka_go() {
	touch "$WORLD_DIR/$1.go"
	eval "wait \$pid_$1"
}
ka_out() {
	tr '\n' ' ' <"$WORLD_DIR/$1.out" | sed 's/ $//'
}
# hold NAME TARGET: open a tunnel that checks itself until NAME.stop.
hold() {
	in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" hold --proxy 127.0.0.1:3128 --target "$2" \
		--ready "$WORLD_DIR/$1.ready" --stop "$WORLD_DIR/$1.stop" --max-seconds 30 \
		>"$WORLD_DIR/$1.out" 2>&1 &
	eval "pid_$1=\$!"
	i=0
	while [ ! -e "$WORLD_DIR/$1.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$WORLD_DIR/$1.ready" ] || die "the tunnel $1 did not open"
}
# ws NAME: a WebSocket through the proxy to allowed.test/upgrade (the world
# echoes raw bytes after its 101); touches NAME.ready once it echoes, then
# at NAME.stop exits 0 if it still echoes, 1 if it was closed.
ws() {
	in_px "$WORLD_PYTHON" -c '
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"GET http://allowed.test/upgrade HTTP/1.1\r\nHost: allowed.test\r\n"
          b"Connection: Upgrade\r\nUpgrade: websocket\r\n"
          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    d = s.recv(4096)
    if not d: sys.exit("closed before the 101")
    buf += d
if b" 101 " not in buf.split(b"\r\n")[0]: sys.exit("no 101: %r" % buf[:80])
def echo(m):
    try:
        s.sendall(m)
        got = b""
        while len(got) < len(m):
            d = s.recv(4096)
            if not d: return False
            got += d
        return got == m
    except OSError:
        return False
if not echo(b"one"): sys.exit("no echo")
open(sys.argv[1] + ".ready", "w").close()
while not os.path.exists(sys.argv[1] + ".stop"): time.sleep(0.05)
sys.exit(0 if echo(b"two") else 1)
' "$WORLD_DIR/$1" >"$WORLD_DIR/$1.out" 2>&1 &
	eval "pid_$1=\$!"
	i=0
	while [ ! -e "$WORLD_DIR/$1.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$WORLD_DIR/$1.ready" ] || die "the WebSocket $1 did not open: $(cat "$WORLD_DIR/$1.out")"
}
# finish NAME: stop the tunnel's checks; returns its exit status.
finish() {
	touch "$WORLD_DIR/$1.stop"
	eval "wait \$pid_$1"
}

# ---- (a) keep-alive: a reload denies the pooled upstream's address
write_conf no "allow_hosts = allowed.test private"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
ka k1 /before /after
write_conf no "allow_hosts = allowed.test private" "deny_hosts = $WORLD_UP4"
expect_eq 0 "$(reload; echo $?)" "reload adding deny_hosts = $WORLD_UP4"
ka_go k1
expect_eq "200 - 403 denied_by_rule" "$(ka_out k1)" \
	"keep-alive: 200 before the reload, then 403 denied_by_rule for the pooled upstream's address"
expect_audit "the refusal names the address" path=/after decision=deny \
	reason=denied_by_rule address="$WORLD_UP4"
expect_eq 1 "$(upstream_count target=/before)" "the first request reached the upstream"
expect_eq 0 "$(upstream_count target=/after)" "the pooled upstream was not used for the second"

# ---- (a') one snapshot, two rules: "private" under one only
write_conf no "allow_hosts = allowed.test/a/ private" "allow_hosts = allowed.test/b/"
expect_eq 0 "$(reload; echo $?)" "reload with a private and a non-private path rule"
ka k2 /a/1 /b/1
ka_go k2
expect_eq "200 - 403 private_address" "$(ka_out k2)" \
	"keep-alive: a rule without private does not inherit the pooled upstream of one with it"
expect_eq 0 "$(upstream_count target=/b/1)" "... and /b/1 never reached the upstream"

# ---- (a'') nothing changed: the pooled upstream is still reused
write_conf no "allow_hosts = allowed.test private"
expect_eq 0 "$(reload; echo $?)" "reload back to allowed.test private"
upstream_log_reset
ka k3 /r1 /r2
ka_go k3
expect_eq "200 - 200 -" "$(ka_out k3)" "keep-alive under one snapshot and rule: both answered"
c1=$(upstream_get conn target=/r1)
expect_match '^[0-9]+$' "$c1" "the upstream logged the first request's connection"
expect_eq "$c1" "$(upstream_get conn target=/r2)" "... and the second came on it: the pooled upstream"
proxy_stop

# ---- (b) revoke = yes: a reload denies a tunnel's address
write_conf yes "allow_hosts = allowed.test:7 private, priv.test:7 private, allowed.test/upgrade private"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
hold t1 allowed.test:7
hold t2 priv.test:7
ws w1
write_conf yes "allow_hosts = allowed.test:7 private, priv.test:7 private, allowed.test/upgrade private" \
	"deny_hosts = $WORLD_UP4"
expect_eq 0 "$(reload; echo $?)" "reload adding deny_hosts = $WORLD_UP4 (revoke = yes)"
expect_audit "the revoked tunnel is logged with the address rule" event=revoke \
	host=allowed.test port=7 reason=denied_by_rule address="$WORLD_UP4"
finish t1
expect_eq 1 $? "revoke = yes: the tunnel to $WORLD_UP4 was closed"
finish t2
expect_eq 0 $? "revoke = yes: the tunnel to priv.test ($WORLD_PRIV4) stayed up"
expect_eq 0 "$(audit_count event=revoke host=priv.test)" "... and was not revoked"
expect_audit "the WebSocket after its 101 is revoked too" event=revoke \
	host=allowed.test port=80 reason=denied_by_rule
finish w1
expect_eq 1 $? "revoke = yes: the WebSocket to $WORLD_UP4 was closed"
proxy_stop

# ---- (b') revoke = yes: a WebSocket whose 101 comes after the reload
# The world answers /upgrade/slow after 1.5 s; the reload lands meanwhile,
# when the request is neither a tunnel (nothing to revoke) nor judged
# again by anything else: its 101 must not open a tunnel the new rules
# refuse.
write_conf yes "allow_hosts = allowed.test/upgrade private"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
in_px "$WORLD_PYTHON" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=8)
s.sendall(b"GET http://allowed.test/upgrade/slow HTTP/1.1\r\nHost: allowed.test\r\n"
          b"Connection: Upgrade\r\nUpgrade: websocket\r\n"
          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    d = s.recv(4096)
    if not d: break
    buf += d
print(buf.split(b"\r\n")[0].decode("latin-1"))
' >"$WORLD_DIR/slowws.out" 2>&1 &
slowws=$!
sleep 0.5
write_conf yes "allow_hosts = allowed.test/upgrade private" "deny_hosts = $WORLD_UP4"
expect_eq 0 "$(reload; echo $?)" "reload adding deny_hosts = $WORLD_UP4 while the 101 is awaited"
wait $slowws
expect_match "^HTTP/1.1 403 " "$(cat "$WORLD_DIR/slowws.out")" \
	"the 101 after the reload is not passed on: 403 instead"
expect_audit "and the upgrade is logged as revoked, with the address rule" event=revoke \
	host=allowed.test port=80 path=/upgrade/slow reason=denied_by_rule
proxy_stop

# ---- (c) revoke = yes: a tunnel still in its lookup when the reload lands
# lib-proxy/dnsfake.py on 10.200.1.54 answers slow.test (10.200.1.2) after
# 1 s; the reload comes while the proxy waits for it.
FAKE=10.200.1.54
ip -n "$WORLD_NS_UP" addr add "$FAKE/24" dev veth-px || die "cannot add $FAKE"
in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/dnsfake.py" "$FAKE" \
	"$WORLD_DIR/dnsfake.log" >"$WORLD_DIR/dnsfake.out" 2>&1 &
i=0
while ! grep -q ready "$WORLD_DIR/dnsfake.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || die "dnsfake.py did not start: $(cat "$WORLD_DIR/dnsfake.out")"
	sleep 0.1
done
DNS=$FAKE
write_conf yes "allow_hosts = slow.test:7 private"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
printf 'CONNECT slow.test:7 HTTP/1.1\r\nHost: slow.test:7\r\n\r\nhi\n' |
	in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/raw.py" 127.0.0.1 3128 --timeout 8 \
	>"$WORLD_DIR/slow.out" 2>&1 &
slow=$!
i=0
while ! grep -q "slow.test" "$WORLD_DIR/dnsfake.log" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.02
	i=$((i + 1))
done
write_conf yes "allow_hosts = slow.test:7 private" "deny_hosts = $WORLD_UP4"
expect_eq 0 "$(reload; echo $?)" "reload adding deny_hosts = $WORLD_UP4 during the lookup"
wait "$slow"
expect_match '^HTTP/1\.1 403 ' "$(head -1 "$WORLD_DIR/slow.out")" \
	"the tunnel decided before the reload is refused once connected, not opened"
expect_audit "... and logged as revoked, with the address rule" event=revoke \
	host=slow.test port=7 reason=denied_by_rule address="$WORLD_UP4"
expect_no_match '^hi$' "$(cat "$WORLD_DIR/slow.out")" "... and no byte went through it"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
