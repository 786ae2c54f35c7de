#!/bin/sh
# secret-body: "inject = HOST replace WHERE", placeholders replaced where
# an API carries its key outside the headers, inside a terminated tunnel.
# In the URL path (a Telegram-style /bot<TOKEN>/getMe, percent-encoded as
# a path needs); in form bodies (curl -d, --data-urlencode: the value
# percent-encoded) and JSON bodies (JSON-escaped), Content-Length set to
# the new length, a chunked body kept chunked even with the placeholder
# split across chunks; a body of another type passes as it is; a
# Content-Length body over replace_max is refused (413, naming the key);
# the client's WebSocket text frames (one frame, and fragments around a
# ping) reach a WebSocket server with the value, and the value it echoes
# never reaches the client.  The upstream's own record says what it got.
# Through README's bwrap recipe (postern-bridge on the session's UNIX
# socket, as uid 1000) and inside `postern-sidecar run --secret`, curl
# with the placeholder from its environment in the path and in a JSON body
# reaches the upstream with the value, which CMD's environment never holds.
. "$top_srcdir/tests/integration/lib/world.sh"
. "$top_srcdir/tests/integration/lib/recipe.sh"
world_up
recipe_dir
world_cleanup_hook() { rm -rf "$RECIPE_DIR"; }
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

H=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
# A Telegram-like token with characters each place writes its own way.
TOKEN="123456:AA${H}/+\"q"
WSKEY="wsk-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_TOK="$TOKEN" PX_TEST_WS="$WSKEY"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state" "replace_max = 4096" \
		"listen = unix:$RECIPE_DIR/s1/proxy.sock mode=666"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private, allowed.test:8443 private, other.test private
		secrets = t, w
		[secret t]
		from_env = PX_TEST_TOK
		placeholder_env = PX_T
		inject = allowed.test replace path,body
		[secret w]
		from_env = PX_TEST_WS
		placeholder_env = PX_W
		inject = allowed.test:8443 replace websocket
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

CA="$state/ca/default.pem"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH_T=$(printf '%s\n' "$sess" | sed -n 's/^env PX_T //p')
PH_W=$(printf '%s\n' "$sess" | sed -n 's/^env PX_W //p')
[ -n "$PH_T" ] && [ -n "$PH_W" ] || die "no placeholders"

# enc KIND TEXT: TEXT with the token's placeholder replaced by the token
# written as KIND (path, form, json) wants it.
enc() {
	PH="$PH_T" V="$TOKEN" "$WORLD_PYTHON" -c '
import json, os, sys, urllib.parse
v = os.environ["V"]
k = sys.argv[1]
e = (urllib.parse.quote(v, safe="!$&'"'"'()*+,;=:@") if k == "path" else
     urllib.parse.quote(v, safe="") if k == "form" else json.dumps(v)[1:-1])
sys.stdout.write(sys.argv[2].replace(os.environ["PH"], e))' "$@"
}
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
tc() { curl_px -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
# leaks TEXT: nonzero when TEXT holds the token in any form it was sent in.
leaks() {
	case $1 in
	*"$TOKEN"* | *"$(enc path "$PH_T")"* | *"$(enc form "$PH_T")"* | *"$(enc json "$PH_T")"*) return 0 ;;
	esac
	return 1
}

# 1. The path: Telegram's /bot<TOKEN>/getMe.
out=$(tc "https://allowed.test/bot$PH_T/getMe")
want=$(enc path "/bot$PH_T/getMe")
expect_upstream "path: upstream got /bot<token, percent-encoded as a path>/getMe" "target=$want"
expect_eq 0 "$(upstream_count "target~$PH_T")" "and not the placeholder"
leaks "$out" && fail "path: the echo showed the token to the client" || ok "path: the echo does not show the token"
expect_audit "path: the request line names the secret" event=request host=allowed.test secret=t status=200
# A client asking for h2 gets HTTP/1.1 here: only that path rewrites.
out=$(tc --http2 -w '\nversion=%{http_version}\n' "https://allowed.test/bot$PH_T/h2")
expect_match "^version=1.1$" "$out" "no h2 for a host with a replace binding"
expect_upstream "and the path is rewritten" "target=$(enc path "/bot$PH_T/h2")"

# 2. A form body, curl -d (application/x-www-form-urlencoded).
body="chat_id=42&token=$PH_T&text=hi"
want=$(enc form "$body")
out=$(tc -d "$body" https://allowed.test/form)
expect_upstream "form: the value percent-encoded, Content-Length its new length" target=/form \
	body_mode=length body_length=${#want} body_sha256="$(sha "$want")"
leaks "$out" && fail "form: the echo showed the token" || ok "form: the echo does not show the token"
# --data-urlencode: curl encodes, the placeholder (unreserved) stays whole.
out=$(tc --data-urlencode "text=hello $PH_T!" https://allowed.test/urlenc)
want=$(enc form "text=hello+$PH_T%21")
expect_upstream "--data-urlencode: the value percent-encoded" target=/urlenc \
	body_length=${#want} body_sha256="$(sha "$want")"

# 3. JSON, with Content-Length and chunked.
body="{\"chat_id\":42,\"token\":\"$PH_T\",\"again\":[\"$PH_T\"]}"
want=$(enc json "$body")
out=$(tc -H 'Content-Type: application/json' -d "$body" https://allowed.test/json)
expect_upstream "json: the value JSON-escaped, Content-Length its new length" target=/json \
	body_mode=length body_length=${#want} body_sha256="$(sha "$want")"
out=$(tc -H 'Content-Type: application/json; charset=utf-8' -H 'Transfer-Encoding: chunked' \
	-d "$body" https://allowed.test/jsonchunked)
expect_upstream "json, chunked: stays chunked, the value in" target=/jsonchunked \
	body_mode=chunked body_length=${#want} body_sha256="$(sha "$want")"

# Expect: 100-continue on a held body: the proxy answers 100 at once (the
# upstream sees no head before the body), curl does not wait 5 s for it.
out=$(tc -H 'Content-Type: application/json' -H 'Expect: 100-continue' --expect100-timeout 5 \
	-w '\ntime=%{time_total}\n' -d "$body" https://allowed.test/expect)
expect_upstream "Expect: 100-continue: the body goes, rewritten" target=/expect \
	body_length=${#want} body_sha256="$(sha "$want")"
t=$(printf '%s\n' "$out" | sed -n 's/^time=//p')
expect_eq yes "$(awk -v t="$t" 'BEGIN { print (t < 3) ? "yes" : "no" }')" \
	"and without waiting for curl's timeout (${t}s)"

# The placeholder split across chunks (a raw client through the tunnel).
out=$(in_px env CA="$CA" PH="$PH_T" "$WORLD_PYTHON" -c '
import os, socket, ssl
ph = os.environ["PH"].encode()
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
t = ssl.create_default_context(cafile=os.environ["CA"]).wrap_socket(s, server_hostname="allowed.test")
parts = [b"{\"k\":\"" + ph[:5], ph[5:20], ph[20:] + b"\",\"x\":\"" + ph[:-1] + b"\"}"]
t.sendall(b"POST /split HTTP/1.1\r\nHost: allowed.test\r\nContent-Type: application/json\r\n"
          b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
for p in parts:
    t.sendall(b"%x\r\n%s\r\n" % (len(p), p))
t.sendall(b"0\r\n\r\n")
got = b""
while True:
    d = t.recv(65536)
    if not d:
        break
    got += d
print(got.split(b"\r\n")[0].decode())
' 2>&1)
expect_match "^HTTP/1.1 200 " "$out" "split across chunks: 200"
body="{\"k\":\"$PH_T\",\"x\":\"${PH_T%?}\"}"
want=$(enc json "$body")
expect_upstream "split across chunks: found, and a placeholder less one byte left alone" target=/split \
	body_mode=chunked body_length=${#want} body_sha256="$(sha "$want")"

# 4. Other media types pass as they are; so does a body with no placeholder.
body="token=$PH_T"
out=$(tc -H 'Content-Type: text/plain' -d "$body" https://allowed.test/plain)
expect_upstream "text/plain: unchanged" target=/plain body_length=${#body} body_sha256="$(sha "$body")"

# 5. Past replace_max: 413, the reason names the key; nothing goes up.
big=$("$WORLD_PYTHON" -c 'import sys; sys.stdout.write("{\"t\":\"%s\",\"pad\":\"%s\"}" % (sys.argv[1], "x" * 5000))' "$PH_T")
out=$(tc -i -H 'Content-Type: application/json' -d "$big" https://allowed.test/big)
expect_match "^HTTP/1.1 413 " "$out" "a Content-Length body over replace_max: 413"
expect_match "replace_max" "$out" "the refusal names replace_max"
expect_match "secret t" "$out" "and the secret"
expect_eq 0 "$(upstream_count target=/big)" "nothing of it went up"
# Chunked, the same body streams: no bound on it.
want=$(enc json "$big")
out=$(tc -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' -d "$big" \
	https://allowed.test/bigchunked)
expect_upstream "a chunked body over replace_max streams, rewritten" target=/bigchunked \
	body_length=${#want} body_sha256="$(sha "$want")"

# 6. Elsewhere the placeholder stays refused (secret_misdirected).
out=$(tc -i "http://other.test/bot$PH_T/getMe")
expect_match "^X-Postern-Reason: secret_misdirected" "$out" "the path placeholder to another host: refused"
expect_eq 0 "$(upstream_count host=other.test)" "nothing reached other.test"

# 7. WebSocket: a server on allowed.test:8443 that writes each message it
# receives to a file and echoes it back (unmasked, as a server sends).
cat >"$WORLD_DIR/ws-server.py" <<'EOF'
import socket, ssl, struct, sys
cert, key, log, addr = sys.argv[1:5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((addr, 8443))
ls.listen(8)
print("ready", flush=True)
def exact(t, n, buf):
    while len(buf[0]) < n:
        d = t.recv(65536)
        if not d:
            raise EOFError
        buf[0] += d
    out, buf[0] = buf[0][:n], buf[0][n:]
    return out
while True:
    c, _ = ls.accept()
    try:
        t = ctx.wrap_socket(c, server_side=True)
        buf = [b""]
        while b"\r\n\r\n" not in buf[0]:
            buf[0] += t.recv(4096)
        head, buf[0] = buf[0].split(b"\r\n\r\n", 1)
        t.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        msg = b""
        while True:
            h = exact(t, 2, buf)
            n = h[1] & 0x7f
            if n == 126:
                n = struct.unpack(">H", exact(t, 2, buf))[0]
            elif n == 127:
                n = struct.unpack(">Q", exact(t, 8, buf))[0]
            k = exact(t, 4, buf) if h[1] & 0x80 else b"\0\0\0\0"
            p = bytes(b ^ k[i % 4] for i, b in enumerate(exact(t, n, buf)))
            op = h[0] & 0x0f
            if op == 8:
                break
            if op >= 8:
                continue
            msg += p
            if h[0] & 0x80:
                with open(log, "ab") as f:
                    f.write(b"masked=%d msg=%s\n" % (h[1] >> 7, msg))
                e = b"echo " + msg
                t.sendall(bytes([0x81, 126]) + struct.pack(">H", len(e)) + e if len(e) > 125
                          else bytes([0x81, len(e)]) + e)
                msg = b""
        t.close()
    except Exception as ex:
        with open(log, "ab") as f:
            f.write(b"error %s\n" % str(ex).encode())
EOF
: >"$WORLD_DIR/ws.log"
in_up "$WORLD_PYTHON" "$WORLD_DIR/ws-server.py" "$WORLD_CERT" "$WORLD_KEY" "$WORLD_DIR/ws.log" \
	"$WORLD_UP4" >"$WORLD_DIR/ws-server.out" 2>&1 &
wspid=$!
i=0
until grep -q ready "$WORLD_DIR/ws-server.out" 2>/dev/null || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done

out=$(in_px env CA="$CA" PH="$PH_W" "$WORLD_PYTHON" -c '
import os, socket, ssl, struct
ph = os.environ["PH"].encode()
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:8443 HTTP/1.1\r\nHost: allowed.test:8443\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
t = ssl.create_default_context(cafile=os.environ["CA"]).wrap_socket(s, server_hostname="allowed.test")
t.sendall(b"GET /ws HTTP/1.1\r\nHost: allowed.test:8443\r\nUpgrade: websocket\r\n"
          b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
          b"Sec-WebSocket-Extensions: permessage-deflate\r\nSec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += t.recv(4096)
head, rest = buf.split(b"\r\n\r\n", 1)
print(head.split(b"\r\n")[0].decode())
def frame(fin, op, p, key=b"\x1f\x2e\x3d\x4c"):
    n = len(p)
    h = bytes([(0x80 if fin else 0) | op])
    h += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
    return h + key + bytes(b ^ key[i % 4] for i, b in enumerate(p))
t.sendall(frame(1, 1, b"{\"auth\":\"" + ph + b"\"}"))
t.sendall(frame(0, 1, b"part " + ph[:7]) + frame(1, 9, b"ping") + frame(0, 0, ph[7:]) +
          frame(1, 0, b" end " + b"y" * 300))
t.sendall(frame(1, 8, b""))
got = rest
t.settimeout(5)
try:
    while b"y" * 300 not in got:
        d = t.recv(65536)
        if not d:
            break
        got += d
except Exception:
    pass
print(got.decode("latin-1"))
' 2>&1)
# A compressed frame (RSV1), sent with the upgrade before the 101 comes:
# the connection closes, its close line says why, the server gets nothing.
out2=$(in_px env CA="$CA" PH="$PH_W" "$WORLD_PYTHON" -c '
import os, socket, ssl
ph = os.environ["PH"].encode()
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:8443 HTTP/1.1\r\nHost: allowed.test:8443\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
t = ssl.create_default_context(cafile=os.environ["CA"]).wrap_socket(s, server_hostname="allowed.test")
key = b"\x01\x02\x03\x04"
p = b"rsv " + ph
t.sendall(b"GET /ws2 HTTP/1.1\r\nHost: allowed.test:8443\r\nUpgrade: websocket\r\n"
          b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
          b"Sec-WebSocket-Version: 13\r\n\r\n" +
          bytes([0xc1, 0x80 | len(p)]) + key + bytes(b ^ key[i % 4] for i, b in enumerate(p)))
got = b""
t.settimeout(5)
try:
    while True:
        d = t.recv(65536)
        if not d:
            break
        got += d
except Exception as e:
    pass
print(got.split(b"\r\n")[0].decode())
' 2>&1)
kill "$wspid" 2>/dev/null
expect_audit "websocket: a compressed frame closes the connection, the close line says why" \
	event=close path=/ws2 "why~RSV bits"
expect_no_match "rsv " "$(cat "$WORLD_DIR/ws.log")" "and the server got nothing of it"
expect_match "^HTTP/1.1 101 " "$out" "websocket: 101 through the terminated tunnel"
log=$(cat "$WORLD_DIR/ws.log")
expect_match "^masked=1 msg=\\{\"auth\":\"$WSKEY\"\\}$" "$log" \
	"websocket: the server got the value in a masked text frame"
expect_match "^masked=1 msg=part $WSKEY end y{300}$" "$log" \
	"websocket: a placeholder split across fragments, a ping between: the value whole"
expect_no_match "$PH_W" "$log" "websocket: no placeholder reached the server"
expect_match "echo " "$out" "websocket: the server's echoes came back"
expect_no_match "$WSKEY" "$out" "but never the value (the response scan)"

# The value is nowhere the proxy writes.
all="$(cat "$WORLD_DIR/proxy.out")
$(cat "$PROXY_LOG")
$(admin_get /metrics)"
leaks "$all" && fail "the token is in a log or metric" || ok "the token is in no log, audit line or metric"
expect_no_match "$WSKEY" "$all" "nor the websocket key"

# rcurl_cmd TAG: a shell line for CMD: its PX_ variables, then curl with
# $PX_T in a Telegram-style path and in a JSON body, to /TAG-...
rcurl_cmd() {
	printf '%s' 'env | grep "^PX_"; curl -sS --max-time 10 "https://allowed.test/bot$PX_T/'"$1"'" >/dev/null &&
		curl -sS --max-time 10 -H "Content-Type: application/json" \
		-d "{\"chat_id\":42,\"token\":\"$PX_T\"}" https://allowed.test/'"$1"'-json >/dev/null &&
		echo curl-ok'
}
# rcheck WHERE TAG OUT: what CMD printed and what the upstream got.
rcheck() {
	local ph
	ph=$(printf '%s\n' "$3" | sed -n 's/^PX_T=//p')
	expect_match "curl-ok" "$3" "$1: both requests went"
	expect_match '.' "$ph" "$1: CMD's PX_T holds a placeholder"
	case $3 in
	*"$TOKEN"* | *"$(enc json "$PH_T")"*) fail "$1: the value is in CMD's environment" ;;
	*) ok "$1: the value is not in CMD's environment" ;;
	esac
	expect_upstream "$1: the path reached the upstream with the value" \
		"target=$(PH_T=$ph enc path "/bot$ph/$2")"
	body="{\"chat_id\":42,\"token\":\"$ph\"}"
	want=$(PH_T=$ph enc json "$body")
	expect_upstream "$1: the JSON body reached the upstream with the value" target=/$2-json \
		body_length=${#want} body_sha256="$(sha "$want")"
	expect_eq 0 "$(upstream_count "target~$ph")" "$1: the placeholder did not"
}

# 8. README's bwrap recipe, as uid 1000, through postern-bridge on the
# session's UNIX socket; the launcher's environment holds the value.
if recipe_ok; then
	out=$(recipe_run sh -c "$(rcurl_cmd recipe)" 2>"$WORLD_DIR/bwrap.err")
	rcheck "bwrap recipe" recipe "$out
$(tail -c 300 "$WORLD_DIR/bwrap.err")"
	expect_audit "bwrap recipe: it came on the session's UNIX socket, from uid 1000" \
		path=/recipe-json "peer~^unix:.*uid=1000"
else
	diag "bwrap, postern-bridge or user namespaces for uid 1000 are missing: the bwrap recipe is not tried"
fi

# 9. Inside postern-sidecar run --secret t, a replace binding of its own.
if [ -x "$top_builddir/postern-sidecar" ] && [ -x "$top_builddir/postern-bridge" ]; then
	cp "$WORLD_CA" "$RECIPE_DIR/ca.pem" && chmod 0644 "$RECIPE_DIR/ca.pem"
	cat >"$WORLD_DIR/sc.ini" <<-EOF
		[defaults]
		allow_hosts = allowed.test private
		[secret t]
		from_env = PX_TEST_TOK
		placeholder_env = PX_T
		inject = allowed.test replace path,body
	EOF
	out=$(in_px env -i PATH=/usr/bin:/bin LANG=C.UTF-8 SSL_CERT_FILE="$RECIPE_DIR/ca.pem" \
		PX_TEST_TOK="$TOKEN" "$top_builddir/postern-sidecar" run --config "$WORLD_DIR/sc.ini" \
		--bridge "$RECIPE_DIR/postern-bridge" --secret t -- sh -c "$(rcurl_cmd sidecar)" \
		</dev/null 2>"$WORLD_DIR/sc.err")
	rcheck "sidecar run" sidecar "$out
$(tail -c 300 "$WORLD_DIR/sc.err")"
else
	diag "postern-sidecar or postern-bridge is not built: the sidecar run is not tried"
fi
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
