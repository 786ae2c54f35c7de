#!/bin/sh
# proxy-mapped: an IPv6 spelling of an IPv4 address is judged as that
# address by the address rules and the own-listener check.  A
# never-reachable 17th answer is proved by test-dns:
# here it would need 16 reachable, so public, answers, and the world uses
# none.
WORLD_DNS_EXTRA="mdeny.test=::ffff:10.200.1.3 mself.test=::ffff:127.0.0.1"
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" \
	"allow_hosts = mdeny.test private" \
	"allow_hosts = priv.test private" \
	"allow_hosts = mself.test:3129 private" \
	"allow_hosts = loop.test:3129 private" \
	"deny_hosts = 10.200.1.3" \
	"[session other]" \
	"listen = tcp:127.0.0.1:3129" \
	"allow_hosts = allowed.test")
proxy_start "$conf" || die "no proxy"

connect() {
	printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" | raw 127.0.0.1 3128 --timeout 3
}

# The IPv4 deny rule stands alone (the rule says private): the plain
# address and its mapped form are both refused by it.
out=$(connect priv.test:443)
expect_eq denied_by_rule "$(reason_of "$out")" "priv.test (10.200.1.3): denied_by_rule"
out=$(connect mdeny.test:443)
expect_eq 403 "$(status_of "$out")" "mdeny.test (::ffff:10.200.1.3) is refused: 403"
expect_eq denied_by_rule "$(reason_of "$out")" "... by deny_hosts = 10.200.1.3"
expect_audit "the mapped refusal is logged" host=mdeny.test reason=denied_by_rule

# Another session's TCP listener, under its mapped spelling.
out=$(connect loop.test:3129)
expect_match "own listener" "$out" "loop.test:3129 (127.0.0.1) is the proxy's own listener"
out=$(connect mself.test:3129)
expect_eq 403 "$(status_of "$out")" "mself.test:3129 (::ffff:127.0.0.1) is refused: 403"
expect_match "own listener" "$out" "... as the proxy's own listener"

expect_eq 0 "$(upstream_count)" "nothing reached any upstream"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
