#!/bin/sh
# proxy-rules: deny beats allow; wildcard and apex semantics; ports; the
# reason codes of each refusal; nothing reaches upstream when refused.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" \
	"allow_hosts = *.wild.test private, .example.test private" \
	"allow_hosts = allowed.test:443 private, allowed.test:8000-8099 private" \
	"allow_hosts = deny.test private" \
	"deny_hosts = DENY.test." \
	"deny_hosts = b.c.wild.test")
proxy_start "$conf" || die "no proxy"

# connect_reason HOST:PORT -> "STATUS REASON"
connect_reason() {
	local out
	out=$(printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" | raw 127.0.0.1 3128 --timeout 3)
	echo "$(status_of "$out") $(reason_of "$out")"
}

expect_eq "200 " "$(connect_reason a.wild.test:443)" "*.wild.test allows a name below it"
expect_eq "403 host_not_allowed" "$(connect_reason wild.test:443)" "*.wild.test does not allow wild.test itself"
expect_eq "403 denied_by_rule" "$(connect_reason b.c.wild.test:443)" "a deny rule beats the wildcard allow"
expect_eq "403 host_not_allowed" "$(connect_reason evilwild.test:443)" "no look-alike: evilwild.test"
expect_eq "403 host_not_allowed" "$(connect_reason a.wild.test.evil.test:443)" "no suffix trick: a.wild.test.evil.test"
expect_eq "200 " "$(connect_reason api.example.test:443)" ".example.test allows names below it"
expect_eq "403 denied_by_rule" "$(connect_reason deny.test:443)" "deny beats allow (case and trailing dot in the rule)"
expect_eq "403 denied_by_rule" "$(connect_reason DeNy.TeSt.:443)" "deny beats allow (case and trailing dot in the request)"
expect_eq "403 denied_by_rule" "$(connect_reason deny.test:8080)" "a deny rule without a port denies every port"
expect_eq "200 " "$(connect_reason allowed.test:443)" "port 443 allowed"
expect_eq "403 port_not_allowed" "$(connect_reason allowed.test:444)" "port 444 refused with port_not_allowed"
expect_eq "200 " "$(connect_reason allowed.test:8080)" "port in the range 8000-8099"
expect_eq "403 port_not_allowed" "$(connect_reason allowed.test:8100)" "port past the range"
expect_eq "403 host_not_allowed" "$(connect_reason other.test:443)" "an unlisted host"
expect_eq 0 "$(upstream_count sni=deny.test)" "nothing of the denied hosts reached upstream"
expect_eq 0 "$(dns_query_count deny.test)" "no DNS lookup for a denied host"
expect_audit "the deny names the deciding rule" host=deny.test reason=denied_by_rule 'rule=DENY.test.'
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
