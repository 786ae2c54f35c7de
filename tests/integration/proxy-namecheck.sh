#!/bin/sh
# proxy-namecheck: the name check of a bridge's DNS stub, "GET
# /.well-known/postern/name?host=NAME" on the session's own socket: an
# allowed name gets the ports its rules allow for a CONNECT (443 for a rule
# without one, a short range whole, deny rules taken away), a name never
# allowed a 403 host_not_allowed or denied_by_rule with an audit line, and
# nothing is resolved (the world's DNS sees no query).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

S="$WORLD_DIR/sock"
mkdir -p "$S" "$WORLD_DIR/conf.d"
chmod 755 "$WORLD_DIR/conf.d"
conf="$WORLD_DIR/conf.d/postern.ini"
{
	admin_proxy_section
	cat <<-EOF2
		[session agent]
		listen = unix:$S/agent.sock
		allow_hosts = allowed.test, allowed.test:8080-8082, *.wild.test:*, plain.test:80/docs
		allow_hosts = https://org.test/my-org/ inspect
		deny_hosts = allowed.test:8081, bad.wild.test
	EOF2
} >"$conf"
ask() { # NAME -> body on stdout, status in $WORLD_DIR/status
	in_px curl -s -o - -w '%{http_code}' --unix-socket "$S/agent.sock" \
		"http://postern/.well-known/postern/name?host=$1" >"$WORLD_DIR/ans"
	tail -c 3 "$WORLD_DIR/ans" >"$WORLD_DIR/status"
	head -c -3 "$WORLD_DIR/ans"
}
proxy_start "$conf" || die "no proxy"
dns_log_reset

body=$(ask allowed.test)
expect_eq 200 "$(cat "$WORLD_DIR/status")" "an allowed name is answered 200"
expect_eq "postern-name 1" "$(echo "$body" | sed -n 1p)" "version line"
expect_eq "ports 443 8080 8082" "$(echo "$body" | sed -n 2p)" \
	"its ports: 443 (no port), the range, less the denied 8081"
expect_eq "ports 22 80 443" "$(ask Api.Wild.Test. | sed -n 2p)" \
	"a wide range: 22, 80 and 443 within it; the name normalised"

body=$(ask evil.test)
expect_eq 403 "$(cat "$WORLD_DIR/status")" "a name never allowed is refused"
expect_match "host_not_allowed" "$body" "with its reason"
expect_audit "the refusal is audited" event=decision decision=deny host=evil.test \
	reason=host_not_allowed method=DNS
ask bad.wild.test >/dev/null
expect_eq 403 "$(cat "$WORLD_DIR/status")" "a denied name is refused"
expect_audit "as denied_by_rule" event=decision host=bad.wild.test reason=denied_by_rule
ask plain.test >/dev/null
expect_eq 403 "$(cat "$WORLD_DIR/status")" "a path-only rule allows no CONNECT, so no name"
body=$(ask org.test)
expect_eq 200 "$(cat "$WORLD_DIR/status")" \
	"a path rule on a host whose TLS is terminated admits its tunnel, so its name"
expect_eq "ports 443" "$(echo "$body" | sed -n 2p)" "on the inspected port"
ask 'a..b' >/dev/null
expect_eq 400 "$(cat "$WORLD_DIR/status")" "a malformed name is a 400"
ask '10.0.0.1' >/dev/null
expect_eq 400 "$(cat "$WORLD_DIR/status")" "an address literal is no name"
expect_eq 0 "$(dns_query_count)" "nothing was resolved"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
