#!/bin/sh
# proxy-learn: postern-proxy ctl learn SESSION and GET /learn.
# A host proxy with a session in report mode serves some requests; `ctl
# learn rep` prints a ready [session rep] block of what its allowlist
# would refuse: one allow_hosts item per rule, with its count and first
# request, "private" (and why) where the address needed it, the item a
# path rule's refusal offers; the enforcing default session learns from
# its refusals.  The items, added to the file, make the same requests
# pass enforcing.  An unknown session is ctl exit 1 with a clear message,
# 404 on the socket.  /metrics counts report mode's would-deny apart from
# the decisions.  A path that holds what the config reader splits on (a
# ',', a blank, '*') is learned, and hinted, as one rule for its own host:
# fed back, the items allow no CONNECT to a host the client never asked
# for, and not the metadata address.
WORLD_DNS_EXTRA="foo.attacker.test=10.200.1.2"
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
{ admin_proxy_section; cat <<EOF; } >"$conf"
[defaults]
allow_hosts = http://other.test/api/ private
[session rep]
listen = tcp:127.0.0.1:3129
mode = report
EOF
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

R="-x http://127.0.0.1:3129"
E="-x http://127.0.0.1:3128"
curl_status $R http://api.example.test/simple/a >/dev/null
curl_status $R http://api.example.test/simple/b >/dev/null
curl_status $R https://allowed.test/ >/dev/null
expect_eq 200 "$(curl_status $R http://other.test/elsewhere)" "report: another path of a listed host is reached"
expect_eq 403 "$(curl_status $E http://other.test/x)" "enforce: it is refused in the default session"
out=$(curl_px $E -g --path-as-is -i 'http://other.test/x,*.attacker.test:1-65535')
diag "$out"
expect_match "^HTTP/1.1 403 " "$out" "enforce: a path holding a list is refused"
expect_match "allow_hosts = other\.test/x private\.?$" "$out" \
	"its hint is one rule for other.test, the path cut before the ','"
expect_no_match "allow_hosts = .*attacker" "$out" "the hint holds nothing of the rest"
expect_eq 403 "$(curl_status $E -g --path-as-is 'http://other.test/y,169.254.169.254:80')" \
	"enforce: and one naming an address"
expect_eq 403 "$(curl_status $E -g --path-as-is 'http://other.test/z%20*.attacker.test:22')" \
	"enforce: and one with an escaped blank"
# A name that does not resolve: report mode let it through, its lookup
# failed; the allowlist would have refused it, so it is learned all the same.
expect_eq 502 "$(curl_status $R https://gone.test/)" "report: a name that does not resolve gets 502"

out=$(ctl --admin "$ADMIN_SOCK" learn rep)
expect_eq 0 $? "ctl learn rep"
diag "$out"
expect_match "^\[session rep\]$" "$out" "the block is the session's section"
expect_match "^# 2 requests, first GET /simple/a$" "$out" "plain HTTP: one item, its count and first path"
expect_match "^allow_hosts = api.example.test private$" "$out" "the host, with private"
expect_match "^# answered 10.200.1.2, a private address: \"private\" lets it through$" "$out" \
	"the private address named, and why"
expect_match "^# 1 request, first CONNECT allowed.test:443$" "$out" "the CONNECT, counted"
expect_match "^allow_hosts = allowed.test private$" "$out" "its item"
expect_match "^allow_hosts = other.test/elsewhere private$" "$out" \
	"a path rule's refusal learns the prefix its hint offers, private as its rule"
expect_match "^# 1 request, first CONNECT gone.test:443$" "$out" "the name that did not resolve, counted"
expect_match "^allow_hosts = gone.test$" "$out" "... and learned, without private (it had no address)"
expect_match "^# as flags: --allow 'api.example.test private' --allow 'allowed.test private' --allow 'other.test/elsewhere private' --allow 'gone.test'$" \
	"$out" "the same as --allow flags"
expect_eq 4 "$(printf '%s\n' "$out" | grep -c '^allow_hosts = ')" "four items"

out=$(admin_curl -i "http://postern/learn?session=default")
expect_match "^HTTP/1.1 200 " "$out" "GET /learn?session=default"
expect_match "^\[defaults\]" "$out" "the default session's block is [defaults]"
expect_match "^allow_hosts = other.test/x private" "$out" "the enforcing session learns from its refusals"
expect_match "^allow_hosts = other.test/y private$" "$out" "a path naming an address: one rule for other.test"
expect_no_match "^allow_hosts = .*(attacker|169\.254)" "$out" "no learned item names another host"
expect_no_match "--allow '[^']*(attacker|169\.254)" "$out" "nor any --allow flag"

out=$(ctl --admin "$ADMIN_SOCK" learn nosuch 2>&1)
expect_eq 1 $? "ctl learn of an unknown session exits 1"
expect_match "has no session nosuch$" "$out" "and says there is no such session"
out=$(admin_curl -i "http://postern/learn?session=nosuch")
expect_match "^HTTP/1.1 404 " "$out" "GET /learn of an unknown session is 404"
out=$(admin_curl -i "http://postern/learn")
expect_match "^HTTP/1.1 400 " "$out" "GET /learn without a session is 400"
ctl --admin "$ADMIN_SOCK" learn 'a b' >/dev/null 2>&1
expect_eq 2 $? "ctl learn with a name no session can have is a usage error"

# The relaxed request is an allow in the decisions, and a would-deny
# apart; the unlisted hosts were refused at their private address.
expect_eq 1 "$(metrics_get postern_would_deny_total session=rep reason=path_not_allowed)" \
	"metrics: would-deny counted by session and reason"
expect_eq 1 "$(metrics_get postern_decisions_total session=rep reason=allowed)" \
	"metrics: and as the allow it was"
expect_eq 3 "$(metrics_get postern_decisions_total session=rep reason=private_address)" \
	"metrics: the private ones as refusals"
admin_get /metrics >"$WORLD_DIR/metrics.txt"
out=$("$WORLD_PYTHON" "$ADMIN_LIB/prom.py" check "$WORLD_DIR/metrics.txt")
expect_eq 0 $? "metrics: still valid Prometheus text ($out)"

# The items, added to the default session, make the same requests pass
# enforcing.
ctl --admin "$ADMIN_SOCK" learn rep | grep '^allow_hosts = ' >"$WORLD_DIR/items"
admin_get "/learn?session=default" | grep '^allow_hosts = ' >>"$WORLD_DIR/items"
diag "items: $(cat "$WORLD_DIR/items")"
{
	admin_proxy_section
	echo "[defaults]"
	echo "allow_hosts = http://other.test/api/ private"
	cat "$WORLD_DIR/items"
} >"$WORLD_DIR/learned.ini"
"$POSTERN_PROXY" --check -c "$WORLD_DIR/learned.ini" >/dev/null 2>&1
expect_eq 0 $? "--check accepts the file with the learned items"
proxy_stop
proxy_start "$WORLD_DIR/learned.ini" || die "no proxy with the learned items"
expect_eq 200 "$(curl_status $E http://api.example.test/simple/c)" "enforce: the learned host is reached"
expect_eq 200 "$(curl_status $E https://allowed.test/)" "enforce: the learned CONNECT too"
expect_eq 200 "$(curl_status $E http://other.test/elsewhere)" "enforce: and the learned path"
expect_eq 403 "$(curl_status $E -p https://foo.attacker.test:22/)" \
	"enforce: the learned items allow no CONNECT to a host never asked for"
expect_eq 403 "$(curl_status $E http://169.254.169.254/)" "enforce: nor the metadata address"
expect_eq 200 "$(curl_status $E http://other.test/x/a)" "enforce: the learned prefix /x is reached"
