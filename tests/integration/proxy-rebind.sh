#!/bin/sh
# proxy-rebind: names that resolve to never-reachable addresses are refused
# (loopback, cloud metadata, private, IPv4-mapped IPv6), unless the rule
# says "private"; the proxy connects only to the address it vetted.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" \
	"allow_hosts = loop.test, meta.test, priv.test, mapped.test, allowed.test" \
	"allow_hosts = priv.test:8080 private" \
	"allow_hosts = rebind.test private")
proxy_start "$conf" || die "no proxy"

connect() {
	printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" | raw 127.0.0.1 3128 --timeout 3
}
for h in loop.test meta.test priv.test mapped.test allowed.test; do
	out=$(connect "$h:443")
	expect_eq 403 "$(status_of "$out")" "$h resolves to a never-reachable address: 403"
	expect_eq private_address "$(reason_of "$out")" "$h: reason private_address"
done
out=$(connect meta.test:443)
expect_match "169\.254\.169\.254" "$out" "the body names the address"
expect_match "private" "$out" "and the flag that would allow it"
expect_audit "the refusal is logged with the address" host=meta.test reason=private_address address=169.254.169.254
expect_eq 0 "$(upstream_count)" "nothing reached any upstream"

out=$(curl_px -x http://127.0.0.1:3128 http://priv.test:8080/p)
expect_match "^GET /p HTTP/1.1" "$out" "with the private flag, priv.test:8080 is reached"

# A name rebound between lookups: the proxy connects to what it vetted.
world_dns_set rebind.test 10.200.1.2
out=$(curl_px -x http://127.0.0.1:3128 http://rebind.test/one)
expect_match "^GET /one HTTP/1.1" "$out" "rebind.test reached while it points at the upstream"
world_dns_set rebind.test 10.200.1.4
code=$(curl_status -x http://127.0.0.1:3128 http://rebind.test/two)
expect_eq 502 "$code" "after the rebind (TTL 0) the new address is used and fails: 502"
expect_audit "connect failure logged" host=rebind.test reason=connect_failure
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
