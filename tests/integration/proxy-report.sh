#!/bin/sh
# proxy-report: mode = report (issue 17).  In a session in report mode what
# the allowlist would refuse (another port, another path, another method)
# is reached and audited "decision":"allow","would":"deny" with the reason
# it would have been refused for; what stays enforced still refuses: a deny
# rule, an unlisted host whose address is in a never-reachable range, an
# SNI that is not the CONNECT host, a malformed request.  An enforcing
# session of the same file refuses as before.  --check and /status say
# which session is not enforcing.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
{ admin_proxy_section; cat <<EOF; } >"$conf"
[defaults]
allow_hosts = allowed.test:8443 private
allow_hosts = http://other.test/api/ private
allow_hosts = api.example.test:80 methods=GET private
deny_hosts = deny.test
[session rep]
listen = tcp:127.0.0.1:3129
mode = report
EOF

check=$("$POSTERN_PROXY" --check -c "$conf" 2>&1)
expect_match "postern.ini:[0-9]*: session rep is in mode = report: NOT ENFORCING" "$check" \
	"--check warns that session rep is not enforcing"
expect_no_match "session default is in mode = report" "$check" "and not about the enforcing default session"
printf '[proxy]\nlisten = tcp:127.0.0.1:3999\n[defaults]\nmode = ask\n' >"$WORLD_DIR/ask.ini"
out=$("$POSTERN_PROXY" --check -c "$WORLD_DIR/ask.ini" 2>&1)
expect_eq 2 $? "mode = ask is refused"
expect_match "ask.ini:4: mode = ask is not implemented yet" "$out" "with FILE:LINE and why"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

R="-x http://127.0.0.1:3129"
E="-x http://127.0.0.1:3128"

# ---- report mode: the allowlist is relaxed, and each relaxation audited.
expect_eq 200 "$(curl_status $R https://allowed.test/)" "report: another port of a listed host is reached"
expect_audit "audited allow, would deny, port_not_allowed" session=rep host=allowed.test port=443 \
	decision=allow would=deny reason=port_not_allowed
expect_eq 200 "$(curl_status $R http://other.test/elsewhere)" "report: another path is reached"
expect_upstream "the request reached upstream" target=/elsewhere
expect_audit "audited allow, would deny, path_not_allowed" session=rep host=other.test path=/elsewhere \
	decision=allow would=deny reason=path_not_allowed
expect_eq 200 "$(curl_status $R -X POST -d x http://api.example.test/post)" "report: another method is reached"
expect_audit "audited allow, would deny, method_not_allowed" session=rep host=api.example.test \
	decision=allow would=deny reason=method_not_allowed

# ---- what stays enforced in report mode.
expect_eq 403 "$(curl_status $R https://deny.test/)" "report: a deny rule still refuses"
expect_audit "audited denied_by_rule" session=rep host=deny.test decision=deny reason=denied_by_rule
expect_eq 403 "$(curl_status $R https://priv.test/)" \
	"report: an unlisted host in a never-reachable range is still refused"
expect_audit "audited private_address" session=rep host=priv.test decision=deny reason=private_address
expect_eq 403 "$(curl_status $R http://meta.test/)" "report: the metadata address is still refused"
expect_eq 403 "$(curl_status $R http://127.0.0.1:3128/)" "report: the proxy's own listener is still refused"
out=$(in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/tlsclient.py" 127.0.0.1 3129 \
	allowed.test:443 other.test --cafile "$WORLD_CA" --path /sni)
expect_match "^CLOSED" "$out" "report: an SNI other than the CONNECT host is still cut"
expect_eq 0 "$(upstream_count target=/sni)" "nothing of it reached upstream"
expect_audit "audited sni_mismatch" session=rep host=allowed.test reason=sni_mismatch
out=$(printf 'GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' |
	raw 127.0.0.1 3129 --timeout 3)
expect_eq 400 "$(status_of "$out")" "report: the strict parser still refuses a smuggling head"
expect_no_audit "no other session's decision says would" session=default would=deny

# ---- the same requests in the enforcing session are refused as before.
expect_eq 403 "$(curl_status $E https://allowed.test/)" "enforce: another port is refused"
expect_audit "audited deny port_not_allowed" session=default host=allowed.test decision=deny \
	reason=port_not_allowed
expect_eq 403 "$(curl_status $E http://other.test/elsewhere2)" "enforce: another path is refused"
expect_eq 0 "$(upstream_count target=/elsewhere2)" "and does not reach upstream"
expect_no_audit "enforce: no would in the default session" session=default would=deny

# ---- /status says which sessions are not enforcing.
admin_get /status >"$WORLD_DIR/status.json" || fail "GET /status"
st() {
	"$WORLD_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2])))' \
		"$WORLD_DIR/status.json" "$1"
}
expect_eq '[["default", "enforce", true], ["rep", "report", false]]' \
	"$(st '[[x["name"], x["mode"], x["enforcing"]] for x in s["sessions"]]')" \
	"status: each session's mode, and whether it enforces"
text=$(admin_curl -H 'Accept: text/plain' http://postern/status)
expect_match "mode        report \(NOT ENFORCING" "$text" "status text: report mode said loudly"

proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
