#!/bin/sh
# proxy-report: mode = report.  In a session in report mode what
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

# An h2 upstream on allowed.test:8443 when nghttpd is there.
HAVE_H2=
if command -v nghttpd >/dev/null 2>&1 && curl -V | grep -q '^Features:.* HTTP2'; then
	HAVE_H2=1
	mkdir -p "$WORLD_DIR/docs"
	echo "h2 get" >"$WORLD_DIR/docs/get"
	ip netns exec "$WORLD_NS_UP" nghttpd -d "$WORLD_DIR/docs" \
		-a "$WORLD_UP4" 8443 "$WORLD_KEY" "$WORLD_CERT" </dev/null >"$WORLD_DIR/nghttpd.log" 2>&1 &
else
	diag "nghttpd or curl's HTTP/2 is missing: the HTTP/2 part is not tried"
fi
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"
conf="$WORLD_DIR/postern.ini"
{ admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"; cat <<EOF; } >"$conf"
[defaults]
allow_hosts = https://api.example.test/v1/ inspect private
allow_hosts = https://allowed.test:8443/v1/ inspect private
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
out=$("$POSTERN_PROXY" --explain https://unlisted.test/ --session rep -c "$conf" 2>&1)
expect_eq 0 $? "--explain: an unlisted host in session rep is allowed"
expect_match "^allow \(report mode; would deny host_not_allowed\)$" "$out" "and says it is report mode that allows it"
expect_match "to allow it when enforcing: add to \[session rep\]: allow_hosts = unlisted.test$" "$out" \
	"with the line that would allow it when enforcing"
out=$("$POSTERN_PROXY" --explain https://unlisted.test/ -c "$conf" 2>&1)
expect_match "^deny host_not_allowed" "$out" "--explain: the default session still denies it"
printf '[proxy]\nlisten = tcp:127.0.0.1:3999\n[defaults]\nmode = ask\n' >"$WORLD_DIR/ask.ini"
out=$("$POSTERN_PROXY" --check -c "$WORLD_DIR/ask.ini" 2>&1)
expect_eq 0 $? "mode = ask is taken"
expect_match "ask.ini:4: session default is in mode = ask: what its allowlist refuses is HELD" "$out" \
	"and said loudly, with FILE:LINE"

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

# A request inside a terminated tunnel is judged, and relaxed, on its own.
CA="$state/ca/rep.pem"
[ -s "$CA" ] || die "no CA for session rep in $CA"
tc() { in_px curl -sS --max-time 10 -x http://127.0.0.1:3129 --cacert "$CA" "$@"; }
expect_eq 200 "$(tc -o /dev/null -w '%{http_code}' https://api.example.test/v2/x)" \
	"report: a path outside the rule inside a terminated tunnel is reached"
expect_audit "its request line says allow, would deny, path_not_allowed" event=request session=rep \
	host=api.example.test path=/v2/x tls=terminated decision=allow would=deny reason=path_not_allowed
if [ -n "$HAVE_H2" ]; then
	in_up "$WORLD_PYTHON" -c '
import socket, sys, time
for i in range(100):
    try:
        socket.create_connection((sys.argv[1], 8443), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
' "$WORLD_UP4"
	out=$(tc --http2 https://allowed.test:8443/get)
	expect_eq "h2 get" "$out" "report: an HTTP/2 stream outside the rule's path is reached"
	expect_audit "its request line says allow, would deny, path_not_allowed" event=request session=rep \
		host=allowed.test port=8443 proto=h2 path=/get decision=allow would=deny reason=path_not_allowed
fi
out=$(tc -i -H "Host: other.test" https://api.example.test/v1/front)
expect_match "^HTTP/1.1 421 " "$out" "report: a fronted Host in a terminated tunnel is still 421"
expect_eq 0 "$(upstream_count target=/v1/front)" "and reaches no upstream"

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
