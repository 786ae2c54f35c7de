#!/bin/sh
# proxy-sni-hold: the SNI check under attack.  A
# ClientHello for another name in a record whose version is not 3.x
# (16 02 01: Go's crypto/tls accepts it) is judged as TLS and cut, never
# passed as "not TLS"; a mismatching ClientHello pipelined with the CONNECT
# gets a 403 with X-Postern-Reason: sni_mismatch; a ClientHello dripped a
# byte a second is cut at one deadline, header_timeout after the 200.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

# echo_closes: how many echo connections upstream has seen closed.
echo_closes() {
	upstream_events event=close kind=echo | grep -c . || :
}
wait_echo_closes() {
	local i
	i=0
	while [ "$(echo_closes)" -lt "$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

conf=$(proxy_conf "header_timeout = 2s" "[defaults]" \
	"allow_hosts = allowed.test private, other.test private" \
	"allow_hosts = allowed.test:7 private")
proxy_start "$conf" || die "no proxy"

# 1. Record version 02 01.  Port 7 is the world's echo server, a raw
# listener: it logs how many bytes reached it.
out=$(tls allowed.test:7 other.test --record-version 0201)
expect_match "^CLOSED" "$out" "16 02 01 ClientHello for other.test through CONNECT allowed.test:7 is cut"
wait_echo_closes 1
expect_eq 1 "$(echo_closes)" "the raw listener saw the tunnel close"
expect_eq 0 "$(upstream_events event=close kind=echo bytes_in!=0 | grep -c . || :)" \
	"no byte of the 16 02 01 ClientHello reached the raw listener"
expect_audit "the cut is audited as sni_mismatch" reason=sni_mismatch host=allowed.test port=7 \
	"detail~record version"
out=$(tls allowed.test:443 other.test --record-version 0000)
expect_match "^CLOSED" "$out" "16 00 00 ClientHello for other.test through CONNECT allowed.test:443 is cut"
expect_eq 0 "$(upstream_events event=tls "error~(WRONG_VERSION|wrong version)" | grep -c . || :)" \
	"the 443 upstream never read a record of a bad version"
expect_audit "the 443 cut is audited" reason=sni_mismatch host=allowed.test port=443 \
	"detail~record version"
out=$(tls allowed.test:443 allowed.test --path /v1)
expect_match "^sni=allowed\.test$" "$out" "a normal ClientHello still passes"

# 3. A pipelined mismatch gets an answer.
out=$(tls allowed.test:443 other.test --pipeline --path /p1)
expect_match "^CLOSED: CONNECT answered HTTP/1.1 403" "$out" "a pipelined mismatching ClientHello gets 403"
expect_match "^reason=sni_mismatch$" "$out" "with X-Postern-Reason: sni_mismatch"
expect_audit "the pipelined cut is audited" reason=sni_mismatch host=allowed.test sni=other.test
expect_eq 0 "$(upstream_events event=tls sni=other.test | grep -c . || :)" \
	"the pipelined ClientHello never reached upstream"
out=$(tls allowed.test:443 allowed.test --pipeline --path /p2)
expect_match "^sni=allowed\.test$" "$out" "a pipelined matching ClientHello passes"
expect_eq 1 "$(upstream_count target=/p2)" "and its request reached upstream"

# 2. One deadline, header_timeout (2 s) after the 200: a ClientHello
# dripped a byte a second is cut then, not re-armed by each byte.  The
# client gives up after 6 s (3x the deadline); without a deadline it would
# have been open all that time (the hello needs minutes at that pace).
out=$(tls allowed.test:443 allowed.test --drip 100 --drip-for 6)
expect_match "^CLOSED after" "$out" "a dripped ClientHello is cut before 3x header_timeout"
secs=$(printf '%s\n' "$out" | sed -n 's/^CLOSED after \([0-9]*\)\..*/\1/p')
[ -n "$secs" ] && [ "$secs" -ge 1 ] && ok "not cut before the deadline ($out)" ||
	fail "cut too early or not at all: $out"
expect_audit "the cut is logged as sni_timeout" event=close why=sni_timeout
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
