#!/bin/sh
# proxy-faults: upstream faults and DNS faults each get the right status
# and reason, and the proxy keeps serving: an upstream that accepts and
# never answers (504 timeout after idle_timeout), one that closes without
# answering (502), one that resets mid-transfer (the client sees the cut,
# not a truncated success), a name that does not exist (502 dns_failure).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "idle_timeout = 2s" "[defaults]" \
	"allow_hosts = allowed.test private, nxdomain.test, v6only.test private")
proxy_start "$conf" || die "no proxy"

out=$(printf 'GET http://allowed.test/delay/30 HTTP/1.1\r\nHost: allowed.test\r\n\r\n' | raw 127.0.0.1 3128 --timeout 8)
expect_eq "504 timeout" "$(status_of "$out") $(reason_of "$out")" "an upstream that never answers: 504 timeout"
out=$(printf 'GET http://nxdomain.test/ HTTP/1.1\r\nHost: nxdomain.test\r\n\r\n' | raw 127.0.0.1 3128 --timeout 8)
expect_eq "502 dns_failure" "$(status_of "$out") $(reason_of "$out")" "a name that does not exist: 502 dns_failure"
expect_match "nxdomain\.test could not be resolved" "$out" "the body names the host"
out=$(curl_px -x http://127.0.0.1:3128 http://v6only.test/v6)
expect_match "^GET /v6 HTTP/1.1" "$out" "an IPv6-only host is reached over IPv6"

# Upstream resets in the middle of a large body: the client must not get a
# complete-looking answer.
# The client reads at 50 MB/s, so the 300 MB take 6 s and the kill below
# always lands mid-transfer (unthrottled, loopback may finish in 0.5 s and
# the check could not fail); --max-time stays far above those 6 s, so a
# proxy that hid the cut would show as a success, not as a timeout.
in_px curl -sS --limit-rate 50M --max-time 30 -o "$WORLD_DIR/cut.out" -x http://127.0.0.1:3128 http://allowed.test/bytes/300000000 2>/dev/null &
cp=$!
sleep 0.5
# Only this world's servers: pkill would match every world on the machine
# (network namespaces do not hide processes), and cut the upstreams of
# scenarios running beside this one.
kill "$WORLD_SERVERS_PID"
wait "$cp"
rc=$?
expect_ne 0 "$rc" "a transfer cut by the upstream is an error for the client (curl exit $rc)"
size=$(stat -c %s "$WORLD_DIR/cut.out" 2>/dev/null || echo 0)
[ "$size" -lt 300000000 ] && ok "and the body is short ($size bytes), never padded" || fail "got $size bytes"
out=$(printf 'GET http://allowed.test/gone HTTP/1.1\r\nHost: allowed.test\r\n\r\n' | raw 127.0.0.1 3128 --timeout 5)
expect_eq "502 connect_failure" "$(status_of "$out") $(reason_of "$out")" "with the upstream gone: 502 connect_failure"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
