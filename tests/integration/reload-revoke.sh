#!/bin/sh
# reload-revoke: by default a reload that no longer allows a tunnel's host
# leaves the established tunnel alone; with revoke = yes the reload closes
# it and logs a "revoke" line, while a tunnel the new rules still allow
# stays; a plain-HTTP request in flight is answered either way.  The next request on a keep-alive connection is judged by the new
# rules either way.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
# write_conf REVOKE ALLOW...
write_conf() {
	local r
	r=$1
	shift
	{
		admin_proxy_section "revoke = $r"
		echo "[defaults]"
		for h in "$@"; do echo "allow_hosts = $h private"; done
	} >"$conf"
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
# finish NAME: stop the tunnel's checks; returns its exit status.
finish() {
	touch "$WORLD_DIR/$1.stop"
	eval "wait \$pid_$1"
}

# ---- revoke = no (the default behaviour): the tunnel stays
write_conf no allowed.test:7 other.test:7 "other.test:80"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
hold t1 other.test:7
# A keep-alive plain-HTTP connection: one request before the reload, one
# after; the second is judged by the new rules.
in_px "$WORLD_PYTHON" -c '
import socket, sys, time
def req(s):
    s.sendall(b"GET http://other.test/ka HTTP/1.1\r\nHost: other.test\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d: return "closed"
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    n = 0
    for ln in head.split(b"\r\n")[1:]:
        k, _, v = ln.partition(b":")
        if k.strip().lower() == b"content-length": n = int(v)
    while len(rest) < n:
        rest += s.recv(65536)
    return head.split(b" ")[1].decode()
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
print(req(s), flush=True)
open(sys.argv[1], "w").close()
while not __import__("os").path.exists(sys.argv[2]): time.sleep(0.05)
print(req(s), flush=True)
' "$WORLD_DIR/ka.first" "$WORLD_DIR/ka.go" >"$WORLD_DIR/ka.out" 2>&1 &
ka=$!
i=0
while [ ! -e "$WORLD_DIR/ka.first" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

# A plain-HTTP request in flight (the upstream answers after 2 s).
curl_status -x http://127.0.0.1:3128 http://other.test/delay/2 >"$WORLD_DIR/slow1" &
slow1=$!
expect_audit "the slow request was decided" host=other.test port=80 path=/delay/2 decision=allow
write_conf no allowed.test:7
expect_eq 0 "$(ctl reload -c "$conf" >/dev/null; echo $?)" "reload without other.test (revoke = no)"
wait "$slow1"
expect_eq 200 "$(cat "$WORLD_DIR/slow1")" "revoke = no: the request in flight was answered"
touch "$WORLD_DIR/ka.go"
wait "$ka"
expect_eq "200 403" "$(tr '\n' ' ' <"$WORLD_DIR/ka.out" | sed 's/ $//')" \
	"keep-alive: 200 before the reload, 403 for the next request after it"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://other.test:7/)" "a new tunnel to other.test is refused"
finish t1
expect_eq 0 $? "revoke = no: the established tunnel to other.test stayed up"
expect_eq 0 "$(audit_count event=revoke)" "revoke = no: nothing revoked"
proxy_stop

# ---- revoke = yes: the refused tunnel is closed and logged, the other stays
write_conf yes allowed.test:7 other.test:7 other.test:80
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
hold t2 other.test:7
hold t3 allowed.test:7
# Another path than the first run's: the audit log holds both runs, and
# a check matching the first run's line would let the reload overtake this
# request before the proxy has even read it (a 403, once, under load).
curl_status -x http://127.0.0.1:3128 http://other.test/delay/2.0 >"$WORLD_DIR/slow2" &
slow2=$!
expect_audit "the slow request was decided" host=other.test port=80 path=/delay/2.0 decision=allow
write_conf yes allowed.test:7
expect_eq 0 "$(ctl reload -c "$conf" >/dev/null; echo $?)" "reload without other.test (revoke = yes)"
expect_audit "the revoked tunnel is logged" event=revoke host=other.test port=7 reason=host_not_allowed
finish t2
expect_eq 1 $? "revoke = yes: the tunnel to other.test was closed"
finish t3
expect_eq 0 $? "revoke = yes: the tunnel to allowed.test stayed up"
expect_eq 0 "$(audit_count event=revoke host=allowed.test)" "and was not revoked"
wait "$slow2"
expect_eq 200 "$(cat "$WORLD_DIR/slow2")" "revoke = yes: a plain-HTTP request in flight is still answered"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
