#!/bin/sh
# proxy-literals: IP literals only when a rule names them; every
# non-canonical form, userinfo and bad port is a 400 before any lookup.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" \
	"allow_hosts = 10.200.1.2:443, [fd00:200:1::2]:443" \
	"allow_hosts = allowed.test private")
proxy_start "$conf" || die "no proxy"

connect() {
	printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" | raw 127.0.0.1 3128 --timeout 3
}
status_reason() { local o; o=$(connect "$1"); echo "$(status_of "$o") $(reason_of "$o")"; }

expect_eq "200 " "$(status_reason 10.200.1.2:443)" "an IPv4 literal named by a rule (its own range: no private flag needed)"
expect_eq "200 " "$(status_reason '[fd00:200:1::2]:443')" "an IPv6 literal named by a rule"
expect_eq "403 host_not_allowed" "$(status_reason 10.200.1.3:443)" "another literal is refused"
dns_log_reset
for t in 2130706433:443 0177.0.0.1:443 0x7f.0.0.1:443 0x7f.1:443 127.1:443 10.200.258:443 \
	'allowed.test@10.200.1.2:443' 'user:pw@allowed.test:443' allowed.test allowed.test:0 \
	allowed.test:65536 allowed.test:0443 allowed.test:+443 'allowed.test:443x' 'allowed%2etest:443' \
	'allowed..test:443' '[fe80::1%25eth0]:443' "$(printf 'b\303\274cher.test:443')"; do
	expect_eq "400 bad_request" "$(status_reason "$t")" "refused before any lookup: CONNECT $t"
done
expect_eq 0 "$(dns_query_count)" "none of them caused a DNS query"
expect_eq 0 "$(upstream_count)" "none reached upstream"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
