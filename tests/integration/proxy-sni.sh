#!/bin/sh
# proxy-sni: the TLS server_name must be the CONNECT host (sni = match): a
# mismatch is cut before any byte reaches upstream; a ClientHello split over
# many records and segments still works; no SNI passes under match; strict
# refuses a non-TLS first flight and a hello without SNI.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test private, other.test private" \
	"allow_hosts = allowed.test:7 private")
proxy_start "$conf" || die "no proxy"

out=$(tls allowed.test:443 allowed.test --path /a)
expect_match "^sni=allowed\.test$" "$out" "matching SNI: the handshake and request go through"
out=$(tls allowed.test:443 other.test --path /b)
expect_match "^CLOSED" "$out" "SNI other.test inside a tunnel to allowed.test is cut"
expect_eq 0 "$(upstream_count target=/b)" "no request reached upstream"
expect_eq 0 "$(upstream_events | grep -c '"sni": "other.test"')" "the refused ClientHello never reached upstream"
expect_audit "the cut is logged as sni_mismatch" reason=sni_mismatch host=allowed.test sni=other.test
out=$(tls allowed.test:443 Allowed.Test. --path /c --nocheck)
expect_match "^sni=Allowed\.Test\.$" "$out" "SNI compared in normal form (case, trailing dot), forwarded as sent"
out=$(tls allowed.test:443 allowed.test --path /d --reframe 50 --segment 7)
expect_match "^sni=allowed\.test$" "$out" "a ClientHello re-framed into 50-byte records, sent 7 bytes at a time, passes"
out=$(tls allowed.test:443 other.test --path /e --reframe 50 --segment 7)
expect_match "^CLOSED" "$out" "a split ClientHello with the wrong SNI is cut"
out=$(tls allowed.test:443 allowed.test --path /f --nosni)
expect_match "^sni=-$" "$out" "a ClientHello without SNI passes under match"
out=$(printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\nhello echo\n' | raw 127.0.0.1 3128 --shut --timeout 3)
expect_match "^hello echo$" "$out" "a non-TLS first flight passes under match"
proxy_stop

conf=$(proxy_conf "sni = strict" "[defaults]" "allow_hosts = allowed.test private" \
	"allow_hosts = allowed.test:7 private")
proxy_start "$conf" || die "no proxy"
out=$(printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\nhello strict\n' | raw 127.0.0.1 3128 --shut --timeout 3)
expect_no_match "hello strict" "$out" "strict: a non-TLS first flight is cut"
expect_audit "strict cut logged" reason=sni_mismatch port=7
out=$(tls allowed.test:443 allowed.test --path /g --nosni)
expect_match "^CLOSED" "$out" "strict: a ClientHello without SNI is cut"
out=$(tls allowed.test:443 allowed.test --path /h)
expect_match "^sni=allowed\.test$" "$out" "strict: a matching SNI passes"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
