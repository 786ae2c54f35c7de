#!/bin/sh
# proxy-connect: an allowed CONNECT is tunnelled end to end over TLS (curl
# verifies the upstream's certificate through the tunnel); a denied host
# gets 403 with the reason, no DNS query and nothing upstream.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

cat >"$WORLD_DIR/postern.ini" <<EOF
[proxy]
listen = tcp:127.0.0.1:3128
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test private
allow_hosts = dual.test private
EOF
proxy_start "$WORLD_DIR/postern.ini" || die "no proxy"

out=$(curl_px -x http://127.0.0.1:3128 https://allowed.test/x)
expect_match "^sni=allowed\.test$" "$out" "the tunnel reaches the upstream over TLS"
expect_match "^GET /x HTTP/1.1" "$out" "the request went through unchanged"
expect_audit "the allow is logged with the vetted address" event=decision method=CONNECT \
	host=allowed.test port=443 decision=allow reason=allowed address=10.200.1.2 \
	rule~^allowed.test generation=1 session=default
expect_audit "the close is logged with bytes both ways" event=close host=allowed.test \
	bytes_up~'^[1-9]' bytes_down~'^[1-9]'
expect_upstream "the upstream saw SNI allowed.test" kind=https sni=allowed.test target=/x

# Happy Eyeballs: dual.test has A and AAAA; either family must work.
out=$(curl_px -x http://127.0.0.1:3128 https://dual.test/)
expect_match "^sni=dual\.test$" "$out" "a dual-stack host is reached"

dns_log_reset
code=$(curl_status -x http://127.0.0.1:3128 https://deny.test/)
expect_eq 403 "$code" "an unlisted host is refused with 403"
hdrs=$(printf 'CONNECT deny.test:443 HTTP/1.1\r\nHost: deny.test:443\r\n\r\n' | raw 127.0.0.1 3128)
expect_match "^HTTP/1.1 403 Forbidden" "$hdrs" "the refusal is a 403"
expect_match "^X-Postern-Reason: host_not_allowed$" "$hdrs" "with the machine-readable reason"
expect_match "deny.test:443" "$hdrs" "the body names the host and port"
expect_match "allow_hosts = deny.test" "$hdrs" "the body says what would allow it"
expect_eq 0 "$(dns_query_count deny.test)" "no DNS query was made for a refused host"
expect_eq 0 "$(upstream_count sni=deny.test)" "nothing reached upstream"
expect_audit "the deny is logged" event=decision host=deny.test decision=deny reason=host_not_allowed

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
