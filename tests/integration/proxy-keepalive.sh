#!/bin/sh
# proxy-keepalive: each request on a keep-alive connection starts from
# nothing of the one before it.  After an allowed request, a second head
# refused before it is parsed (too large: 431; too slow: 408) is audited
# and answered with no method, path or host of the first.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "header_timeout = 1s" "max_header_bytes = 1024" \
	"[defaults]" "allow_hosts = allowed.test private")
proxy_start "$conf" || die "no proxy"

# An allowed request, then a head larger than max_header_bytes that never
# ends.
{
	printf 'GET http://allowed.test/first-secret HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
	printf 'GET http://allowed.test/next HTTP/1.1\r\nHost: allowed.test\r\nX-Pad: %02000d\r\n' 0
} >"$WORLD_DIR/big.req"
out=$(raw 127.0.0.1 3128 --timeout 5 <"$WORLD_DIR/big.req" | tr -d '\r')
expect_eq "200 431" "$(printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')" \
	"an allowed request, then a head too large on the same connection: 200, 431"
expect_upstream "the first request reached upstream" target=/first-secret
expect_audit "the 431 is audited with no method" event=decision decision=deny reason=bad_request \
	method=null
expect_eq 0 "$(audit_count event=decision decision=deny reason=bad_request path~.)" \
	"the 431's line has no path of the first request"
expect_eq 0 "$(audit_count event=decision decision=deny reason=bad_request host~.)" \
	"the 431's line has no host of the first request"
expect_no_match "first-secret" "$(printf '%s\n' "$out" | sed -n '/^HTTP\/1\.1 431/,$p')" \
	"the 431's answer does not name the first request's path"

# An allowed request, then a head that stops half way: 408 after
# header_timeout.
{
	printf 'GET http://allowed.test/second-secret HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
	printf 'GET http://allowed.test/next HTTP/1.1\r\nHost: allo'
} >"$WORLD_DIR/slow.req"
out=$(raw 127.0.0.1 3128 --timeout 5 <"$WORLD_DIR/slow.req" | tr -d '\r')
expect_eq "200 408" "$(printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')" \
	"an allowed request, then a head that stops: 200, 408"
expect_audit "the 408 is audited with no method" event=decision decision=deny reason=timeout \
	method=null
expect_eq 0 "$(audit_count event=decision decision=deny reason=timeout path~.)" \
	"the 408's line has no path of the first request"
expect_eq 0 "$(audit_count event=decision decision=deny reason=timeout host~.)" \
	"the 408's line has no host of the first request"
expect_no_match "second-secret" "$(printf '%s\n' "$out" | sed -n '/^HTTP\/1\.1 408/,$p')" \
	"the 408's answer does not name the first request's path"

proxy_alive && ok "the proxy still answers" || fail "the proxy does not answer"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
