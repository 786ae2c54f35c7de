#!/bin/sh
# tls-inject: TLS termination with credential injection (issue 15).  A
# CONNECT to a host a secret of the session is bound to is terminated: the
# client trusts the session's CA (from [proxy] state_dir), the upstream is
# verified against upstream_ca_file, and each request inside is judged on
# its own: the real credential replaces the placeholder on the bound host
# only; a fronted Host is 421; a placeholder sent elsewhere (another
# terminated host, plain HTTP) is 403 secret_misdirected; path rules hold
# inside TLS; a bad upstream certificate is 502 upstream_tls_failed; a
# tunnel to a host no secret names stays opaque; the value is in no log.
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
			secrets = ${1:-k, g, b, q}
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
tstatus() { in_px curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }

# 1. The credential is injected; the placeholder does not reach upstream.
out=$(tc -H "x-api-key: $PH_K" https://allowed.test/inj?q=1)
expect_match "^x-api-key: $VALUE$" "$out" "upstream received the real credential"
expect_no_match "$PH_K" "$out" "and not the placeholder"
expect_no_match "^sni=-$" "$out" "upstream TLS carries SNI"
expect_match "^sni=allowed\.test$" "$out" "(upstream saw SNI allowed.test)"
expect_audit "the CONNECT is allowed and terminated" event=decision method=CONNECT host=allowed.test \
	decision=allow sni=allowed.test detail="TLS terminated"
expect_audit "the request inside has one line: decision, rule, status, path without query, secret" \
	event=request method=GET host=allowed.test path=/inj tls=terminated secret=k decision=allow \
	reason=allowed rule~. rule_at~:[0-9]+$ status=200 bytes_up~^[1-9] bytes_down~^[1-9]
expect_no_audit "and no second line for it (issue 15: one line per request)" event=decision \
	path=/inj

# Over SOCKS5 (issue 16): the same terminated tunnel, the same injection.
out=$(curl_px --proxy socks5h://127.0.0.1:3128 --cacert "$CA" -H "x-api-key: $PH_K" https://allowed.test/socks)
expect_match "^x-api-key: $VALUE$" "$out" "SOCKS5: the tunnel is terminated and the credential injected"
expect_audit "SOCKS5: the CONNECT is allowed and terminated" event=decision "method=SOCKS5 CONNECT" \
	host=allowed.test decision=allow sni=allowed.test detail="TLS terminated"
expect_audit "SOCKS5: the request inside has its own line" event=request path=/socks status=200 secret=k

# Two requests on one connection: each one is injected.
out=$(tc -H "x-api-key: $PH_K" https://allowed.test/a https://allowed.test/b)
expect_eq 2 "$(printf '%s\n' "$out" | tr -d '\r' | grep -c "^x-api-key: $VALUE$")" \
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
	expect_match "^x-api-key: $VALUE" "$out" "python requests: the credential is injected"
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
	expect_match "^x-api-key: $VALUE" "$out" "node: the credential is injected"
else
	diag "node is not installed: the Node client is not tried"
fi

# Streaming: a long answer passes whole, and a WebSocket upgrade inside the
# terminated tunnel becomes a relay (the world echoes after its 101).
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
          b"Sec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += t.recv(4096)
head, rest = buf.split(b"\r\n\r\n", 1)
print(head.split(b"\r\n")[0].decode())
t.sendall(b"ws-bytes-through\n")
while b"ws-bytes-through\n" not in rest:
    d = t.recv(4096)
    if not d:
        break
    rest += d
print(rest.decode(errors="replace"))
' 2>&1)
expect_match "^HTTP/1.1 101 " "$out" "a WebSocket upgrade inside the terminated tunnel: 101"
expect_match "^ws-bytes-through$" "$out" "and bytes are relayed both ways after it"

# 3. Basic auth on a path-narrowed host, and path rules inside TLS.
out=$(tc https://api.example.test/v1/ok)
basic=$(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)
expect_match "^Authorization: Basic $basic$" "$out" "basic: upstream received Authorization: Basic"
expect_eq 403 "$(tstatus https://api.example.test/v2/x)" "a path outside the rule is refused inside TLS"
expect_audit "path_not_allowed inside TLS" path=/v2/x reason=path_not_allowed tls=terminated
expect_match "^40[03]$" "$(tstatus --path-as-is https://api.example.test/v1/%2e%2e/v2/x)" \
	"an encoded dot segment does not pass the path rule"
expect_eq 0 "$(upstream_count target~^/v2)" "no refused path reached upstream"

# A query binding: the client's parameter of that name (its placeholder)
# is replaced by the real one, the others kept.
out=$(tc "https://wild.test/q?key=$PH_Q&x=1")
expect_match "^GET /q\?x=1&key=$VALUE HTTP/1.1$" "$out" "query: upstream received ?x=1&key=VALUE"
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

# 9. A reload that removes k: from the next request on, on the same
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
write_conf "g, b"
proxy_reload
wait_generation 2 3 >/dev/null || fail "the reload was not taken"
touch "$WORLD_DIR/sync.done"
wait $kpid
out=$(cat "$WORLD_DIR/keep.out")
expect_match "^x-api-key: $VALUE" "$(printf '%s\n' "$out" | sed -n '/^first:/,/^second:/p')" \
	"before the reload: injected"
expect_match "^x-api-key: $PH_K" "$(printf '%s\n' "$out" | sed -n '/^second:/,$p')" \
	"after the reload, the same connection's next request: not injected"
expect_audit "the request after the reload has its line" event=request path=/after status=200
expect_no_audit "and no secret on it" event=request path=/after secret=k

# 10. A restart with state_dir keeps the CA: the old CA file still works.
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
