#!/bin/sh
# proxy-slowloris: a client that trickles its request head is cut off after
# header_timeout with 408; one that sends nothing is closed; garbage of every
# kind gets a 400; and the proxy keeps serving throughout.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "header_timeout = 1s" "[defaults]" "allow_hosts = allowed.test private")
proxy_start "$conf" || die "no proxy"

start=$(date +%s)
out=$(printf 'GET http://allowed.test/slow HTTP/1.1\r\nHost: allowed.test\r\nX-1: a\r\nX-2: b\r\nX-3: c\r\nX-4: d\r\nX-5: e\r\nX-6: f\r\nX-7: g\r\nX-8: h\r\n\r\n' |
	raw 127.0.0.1 3128 --split 8 --delay 0.3 --timeout 6)
took=$(( $(date +%s) - start ))
expect_eq 408 "$(status_of "$out")" "a head trickled over more than header_timeout gets 408"
[ "$took" -le 5 ] && ok "cut off within a few seconds (${took}s)" || fail "took ${took}s"
expect_eq 0 "$(upstream_count target=/slow)" "nothing reached upstream"
expect_audit "logged as timeout" reason=timeout

start=$(date +%s)
out=$(printf '' | raw 127.0.0.1 3128 --timeout 6)
rc=$?
took=$(( $(date +%s) - start ))
expect_eq 0 "$rc" "a silent client is closed by the proxy (not by our timeout)"
[ "$took" -le 4 ] && ok "closed after about header_timeout (${took}s)" || fail "took ${took}s"

for g in "$(printf 'SSH-2.0-OpenSSH_9.2\r\n')" "$(printf '\026\003\001\000\100garbage-tls')" \
	"$(printf 'hello\r\n\r\n')" "$(head -c 300 /dev/urandom | tr -d '\n')$(printf '\r\n\r\n')"; do
	out=$(printf '%s' "$g" | raw 127.0.0.1 3128 --timeout 3)
	expect_eq 400 "$(status_of "$out")" "garbage gets 400 ($(printf '%s' "$g" | head -c 12 | od -An -c | tr -s ' ' | head -c 40))"
done
# Many bad clients at once.
i=0
pids=
while [ $i -lt 100 ]; do
	head -c 2000 /dev/urandom | raw 127.0.0.1 3128 --timeout 3 >/dev/null 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do wait "$p"; done
out=$(curl_px -x http://127.0.0.1:3128 http://allowed.test/after)
expect_match "^GET /after HTTP/1.1" "$out" "the proxy serves after a burst of garbage"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
