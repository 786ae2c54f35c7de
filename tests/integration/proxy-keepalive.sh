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

# after_allowed FILE STATUS REASON SECRET WHAT: FILE holds an allowed
# request, then WHAT on the same connection, refused with STATUS and
# REASON; nothing of the first request (its path holds SECRET) is in the
# refusal's line or answer.
after_allowed() {
	out=$(raw 127.0.0.1 3128 --timeout 5 <"$1" | tr -d '\r')
	expect_eq "200 $2" "$(printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')" \
		"an allowed request, then $5 on the same connection: 200, $2"
	expect_audit "the $2 is audited with no method" event=decision decision=deny reason="$3" \
		method=null
	expect_eq 0 "$(audit_count event=decision decision=deny reason="$3" path~.)" \
		"the $2's line has no path of the first request"
	expect_eq 0 "$(audit_count event=decision decision=deny reason="$3" host~.)" \
		"the $2's line has no host of the first request"
	expect_no_match "$4" "$(printf '%s\n' "$out" | sed -n "/^HTTP\/1\.1 $2/,\$p")" \
		"the $2's answer does not name the first request's path"
}

# An allowed request, then a head larger than max_header_bytes that never
# ends.
{
	printf 'GET http://allowed.test/first-secret HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
	printf 'GET http://allowed.test/next HTTP/1.1\r\nHost: allowed.test\r\nX-Pad: %02000d\r\n' 0
} >"$WORLD_DIR/big.req"
after_allowed "$WORLD_DIR/big.req" 431 bad_request first-secret "a head too large"
expect_upstream "the first request reached upstream" target=/first-secret

# An allowed request, then a head that stops half way: 408 after
# header_timeout.
{
	printf 'GET http://allowed.test/second-secret HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
	printf 'GET http://allowed.test/next HTTP/1.1\r\nHost: allo'
} >"$WORLD_DIR/slow.req"
after_allowed "$WORLD_DIR/slow.req" 408 timeout second-secret "a head that stops"

proxy_alive && ok "the proxy still answers" || fail "the proxy does not answer"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
