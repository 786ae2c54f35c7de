#!/bin/sh
# proxy-paths: a plain-HTTP path-prefix rule means what it says on every back
# end.  Under allow_hosts = HOST:PORT/hooks/, paths that
# Tomcat, Spring, IIS or a double-decoding server would resolve outside
# /hooks/ (";" path parameters, escapes of anything but unreserved
# characters: %00, overlong and full-width UTF-8, %25) and path-override
# headers (X-Original-URL...) are refused with 403 path_not_allowed and never
# reach the upstream.  A host rule without a path is not narrowed, and the
# query is not the path.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" \
	"allow_hosts = api.example.test:8080/hooks/ private" \
	"allow_hosts = other.test/hooks/ private, other.test private" \
	"allow_hosts = allowed.test private")
proxy_start "$conf" || die "no proxy"

# get TARGET [HEADER]: send one request for TARGET, print the answer.
get() {
	local host
	host=${1#http://}
	host=${host%%/*}
	if [ -n "${2:-}" ]; then
		printf 'GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\nConnection: close\r\n\r\n' "$1" "$host" "$2" | raw 127.0.0.1 3128
	else
		printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$1" "$host" | raw 127.0.0.1 3128
	fi
}

H=http://api.example.test:8080
for p in '/hooks/..;/admin' '/hooks/.;/..;/admin' '/hooks;/..;/admin' '/hooks/x;jsessionid=1' \
	'/hooks/%c0%ae%c0%ae/admin' '/hooks/%252e%252e/admin' '/hooks/..%00/admin' \
	'/hooks/%ef%bc%8e%ef%bc%8e/admin' '/hooks/%3b/admin' '/hooks/%2fadmin'; do
	out=$(get "$H$p")
	expect_eq "403 path_not_allowed" "$(status_of "$out") $(reason_of "$out")" "$p is refused under /hooks/"
	expect_no_match "To allow it" "$out" "and no prefix is suggested for $p"
done

for h in 'X-Original-URL: /admin' 'X-Rewrite-URL: /admin' 'x-original-uri: /admin' \
	'X-Forwarded-Prefix: /admin' 'X-Forwarded-Uri: /admin'; do
	out=$(get "$H/hooks/ov" "$h")
	expect_eq "403 path_not_allowed" "$(status_of "$out") $(reason_of "$out")" "'$h' is refused under a path rule"
done
expect_audit "the refusal is logged with the header's name" host=api.example.test path=/hooks/ov \
	decision=deny reason=path_not_allowed 'detail~X-Original-URL header'

# What a path rule admits still passes: unreserved escapes, and the query,
# which is not the path.
out=$(get "$H/hooks/%41b-%7e")
expect_eq 200 "$(status_of "$out")" "an escaped unreserved character is admitted"
expect_upstream "and forwarded as sent" target=/hooks/%41b-%7e
out=$(get "$H/hooks/q?a=..;/admin&b=%00%252e")
expect_eq 200 "$(status_of "$out")" "';' and escapes in the query are the back end's business"
expect_upstream "and forwarded" 'target=/hooks/q?a=..;/admin&b=%00%252e'

# A host rule without a path is not narrowed: not for paths, not for headers,
# not even when a path rule for the same host comes first.
out=$(get "http://allowed.test/a/..;/b%00")
expect_eq 200 "$(status_of "$out")" "a host rule without a path forwards ';' and escapes"
out=$(get "http://other.test/hooks/x" "X-Original-URL: /admin")
expect_eq 200 "$(status_of "$out")" "a host rule without a path admits X-Original-URL, whatever the rule order"
expect_upstream "which reaches other.test" host=other.test target=/hooks/x

expect_eq 0 "$(upstream_count 'target~^[^?]*(admin|jsessionid)' host~api.example.test)" "no traversal reached api.example.test"
expect_eq 0 "$(upstream_count target=/hooks/ov)" "no path-override request reached upstream"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
