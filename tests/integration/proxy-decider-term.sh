#!/bin/sh
# proxy-decider-term: decider = is asked about requests inside a TLS
# tunnel the session terminates (a host a secret is bound to), not only
# about their CONNECT.  A path outside the rule's prefix goes to the
# decider with its method, host, port, path and the ClientHello's
# server_name; its allow sends the request up with the secret injected,
# its deny refuses it inside the tunnel with its reason, no answer is
# decider_timeout; a kept answer (ttl) is not asked again; a keep-alive
# tunnel's requests are each asked; a client that leaves while its request
# waits is dropped safely; decider_ask = all asks an allowed path too.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

D="$top_srcdir/tests/integration/lib-proxy/decider.py"
SOCK="$WORLD_DIR/decider.sock"
QLOG="$WORLD_DIR/questions.log"
touch "$QLOG"
VALUE="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_KEY="$VALUE"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

# asked COND: how many questions decider.py got matching the Python
# expression COND over q (one question).
asked() {
	"$WORLD_PYTHON" -c '
import json, sys
n = 0
for l in open(sys.argv[1]):
    q = json.loads(l)
    n += bool(eval(sys.argv[2]))
print(n)' "$QLOG" "$1"
}

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
	echo "[defaults]"
	echo "allow_hosts = allowed.test/api/ private, allowed.test:8443/api/ private"
	echo "secrets = k"
	echo "decider = unix:$SOCK"
	echo "decider_timeout = 1s"
	echo "[secret k]"
	echo "from_env = PX_TEST_KEY"
	echo "inject = allowed.test header x-api-key"
	echo "inject = allowed.test:8443 header x-api-key"
	echo "[session all]"
	echo "listen = tcp:127.0.0.1:3130"
	echo "decider_ask = all"
} >"$conf"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
SLOW=3 ip netns exec "$WORLD_NS_PX" "$WORLD_PYTHON" "$D" "unix:$SOCK" "$QLOG" >"$WORLD_DIR/decider.out" \
	2>>"$WORLD_DIR/decider.err" &
i=0
while ! grep -q ready "$WORLD_DIR/decider.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
grep -q ready "$WORLD_DIR/decider.out" || die "decider.py did not start"

CA="$state/ca/default.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_KEY //p')
[ -n "$PH" ] || die "no placeholder"

# tget PORT CA URL...: "STATUS REASON" of each GET (one tunnel) through the
# proxy on PORT, trusting CA, with the placeholder in x-api-key.
tget() {
	local port ca out
	port=$1
	ca=$2
	shift 2
	out=$(in_px curl -s -i --suppress-connect-headers --max-time 10 -x "http://127.0.0.1:$port" --cacert "$ca" \
		-H "x-api-key: $PH" "$@" 2>/dev/null | tr -d '\r')
	printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.[01] \([0-9]*\).*/\1/p' | tr '\n' ' '
	reason_of "$out"
}
# up_key TARGET: how many requests for TARGET reached the upstream with the
# real value in x-api-key.
up_key() { upstream_count "target=$1" "head~(?mi)^x-api-key: $VALUE\r\$"; }

# A path under the rule's prefix: allowed, not asked.
expect_eq "200 " "$(tget 3128 "$CA" https://allowed.test/api/x)" "a path under the prefix goes"
expect_eq 1 "$(up_key /api/x)" "with the secret injected"
expect_eq 0 "$(asked 'q.get("path") == "/api/x"')" "unasked (decider_ask = unlisted)"

# A path outside the prefix: the decider is asked and allows it.
expect_eq "200 " "$(tget 3128 "$CA" 'https://allowed.test/other/ok?q=1')" \
	"the decider's allow lets a request inside the terminated tunnel go"
expect_eq 1 "$(up_key '/other/ok?q=1')" "it reached the upstream with the secret injected"
expect_eq 0 "$(upstream_count 'target=/other/ok?q=1' "head~$PH")" "and not the placeholder"
expect_eq 1 "$(asked 'q["kind"] == "tls" and q["method"] == "GET" and q["host"] == "allowed.test" and q["port"] == 443 and q.get("path") == "/other/ok" and q.get("sni") == "allowed.test" and q["allowlist"] == "deny" and q["allowlist_reason"] == "path_not_allowed" and q["rule"]["text"] == "allowed.test/api/ private"')" \
	"the question has the method, host, port, path (no query), sni and the refusing rule"
expect_audit "the request's line says the decider allowed it" event=request host=allowed.test \
	path=/other/ok tls=terminated decision=allow decider=allow secret=k status=200

# Deny: refused inside the tunnel with the decider's reason, made harmless.
resp=$(in_px curl -s -i --suppress-connect-headers --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" -H "x-api-key: $PH" \
	https://allowed.test/nope 2>/dev/null | tr -d '\r')
expect_eq 403 "$(status_of "$resp")" "the decider's deny refuses inside the tunnel"
expect_eq decider_denied "$(reason_of "$resp")" "with decider_denied"
expect_match "denied it: policy says no\?\?X-Injected: yes" "$resp" "the client sees the decider's reason, its CR LF made harmless"
expect_no_match "^X-Injected" "$resp" "the reason adds no header"
expect_eq 0 "$(upstream_count target=/nope)" "nothing reached the upstream"
expect_audit "the refusal is audited" path=/nope tls=terminated reason=decider_denied decider=deny

# Timeout.
expect_eq "403 decider_timeout" "$(tget 3128 "$CA" https://allowed.test/slow/a)" \
	"no answer within decider_timeout refuses inside the tunnel"
expect_eq 0 "$(upstream_count target=/slow/a)" "nothing reached the upstream"

# ttl: kept answers, keyed with the path.
expect_eq "200 " "$(tget 3128 "$CA" https://allowed.test/ttl/a)" "an allow with a ttl"
expect_eq "200 " "$(tget 3128 "$CA" https://allowed.test/ttl/a)" "the same request again"
expect_eq 1 "$(asked 'q.get("path") == "/ttl/a"')" "asked once"
expect_eq "200 " "$(tget 3128 "$CA" https://allowed.test/ttl/b)" "another path"
expect_eq 1 "$(asked 'q.get("path") == "/ttl/b"')" "is asked"

# Keep-alive: each request of one tunnel is asked and goes.
expect_eq "200 200 " "$(tget 3128 "$CA" https://allowed.test/ka/1 https://allowed.test/ka/2)" \
	"two requests on one tunnel, both allowed by the decider"
expect_eq "1 1" "$(up_key /ka/1) $(up_key /ka/2)" "both reached the upstream with the secret"
expect_eq 2 "$(asked 'q.get("path") in ("/ka/1", "/ka/2")')" "each was asked"

# A client that leaves while its request waits: the late answer is dropped.
in_px env CA="$CA" "$WORLD_PYTHON" -c '
import os, socket, ssl, time
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
assert s.recv(4096).startswith(b"HTTP/1.1 200")
t = ssl.create_default_context(cafile=os.environ["CA"]).wrap_socket(s, server_hostname="allowed.test")
t.sendall(b"GET /slow/gone HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
time.sleep(0.3)
t.close()' || fail "the client could not send its request"
i=0
while [ "$(asked 'q.get("path") == "/slow/gone"')" = 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq 1 "$(asked 'q.get("path") == "/slow/gone"')" "the request of a client that then left was asked"
sleep 3.3 # its answer comes late, to a connection that is gone
expect_eq "200 " "$(tget 3128 "$CA" https://allowed.test/after-gone)" "the proxy still serves"
expect_eq 0 "$(upstream_count target=/slow/gone)" "the left request never went up"

# decider_ask = all: an allowed path is asked too, and a deny refuses it.
CA2="$state/ca/all.pem"
[ -s "$CA2" ] || die "the session CA is not in $CA2"
expect_eq "200 " "$(tget 3130 "$CA2" https://allowed.test/api/one)" "decider_ask = all: an allowed path the decider allows goes"
expect_eq 1 "$(asked 'q["session"] == "all" and q.get("path") == "/api/one" and q["allowlist"] == "allow" and q["kind"] == "tls"')" \
	"it was asked, with the allowlist's allow"
expect_eq "403 decider_denied" "$(tget 3130 "$CA2" https://allowed.test/api/nope)" \
	"the decider's deny refuses an allowed path inside the tunnel"
expect_eq 0 "$(upstream_count target=/api/nope)" "nothing reached the upstream"

# A client that offers h2 gets HTTP/1.1 in a tunnel of a session with a
# decider, even from an upstream that would choose h2, so that each of its
# requests is asked (an h2 stream would not be).  The upstream offers h2
# and http/1.1, logs which the proxy's offer made it choose, and answers
# HTTP/1.1 only.
cat >"$WORLD_DIR/dual.py" <<-'EOF'
	import socket, ssl, sys, threading
	cert, key, addr, log = sys.argv[1:5]
	ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
	ctx.load_cert_chain(cert, key)
	ctx.set_alpn_protocols(["h2", "http/1.1"])
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind((addr, 8443))
	s.listen(16)
	def one(c):
	    t = ctx.wrap_socket(c, server_side=True)
	    p = t.selected_alpn_protocol()
	    with open(log, "a") as f:
	        f.write("alpn=%s\n" % p)
	    buf = b""
	    while p != "h2" and b"\r\n\r\n" not in buf:
	        d = t.recv(4096)
	        if not d:
	            break
	        buf += d
	    if p != "h2" and buf:
	        t.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
	    t.close()
	while True:
	    c, _ = s.accept()
	    threading.Thread(target=one, args=(c,), daemon=True).start()
EOF
ip netns exec "$WORLD_NS_UP" "$WORLD_PYTHON" "$WORLD_DIR/dual.py" "$WORLD_CERT" "$WORLD_KEY" \
	"$WORLD_UP4" "$WORLD_DIR/dual.log" </dev/null >/dev/null 2>&1 &
i=0
while ! ip netns exec "$WORLD_NS_UP" bash -c "exec 3<>/dev/tcp/$WORLD_UP4/8443" 2>/dev/null &&
	[ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
out=$(in_px curl -s -o /dev/null --http2 --max-time 10 -x http://127.0.0.1:3130 --cacert "$CA2" \
	-w '%{http_code} %{http_version}' https://allowed.test:8443/api/h2try)
expect_eq "200 1.1" "$out" "a client offering h2 speaks HTTP/1.1 inside the tunnel"
expect_eq 1 "$(asked 'q["session"] == "all" and q.get("path") == "/api/h2try"')" \
	"and its request is asked (decider_ask = all)"
expect_eq "alpn=http/1.1" "$(head -n 1 "$WORLD_DIR/dual.log")" "the proxy offered the upstream http/1.1 only"
