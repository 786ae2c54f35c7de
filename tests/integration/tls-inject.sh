#!/bin/sh
# tls-inject: TLS termination with credential injection.  A
# CONNECT to a host a secret of the session is bound to is terminated: the
# client trusts the session's CA (from [proxy] state_dir), the upstream is
# verified against upstream_ca_file, and each request inside is judged on
# its own: the real credential replaces the placeholder on the bound host
# only; a fronted Host is 421; a placeholder sent elsewhere (another
# terminated host, plain HTTP) is 403 secret_misdirected; path rules hold
# inside TLS; a bad upstream certificate is 502 upstream_tls_failed; a
# tunnel to a host no secret names stays opaque; the value is in no log.
# Only a request that carries the placeholder where the binding puts the
# value gets it (unless inject_when = always); TRACE and TRACK to a bound
# host are refused; Accept-Encoding goes up as identity, and Range,
# If-Range and Sec-WebSocket-Extensions not at all.  What the upstream
# received is read from its own log, not from the echo the client got.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

VALUE="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
TOKEN="ghp_$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_KEY="$VALUE" PX_TEST_TOK="$TOKEN"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

conf="$WORLD_DIR/postern.ini"
# write_conf [K-SECRETS]: the config; K-SECRETS is the session's secrets =.
write_conf() {
	{
		admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
		cat <<-EOF
			[hosts]
			badcert.test = $WORLD_UP4
			[defaults]
			allow_hosts = allowed.test private, other.test private, badcert.test private
			allow_hosts = api.example.test/v1/ private, wild.test private
			allow_hosts = a.wild.test private, dual.test private inspect
			secrets = ${1:-k, g, b, q, a}
			[secret k]
			from_env = PX_TEST_KEY
			inject = allowed.test header x-api-key
			[secret g]
			from_env = PX_TEST_TOK
			inject = api.example.test basic x-access-token
			[secret b]
			from_env = PX_TEST_KEY
			placeholder_env = PX_B
			inject = badcert.test header x-api-key
			[secret q]
			from_env = PX_TEST_KEY
			placeholder_env = PX_Q
			inject = wild.test query key
			[secret a]
			from_env = PX_TEST_KEY
			placeholder_env = PX_A
			inject_when = always
			inject = a.wild.test header x-api-key
		EOF
	} >"$conf.tmp"
	mv "$conf.tmp" "$conf"
}
write_conf
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

CA="$state/ca/default.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
cp "$CA" "$WORLD_DIR/ca-first.pem"
# The placeholders, as a bridge learns them: the session request.
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH_K=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_KEY //p')
PH_G=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_TOK //p')
PH_Q=$(printf '%s\n' "$sess" | sed -n 's/^env PX_Q //p')
[ -n "$PH_K" ] && [ -n "$PH_G" ] || die "no placeholders"
expect_ne "$VALUE" "$PH_K" "the placeholder is not the value"

tc() { curl_px -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
# up_line TARGET ERE: how many requests for TARGET the upstream logged
# with a head line that matches ERE (its own record: the echo the client
# gets may have the value masked).
up_line() { upstream_count "target=$1" "head~(?mi)^$2\r\$"; }
# up_has MESSAGE TARGET ERE: ok when the upstream logged one.
up_has() { expect_upstream "$1" "target=$2" "head~(?mi)^$3\r\$"; }
# re TEXT: TEXT as an ERE that matches it literally.
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; }
tstatus() { in_px curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }

# 1. The credential is injected; the placeholder does not reach upstream.
out=$(tc -H "x-api-key: $PH_K" https://allowed.test/inj?q=1)
up_has "upstream received the real credential" "/inj?q=1" "x-api-key: $VALUE"
expect_eq 0 "$(upstream_count "target=/inj?q=1" "head~$PH_K")" "and not the placeholder"
expect_no_match "^sni=-$" "$out" "upstream TLS carries SNI"
expect_match "^sni=allowed\.test$" "$out" "(upstream saw SNI allowed.test)"
expect_audit "the CONNECT is allowed and terminated" event=decision method=CONNECT host=allowed.test \
	decision=allow sni=allowed.test detail="TLS terminated"
expect_audit "the request inside has one line: decision, rule, status, path without query, secret" \
	event=request method=GET host=allowed.test path=/inj tls=terminated secret=k decision=allow \
	reason=allowed rule~. rule_at~:[0-9]+$ status=200 bytes_up~^[1-9] bytes_down~^[1-9]
expect_no_audit "and no second line for it (one line per request)" event=decision \
	path=/inj

# Over SOCKS5: the same terminated tunnel, the same injection.
out=$(curl_px --proxy socks5h://127.0.0.1:3128 --cacert "$CA" -H "x-api-key: $PH_K" https://allowed.test/socks)
up_has "SOCKS5: the tunnel is terminated and the credential injected" /socks "x-api-key: $VALUE"
expect_audit "SOCKS5: the CONNECT is allowed and terminated" event=decision "method=SOCKS5 CONNECT" \
	host=allowed.test decision=allow sni=allowed.test detail="TLS terminated"
expect_audit "SOCKS5: the request inside has its own line" event=request path=/socks status=200 secret=k

# Two requests on one connection: each one is injected.
out=$(tc -H "x-api-key: $PH_K" https://allowed.test/a https://allowed.test/b)
expect_eq "1 1" "$(up_line /a "x-api-key: $VALUE") $(up_line /b "x-api-key: $VALUE")" \
	"keep-alive: both requests get the credential"

# 2. Python requests (Debian's python3-requests), trusting the session CA
# through REQUESTS_CA_BUNDLE.
if "$WORLD_PYTHON" -c 'import requests' 2>/dev/null; then
	out=$(in_px env REQUESTS_CA_BUNDLE="$CA" HTTPS_PROXY=http://127.0.0.1:3128 PH="$PH_K" \
		"$WORLD_PYTHON" -c '
import os, requests
r = requests.get("https://allowed.test/py", headers={"x-api-key": os.environ["PH"]}, timeout=10)
print(r.status_code)
print(r.text)' 2>&1)
	expect_match "^200$" "$out" "python requests: 200"
	up_has "python requests: the credential is injected" /py "x-api-key: $VALUE"
else
	diag "python3-requests is not installed: the requests client is not tried"
fi

# Node's own TLS client over a CONNECT, trusting the session CA through
# NODE_EXTRA_CA_CERTS (Node 20 has no proxy support of its own in fetch).
if command -v node >/dev/null 2>&1; then
	out=$(in_px env NODE_EXTRA_CA_CERTS="$CA" PH="$PH_K" node -e '
const http = require("http"), tls = require("tls");
const req = http.request({ host: "127.0.0.1", port: 3128, method: "CONNECT", path: "allowed.test:443" });
req.on("connect", (res, sock) => {
  const t = tls.connect({ socket: sock, servername: "allowed.test" }, () => {
    t.write("GET /node HTTP/1.1\r\nHost: allowed.test\r\nx-api-key: " + process.env.PH +
      "\r\nConnection: close\r\n\r\n");
  });
  let got = ""; t.on("data", d => got += d); t.on("end", () => console.log(got));
  t.on("error", e => { console.log("error " + e.message); process.exit(1); });
});
req.end();' 2>&1)
	expect_match "^HTTP/1.1 200 " "$out" "node (NODE_EXTRA_CA_CERTS): 200"
	up_has "node: the credential is injected" /node "x-api-key: $VALUE"
else
	diag "node is not installed: the Node client is not tried"
fi

# Streaming: a long answer passes whole, and a WebSocket upgrade inside the
# terminated tunnel becomes a relay (the world echoes after its 101: the
# frame goes unmasked, so that its echo reads as a server's frame).
n=3000000
expect_eq "$(pattern_sha256 $n)" "$(tc https://allowed.test/bytes/$n | sha256sum | cut -d' ' -f1)" \
	"3 MB through the terminated tunnel arrive intact"
out=$(in_px env CA="$CA" "$WORLD_PYTHON" -c '
import os, socket, ssl
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
ctx = ssl.create_default_context(cafile=os.environ["CA"])
t = ctx.wrap_socket(s, server_hostname="allowed.test")
t.sendall(b"GET /upgrade HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\n"
          b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
          b"Sec-WebSocket-Extensions: permessage-deflate\r\n"
          b"Sec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += t.recv(4096)
head, rest = buf.split(b"\r\n\r\n", 1)
print(head.split(b"\r\n")[0].decode())
t.sendall(b"\x81\x11ws-bytes-through\n")
while b"ws-bytes-through\n" not in rest:
    d = t.recv(4096)
    if not d:
        break
    rest += d
print(rest[2:].decode(errors="replace"))
' 2>&1)
expect_match "^HTTP/1.1 101 " "$out" "a WebSocket upgrade inside the terminated tunnel: 101"
expect_match "^ws-bytes-through$" "$out" "and bytes are relayed both ways after it"

# 3. Basic auth on a path-narrowed host, and path rules inside TLS.
out=$(tc -u "x-access-token:$PH_G" https://api.example.test/v1/ok)
basic=$(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)
up_has "basic: upstream received Authorization: Basic" /v1/ok "Authorization: Basic $(re "$basic")"
expect_eq 403 "$(tstatus https://api.example.test/v2/x)" "a path outside the rule is refused inside TLS"
expect_audit "path_not_allowed inside TLS" path=/v2/x reason=path_not_allowed tls=terminated
expect_match "^40[03]$" "$(tstatus --path-as-is https://api.example.test/v1/%2e%2e/v2/x)" \
	"an encoded dot segment does not pass the path rule"
expect_eq 0 "$(upstream_count target~^/v2)" "no refused path reached upstream"

# A query binding: the client's parameter of that name (its placeholder)
# is replaced by the real one, the others kept.
out=$(tc "https://wild.test/q?key=$PH_Q&x=1")
expect_upstream "query: upstream received ?x=1&key=VALUE" "target=/q?x=1&key=$VALUE"
expect_audit "query: the audit path has no query" event=request host=wild.test path=/q secret=q

# 4. A fronted Host is 421.
out=$(tc -i -H "Host: other.test" https://allowed.test/front)
expect_match "^HTTP/1.1 421 " "$out" "a Host naming another host: 421"
expect_match "^X-Postern-Reason: misdirected_request$" "$out" "reason misdirected_request"
expect_audit "421 audited" reason=misdirected_request path=/front
expect_eq 0 "$(upstream_count target=/front)" "the fronted request reached no upstream"

# 5. A placeholder sent elsewhere: in another terminated tunnel, and plain HTTP.
out=$(tc -i -H "x-api-key: $PH_K" https://api.example.test/v1/steal)
expect_match "^HTTP/1.1 403 " "$out" "k's placeholder to api.example.test: 403"
expect_match "^X-Postern-Reason: secret_misdirected$" "$out" "reason secret_misdirected"
expect_audit "misdirected inside TLS audited" reason=secret_misdirected host=api.example.test
out=$(curl_px -i -x http://127.0.0.1:3128 "http://other.test/p?key=$PH_G")
expect_match "^X-Postern-Reason: secret_misdirected$" "$out" "plain HTTP: g's placeholder in the query: 403 secret_misdirected"
expect_audit "plain-HTTP misdirection audited, placeholder cut from the path" \
	reason=secret_misdirected host=other.test path="/p?key=[placeholder]"
expect_eq 0 "$(upstream_count target~steal)" "nothing misdirected reached upstream"
expect_eq 0 "$(upstream_count host=other.test)" "nothing misdirected reached other.test"

# 6. An upstream whose certificate is not valid for the name: 502.
out=$(tc -i https://badcert.test/x)
expect_match "^HTTP/1.1 502 " "$out" "bad upstream certificate: 502 (over the client's handshake)"
expect_match "^X-Postern-Reason: upstream_tls_failed$" "$out" "reason upstream_tls_failed"
expect_match "hostname mismatch" "$out" "the reason text says why"
expect_audit "upstream_tls_failed audited" reason=upstream_tls_failed host=badcert.test

# 7. A host no secret names: an opaque tunnel, the upstream's own certificate.
out=$(curl_px -x http://127.0.0.1:3128 -H "x-other: 1" https://other.test/opaque)
expect_match "^sni=other\.test$" "$out" "other.test is tunnelled with the world's certificate"
expect_no_audit "no request line for an opaque tunnel" event=request host=other.test

# 8. /metrics counts injections and misdirected attempts per secret.
expect_match "^[1-9]" "$(metrics_get postern_secret_injections_total session=default secret=k)" \
	"/metrics: injections of k"
expect_eq 1 "$(metrics_get postern_secret_misdirected_total session=default secret=k)" \
	"/metrics: one misdirected attempt with k's placeholder"

# 9. Only a request that carries the placeholder where the binding puts the
# value gets it; any other goes up as the client sent it.
tc https://allowed.test/noph >/dev/null
expect_upstream "without the placeholder the request goes up" target=/noph
expect_eq 0 "$(upstream_count target=/noph "head~$VALUE")" "without the placeholder: not the value"
expect_audit "its line" event=request path=/noph status=200
expect_no_audit "names no secret" event=request path=/noph secret=k
tc -H "x-api-key: mine" https://allowed.test/own >/dev/null
expect_eq 1 "$(up_line /own "x-api-key: mine")" "a key of the client's own goes up as sent"
expect_eq 0 "$(upstream_count target=/own "head~$VALUE")" "and the value does not"
tc -H "x-other: $PH_K" https://allowed.test/elsewhere >/dev/null
expect_eq 0 "$(upstream_count target=/elsewhere "head~$VALUE")" \
	"the placeholder in a header the binding does not set: no value"
tc -H "x-api-key: Key $PH_K" https://allowed.test/within >/dev/null
expect_eq 1 "$(up_line /within "x-api-key: $VALUE")" \
	"the placeholder anywhere in the bound header's value: the value replaces the header"
tc https://api.example.test/v1/none >/dev/null
expect_upstream "basic: a request without Authorization goes up" target=/v1/none
expect_eq 0 "$(upstream_count target=/v1/none "head~(?mi)^authorization:")" \
	"basic: and without the value"
wrong=$(printf 'x-access-token:wrong' | base64 -w0)
tc -u "x-access-token:wrong" https://api.example.test/v1/wrong >/dev/null
expect_eq 1 "$(up_line /v1/wrong "Authorization: Basic $(re "$wrong")")" \
	"basic: another password goes up as sent"
tc -u "someone:$PH_G" https://api.example.test/v1/user >/dev/null
expect_eq 1 "$(up_line /v1/user "Authorization: Basic $(re "$basic")")" \
	"basic: the placeholder as the password, any user: the binding's user and the value"
tc "https://wild.test/q2?x=1&key=mine" >/dev/null
expect_eq 1 "$(upstream_count "target=/q2?x=1&key=mine")" \
	"query: without the placeholder the target goes up as sent"
# inject_when = always: on every request, placeholder or not.
tc https://a.wild.test/always >/dev/null
expect_eq 1 "$(up_line /always "x-api-key: $VALUE")" "inject_when = always: the value without the placeholder"
expect_audit "and its line names the secret" event=request host=a.wild.test path=/always secret=a

# 10. TRACE and TRACK to a host a secret is bound to are refused: the
# upstream would echo the request, the value on it, back to the client.
for m in TRACE TRACK; do
	out=$(tc -i -X $m -H "x-api-key: $PH_K" https://allowed.test/$m)
	expect_match "^HTTP/1.1 403 " "$out" "$m to a host a secret is bound to: 403"
	expect_match "^X-Postern-Reason: method_not_allowed" "$out" "$m: reason method_not_allowed"
	expect_match "echoes the request back" "$out" "$m: the text says why"
	expect_audit "$m: audited" host=allowed.test path=/$m reason=method_not_allowed tls=terminated
done
out=$(tc -i -H "X-HTTP-Method-Override: trace" https://allowed.test/override)
expect_match "^HTTP/1.1 403 " "$out" "a method override that says TRACE: 403"
tc -i -X TRACE https://api.example.test/v1/trace >/dev/null
expect_audit "TRACE without a placeholder, to a bound host: refused too" path=/v1/trace \
	reason=method_not_allowed
expect_eq 0 "$(upstream_count "target~^/(TRACE|TRACK|override|v1/trace)")" "none reached the upstream"
out=$(tc -X TRACE https://dual.test/trace)
expect_upstream "TRACE to a host only inspected (no secret) passes" target=/trace method=TRACE

# 11. Every request to a host a secret is bound to goes up with
# Accept-Encoding: identity and without Range, If-Range and
# Sec-WebSocket-Extensions, so that an answer that reflects the value
# is neither compressed nor cut in pieces.
for p in /narrow /narrow-noph; do
	ph=
	[ $p = /narrow ] && ph="x-api-key: $PH_K"
	tc -H "Accept-Encoding: gzip, br" -H "accept-encoding: zstd" -H "Range: bytes=0-10" \
		-H 'If-Range: "x"' -H "Sec-WebSocket-Extensions: permessage-deflate" ${ph:+-H "$ph"} \
		https://allowed.test$p >/dev/null
	h=$(upstream_get head target=$p | tr -d '\r')
	expect_eq 1 "$(printf '%s\n' "$h" | grep -ci '^accept-encoding:')" "$p: one Accept-Encoding"
	expect_eq 1 "$(printf '%s\n' "$h" | grep -c '^Accept-Encoding: identity$')" "$p: identity"
	expect_eq 0 "$(printf '%s\n' "$h" | grep -Eci '^(range|if-range|sec-websocket-extensions):')" \
		"$p: no Range, If-Range or Sec-WebSocket-Extensions"
done
expect_eq 1 "$(up_line /narrow "x-api-key: $VALUE")" "(the narrowed request was injected)"
tc -H "Accept-Encoding: gzip" -H "Range: bytes=0-3" https://dual.test/inspected >/dev/null
h=$(upstream_get head target=/inspected | tr -d '\r')
expect_match "^Accept-Encoding: gzip$" "$h" "a host only inspected keeps the client's Accept-Encoding"
expect_match "^Range: bytes=0-3$" "$h" "and its Range"
expect_eq 0 "$(upstream_count target=/upgrade "head~(?i)sec-websocket-extensions")" \
	"the WebSocket upgrade went up without Sec-WebSocket-Extensions"

# 12. A reload that removes k: from the next request on, on the same
# connection, k is no longer injected.
in_px env CA="$CA" PH="$PH_K" SYNC="$WORLD_DIR/sync" "$WORLD_PYTHON" -c '
import http.client, os, ssl, time
ctx = ssl.create_default_context(cafile=os.environ["CA"])
c = http.client.HTTPSConnection("127.0.0.1", 3128, context=ctx, timeout=10)
c.set_tunnel("allowed.test", 443)
c.request("GET", "/before", headers={"x-api-key": os.environ["PH"]})
print("first:", c.getresponse().read().decode())
open(os.environ["SYNC"] + ".go", "w").close()
for i in range(200):
    if os.path.exists(os.environ["SYNC"] + ".done"):
        break
    time.sleep(0.05)
c.request("GET", "/after", headers={"x-api-key": os.environ["PH"]})
print("second:", c.getresponse().read().decode())
' >"$WORLD_DIR/keep.out" 2>&1 &
kpid=$!
i=0
while [ ! -e "$WORLD_DIR/sync.go" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
write_conf "g, b, a"
proxy_reload
wait_generation 2 3 >/dev/null || fail "the reload was not taken"
touch "$WORLD_DIR/sync.done"
wait $kpid
out=$(cat "$WORLD_DIR/keep.out")
expect_match "^second: " "$out" "both requests on the connection answered"
up_has "before the reload: injected" /before "x-api-key: $VALUE"
up_has "after the reload, the same connection's next request: not injected" /after "x-api-key: $PH_K"
expect_audit "the request after the reload has its line" event=request path=/after status=200
expect_no_audit "and no secret on it" event=request path=/after secret=k

# 13. A restart with state_dir keeps the CA: the old CA file still works.
write_conf
proxy_stop
proxy_start "$conf" || die "no proxy after the restart"
out=$(curl_px -x http://127.0.0.1:3128 --cacert "$WORLD_DIR/ca-first.pem" -H "x-api-key: $PH_K" \
	https://allowed.test/restart)
expect_match "^GET /restart HTTP/1.1" "$out" "after a restart the first CA is still trusted"

# The value is nowhere the proxy writes.
all="$(cat "$WORLD_DIR/proxy.out")
$(cat "$PROXY_LOG")
$(admin_get /metrics)"
expect_no_match "$VALUE" "$all" "the value is in no log, audit line or metric"
expect_no_match "$TOKEN" "$all" "nor the token"
expect_no_match "$PH_K" "$(cat "$PROXY_LOG")" "no placeholder in the audit log"
expect_no_match "$PH_G" "$(cat "$PROXY_LOG")" "no placeholder in the audit log (query)"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
