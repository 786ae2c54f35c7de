#!/bin/sh
# bridge-session.sh: the bridge learns its session's placeholders and CA
# from the proxy over the session's socket, before CMD runs, and exports
# them (postern-bridge(8) SESSION INFO).  A stand-in proxy on a UNIX socket
# answers the session request with an env line and a CA made here by
# openssl, and relays CONNECTs to a local TLS server whose certificate
# that CA signed.  Inside the sandbox, with real clients:
#   - CMD's ANTHROPIC_API_KEY is the placeholder, not the caller's key
#     (passed with --env, so without the session info CMD would get it);
#   - the bundle exists, holds the system roots and the CA, and every
#     variable of the list names it;
#   - curl with only CURL_CA_BUNDLE, and python's ssl/urllib with only
#     SSL_CERT_FILE, reach https://tls.test through the proxy (and curl
#     with none of them fails: the CA is what makes it work);
#   - the bundle is gone once the bridge has exited.
# A proxy answering 400 (an older one) changes nothing, with a notice; a
# malformed 200 body stops the bridge before CMD with a clear error;
# --no-session-info asks nothing.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
command -v openssl >/dev/null || br_skip "openssl is not installed"
command -v curl >/dev/null || br_skip "curl is not installed"
ROOTS=
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
	[ -r "$f" ] && [ -s "$f" ] && { ROOTS=$f; break; }
done
[ -n "$ROOTS" ] || br_skip "no system roots bundle to check the bundle against"

T=$BR_T
KEY=sk-ant-api03-REAL-caller-key-0123456789
PH=sk-ant-api03-PLACEHOLDER-abcdefghijkl

# The session CA and a leaf for tls.test it signed.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$T/ca.key" -out "$T/ca.pem" -subj "/CN=postern test session CA" \
	-addext "basicConstraints=critical,CA:TRUE" \
	-addext "keyUsage=critical,keyCertSign,cRLSign" 2>"$T/openssl.err" ||
	br_fail "openssl req (CA): $(cat "$T/openssl.err")"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$T/leaf.key" -out "$T/leaf.csr" -subj "/CN=tls.test" 2>"$T/openssl.err" ||
	br_fail "openssl req (leaf): $(cat "$T/openssl.err")"
printf 'subjectAltName=DNS:tls.test\nextendedKeyUsage=serverAuth\n' > "$T/leaf.ext"
openssl x509 -req -in "$T/leaf.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
	-days 2 -extfile "$T/leaf.ext" -out "$T/leaf.pem" 2>"$T/openssl.err" ||
	br_fail "openssl x509 (leaf): $(cat "$T/openssl.err")"

cat > "$T/tls.py" <<'EOF'
# The upstream: HTTPS on the host's loopback with the leaf the CA signed.
import http.server, os, ssl, sys
cert, key, portfile = sys.argv[1:4]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello over tls\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
EOF
cat > "$T/sessproxy.py" <<'EOF'
# A stand-in proxy: answers the session request as the file MODE says
# (good, 400, bad), logs the request's exact bytes, and relays CONNECT
# tls.test:443 to the upstream.
import os, socket, sys, threading
path, up_port, modefile, ca, ph, logpath = sys.argv[1:7]
up_port = int(up_port)
def log(b):
    with open(logpath, "ab") as f:
        f.write(b + b"\n")
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def handle(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            c.close()
            return
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    first = head.split(b"\r\n")[0]
    if first.startswith(b"GET /.well-known/postern/session "):
        log(b"session " + repr(head + b"\r\n\r\n").encode())
        mode = open(modefile).read().strip()
        if mode == "400":
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        else:
            body = b"postern-session 1\nenv ANTHROPIC_API_KEY " + ph.encode() + b"\n"
            if mode == "bad":
                body += b"env BROKEN has a space\n"
            body += b"ca\n" + open(ca, "rb").read()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        c.close()
        return
    if first.startswith(b"CONNECT tls.test:443 "):
        log(b"connect tls.test:443")
        u = socket.create_connection(("127.0.0.1", up_port))
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            u.sendall(rest)
        t = threading.Thread(target=pump, args=(u, c), daemon=True)
        t.start()
        pump(c, u)
        t.join()
        u.close()
    else:
        log(b"other " + first)
        c.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    c.close()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".tmp")
s.listen(64)
os.rename(path + ".tmp", path)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
EOF
cat > "$T/cmd.sh" <<'EOF'
# CMD: what it was given, and what real clients do with it.
echo "key=${ANTHROPIC_API_KEY:-}"
for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO \
    PIP_CERT CARGO_HTTP_CAINFO AWS_CA_BUNDLE; do
	eval "echo \"var $v=\${$v:-}\""
done
b=${CURL_CA_BUNDLE:-}
if [ -n "$b" ] && [ -f "$b" ]; then
	echo "bundle=$b"
	echo "bundle_mode=$(stat -c %a "$b") dir_mode=$(stat -c %a "${b%/*}")"
	grep -c 'BEGIN CERTIFICATE' "$b" | sed 's/^/bundle_certs=/'
	cp "$b" "$OUT/bundle.copy"
fi
ALL="SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO PIP_CERT CARGO_HTTP_CAINFO AWS_CA_BUNDLE"
unset_all() { for v in $ALL; do [ "$v" = "$1" ] || printf -- '-u %s ' "$v"; done; }
# shellcheck disable=SC2046
r=$(env $(unset_all CURL_CA_BUNDLE) curl -sS --max-time 10 https://tls.test/ 2>&1)
echo "curl_bundle=$r"
# shellcheck disable=SC2046
r=$(env $(unset_all none) curl -sS --max-time 10 -o /dev/null https://tls.test/ 2>&1; echo "rc=$?")
echo "curl_none=$(echo $r)"
# shellcheck disable=SC2046
r=$(env $(unset_all SSL_CERT_FILE) python3 -c '
import ssl, urllib.request
ctx = ssl.create_default_context()
print(urllib.request.urlopen("https://tls.test/", context=ctx, timeout=10).read().decode().strip())
' 2>&1 | tail -1)
echo "python_ssl=$r"
: > "$OUT/cmd.ran"
EOF

python3 "$T/tls.py" "$T/leaf.pem" "$T/leaf.key" "$T/tls.port" 2>>"$T/tls.err" &
BR_PIDS="$BR_PIDS $!"
br_wait_file "$T/tls.port" || br_fail "TLS upstream did not start: $(cat "$T/tls.err")"
echo good > "$T/mode"
python3 "$T/sessproxy.py" "$T/p.sock" "$(cat "$T/tls.port")" "$T/mode" "$T/ca.pem" "$PH" \
	"$T/proxy.log" 2>>"$T/proxy.err" &
BR_PIDS="$BR_PIDS $!"
br_wait_file "$T/p.sock" || br_fail "stand-in proxy did not start"

# run NAME [BRIDGE OPTION...]: the bridge in a new network namespace, with
# the caller's key passed on by --env, CMD = cmd.sh; output in $T/NAME.out.
run() {
	name=$1
	shift
	mkdir -p "$T/$name"
	env -i PATH="$PATH" HOME=/root TMPDIR="$T/$name" OUT="$T/$name" ANTHROPIC_API_KEY="$KEY" \
		$BR_NS "$BRIDGE" --connect "$T/p.sock" --env ANTHROPIC_API_KEY --env OUT $BR_ROOT "$@" \
		-- sh "$T/cmd.sh" > "$T/$name.out" 2>&1
	rc=$?
	echo "== $name (bridge exit $rc)"
	cat "$T/$name.out"
}

# --- With session info: placeholder and CA.
run good
out=$(cat "$T/good.out")
[ "$rc" = 0 ] || br_fail "the bridge failed with session info"
grep -q "^key=$PH$" "$T/good.out" || br_fail "CMD's ANTHROPIC_API_KEY is not the placeholder"
case "$out" in *"$KEY"*) br_fail "the caller's key reached CMD" ;; esac
grep -qF "session b'GET /.well-known/postern/session HTTP/1.1\\r\\nHost: postern\\r\\nConnection: close\\r\\n\\r\\n'" \
	"$T/proxy.log" || br_fail "the session request is not the protocol's: $(cat "$T/proxy.log")"
bundle=$(sed -n 's/^bundle=//p' "$T/good.out")
[ -n "$bundle" ] || br_fail "no bundle file in the sandbox"
case "$bundle" in "$T/good/postern-ca."*/ca-bundle.pem) ;; *) br_fail "bundle not under TMPDIR: $bundle" ;; esac
for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO \
    PIP_CERT CARGO_HTTP_CAINFO AWS_CA_BUNDLE; do
	grep -qx "var $v=$bundle" "$T/good.out" || br_fail "$v does not name the bundle"
done
grep -qx 'bundle_mode=644 dir_mode=755' "$T/good.out" || br_fail "bundle or directory mode wrong"
# The system roots, whole, then the CA.
cat "$ROOTS" "$T/ca.pem" > "$T/want.pem"
cmp -s "$T/want.pem" "$T/good/bundle.copy" || br_fail "the bundle is not $ROOTS followed by the CA"
grep -q '^curl_bundle=hello over tls$' "$T/good.out" ||
	br_fail "curl with only CURL_CA_BUNDLE did not reach https://tls.test"
grep -q '^curl_none=.*rc=60' "$T/good.out" ||
	br_fail "curl without the bundle did not fail verification (the test proves nothing)"
grep -q '^python_ssl=hello over tls$' "$T/good.out" ||
	br_fail "python ssl with only SSL_CERT_FILE did not reach https://tls.test"
[ ! -e "$bundle" ] && [ ! -e "${bundle%/*}" ] || br_fail "the bundle outlived the bridge"
br_pass "placeholder instead of the key; bundle of roots + CA; curl and python trust it"

# --- An older proxy: 400.  Nothing changes but a notice.
echo 400 > "$T/mode"
run old
[ "$rc" = 0 ] || br_fail "the bridge failed against an older proxy"
grep -q "^key=$KEY$" "$T/old.out" || br_fail "without session info, --env no longer passes the key"
grep -q '^var [A-Z_]*=.' "$T/old.out" && br_fail "a certificate variable was set without session info"
grep -q 'answers the session request with 400' "$T/old.out" || br_fail "no notice about the 400"
[ -e "$T/old/cmd.ran" ] || br_fail "CMD did not run"
ls "$T/old" | grep -q postern-ca && br_fail "a bundle directory was made without a CA"
br_pass "an older proxy (400): CMD runs as before, with a notice"

# --- A malformed body: the bridge does not start, CMD never runs.
echo bad > "$T/mode"
run bad
[ "$rc" = 2 ] || br_fail "the bridge did not refuse a malformed body (exit $rc)"
grep -q "error: .*session info is malformed: an env line's VALUE has a space" "$T/bad.out" ||
	br_fail "no clear error for the malformed body"
grep -q 'not starting' "$T/bad.out" || br_fail "no 'not starting'"
[ -e "$T/bad/cmd.ran" ] && br_fail "CMD ran despite the malformed session info"
ls "$T/bad" | grep -q postern-ca && br_fail "a bundle directory was left behind"
br_pass "a malformed body stops the bridge before CMD"

# --- --no-session-info: not asked.
echo good > "$T/mode"
: > "$T/proxy.log"
run skip --no-session-info
[ "$rc" = 0 ] || br_fail "the bridge failed with --no-session-info"
grep -q '^session' "$T/proxy.log" && br_fail "--no-session-info still asked the proxy"
grep -q "^key=$KEY$" "$T/skip.out" || br_fail "--no-session-info changed the key"
grep -q '^var [A-Z_]*=.' "$T/skip.out" && br_fail "--no-session-info set a certificate variable"
br_pass "--no-session-info asks nothing and exports nothing"
exit 0
