#!/bin/sh
# proxy-timeouts: an upstream that never answers the SYN is a 504 after
# connect_timeout; a refused connection is a 502; a DNS server that never
# answers is a 504 (dns_failure); Happy Eyeballs falls back from a v6 black
# hole to v4; an idle tunnel is closed after idle_timeout.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "connect_timeout = 1s" "idle_timeout = 2s" "[defaults]" \
	"allow_hosts = blackhole.test private, dead.test private, he.test private, allowed.test:7 private")
proxy_start "$conf" || die "no proxy"

connect() {
	printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" | raw 127.0.0.1 3128 --timeout 8
}
start=$(date +%s)
out=$(connect blackhole.test:443)
took=$(( $(date +%s) - start ))
expect_eq "504 timeout" "$(status_of "$out") $(reason_of "$out")" "a black-holed upstream: 504 timeout"
[ "$took" -le 3 ] && ok "after connect_timeout (${took}s)" || fail "took ${took}s"
out=$(connect dead.test:443)
expect_eq "502 connect_failure" "$(status_of "$out") $(reason_of "$out")" "a refused connection: 502 connect_failure"
expect_match "10\.200\.1\.4" "$out" "the body names the address"
start=$(date +%s)
out=$(curl_px -x http://127.0.0.1:3128 https://he.test/he)
took=$(( $(date +%s) - start ))
expect_match "^sni=he\.test$" "$out" "Happy Eyeballs: the v6 black hole is skipped, v4 answers"
[ "$took" -le 2 ] && ok "without waiting for the v6 timeout (${took}s)" || fail "took ${took}s"

# An idle tunnel is closed after idle_timeout (2 s); raw waits up to 8 s.
start=$(date +%s)
out=$(printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n' | raw 127.0.0.1 3128 --timeout 8)
rc=$?
took=$(( $(date +%s) - start ))
expect_eq 0 "$rc" "the proxy closed the idle tunnel itself"
[ "$took" -ge 2 ] && [ "$took" -le 5 ] && ok "after idle_timeout (${took}s)" || fail "took ${took}s"
expect_audit "idle close logged" event=close port=7 why=idle_timeout
proxy_stop

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test private")
sed -i "s/^dns_servers = .*/dns_servers = $WORLD_BLACKHOLE4/" "$conf"
proxy_start "$conf" || die "no proxy"
out=$(connect allowed.test:443)
expect_eq "504 dns_failure" "$(status_of "$out") $(reason_of "$out")" "a DNS server that never answers: 504 dns_failure"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
