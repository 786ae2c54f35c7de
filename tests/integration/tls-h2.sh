#!/bin/sh
# tls-h2: HTTP/2 through TLS termination with credential injection (issue
# 15: "HTTP/1.1 and HTTP/2 both work through termination ... Other agent
# gateways lose HTTP/2 when they inject, and gRPC breaks: do not").  An h2
# upstream (nghttpd, certificate from the test CA, logging every header it
# receives with -v) behind a terminated host; curl --http2 through the
# proxy trusting the session CA.  ALPN h2 end to end; the real credential
# and not the placeholder upstream; per stream: 421 on a fronted
# :authority, secret_misdirected, path rules, each with its audit line;
# 20 concurrent streams on one connection; a large answer whole; trailers;
# a client that offers only http/1.1 is not given an upstream that chose
# h2, and an http/1.1-only upstream gives an h2 client HTTP/1.1.  Per
# stream as over HTTP/1.1: the value only on a stream that carries the
# placeholder (or inject_when = always), TRACE and TRACK refused,
# accept-encoding identity, no range, if-range or sec-websocket-extensions.
. "$top_srcdir/tests/integration/lib/world.sh"
for c in nghttpd curl; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (Debian: nghttp2-server, curl)"
done
curl -V | grep -q '^Features:.* HTTP2' || skip "this curl has no HTTP/2"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

VALUE="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
TOKEN="ghp_$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_KEY="$VALUE" PX_TEST_TOK="$TOKEN"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

# The h2 upstream: nghttpd on allowed.test:8443 and api.example.test:8443
# (the world's certificate names both), serving DOCS.
docs="$WORLD_DIR/docs"
mkdir -p "$docs/v1" "$docs/v2"
echo "h2 answer" >"$docs/inj"
echo "v1 ok" >"$docs/v1/ok"
echo "v2" >"$docs/v2/x"
echo before >"$docs/before"
echo after >"$docs/after"
for i in $(seq 1 20); do echo "stream $i" >"$docs/p$i"; done
head -c 3000000 /dev/urandom >"$docs/big"
H2LOG="$WORLD_DIR/nghttpd.log"
ip netns exec "$WORLD_NS_UP" nghttpd -v -d "$docs" \
	-a "$WORLD_UP4" 8443 "$WORLD_KEY" "$WORLD_CERT" </dev/null >"$H2LOG" 2>&1 &

# An upstream that speaks both (ALPN h2 and http/1.1) and says which one the
# proxy's offer made it choose; it answers HTTP/1.1 only, and closes on h2.
cat >"$WORLD_DIR/dual.py" <<-'EOF'
	import socket, ssl, sys, threading
	cert, key, addr, log = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
	ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
	ctx.load_cert_chain(cert, key)
	ctx.set_alpn_protocols(["h2", "http/1.1"])
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind((addr, 8444))
	s.listen(16)
	def one(c):
	    try:
	        t = ctx.wrap_socket(c, server_side=True)
	        p = t.selected_alpn_protocol()
	        with open(log, "a") as f:
	            f.write("alpn=%s\n" % p)
	        if p == "h2":
	            t.close()
	            return
	        buf = b""
	        while b"\r\n\r\n" not in buf:
	            d = t.recv(4096)
	            if not d:
	                return
	            buf += d
	        body = ("alpn=%s\n" % p).encode()
	        t.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
	        t.close()
	    except Exception as e:
	        with open(log, "a") as f:
	            f.write("error %s\n" % e)
	while True:
	    c, _ = s.accept()
	    threading.Thread(target=one, args=(c,), daemon=True).start()
EOF
# An h2-only upstream that closes 0.5 s after a handshake without h2
# (nghttpd closes at once, which the proxy may see during the client's
# handshake or after it): on allowed.test:8446 the close always comes once
# the client's tunnel is open and before it asks.
cat >"$WORLD_DIR/late.py" <<-'EOF'
	import socket, ssl, sys, threading, time
	cert, key, addr = sys.argv[1], sys.argv[2], sys.argv[3]
	ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
	ctx.load_cert_chain(cert, key)
	ctx.set_alpn_protocols(["h2"])
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind((addr, 8446))
	s.listen(16)
	def one(c):
	    try:
	        t = ctx.wrap_socket(c, server_side=True)
	        time.sleep(0.5)
	        t.close()
	    except Exception:
	        pass
	while True:
	    c, _ = s.accept()
	    threading.Thread(target=one, args=(c,), daemon=True).start()
EOF
ip netns exec "$WORLD_NS_UP" "$WORLD_PYTHON" "$WORLD_DIR/late.py" "$WORLD_CERT" "$WORLD_KEY" \
	"$WORLD_UP4" </dev/null >"$WORLD_DIR/late.out" 2>&1 &

DUALLOG="$WORLD_DIR/dual.log"
: >"$DUALLOG"
ip netns exec "$WORLD_NS_UP" "$WORLD_PYTHON" "$WORLD_DIR/dual.py" "$WORLD_CERT" "$WORLD_KEY" \
	"$WORLD_UP4" "$DUALLOG" </dev/null >"$WORLD_DIR/dual.out" 2>&1 &

# A gRPC-like h2 upstream (python3-h2) on allowed.test:8445: it logs the
# request's fields, reads the whole request body, then answers in five
# DATA frames 0.3 s apart and ends with trailers (grpc-status).
GRPCLOG="$WORLD_DIR/grpc.log"
: >"$GRPCLOG"
if "$WORLD_PYTHON" -c 'import h2' 2>/dev/null; then
	HAVE_H2PY=1
	cat >"$WORLD_DIR/grpc.py" <<-'EOF'
		import socket, ssl, sys, threading, time
		import h2.config, h2.connection, h2.events
		cert, key, addr, log = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
		ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
		ctx.load_cert_chain(cert, key)
		ctx.set_alpn_protocols(["h2"])
		def note(line):
		    with open(log, "a") as f:
		        f.write(line + "\n")
		def serve(c):
		    t = ctx.wrap_socket(c, server_side=True)
		    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(
		        client_side=False, header_encoding="utf-8"))
		    conn.initiate_connection()
		    t.sendall(conn.data_to_send())
		    body = {}
		    while True:
		        data = t.recv(65536)
		        if not data:
		            return
		        for ev in conn.receive_data(data):
		            if isinstance(ev, h2.events.RequestReceived):
		                body[ev.stream_id] = b""
		                for n, v in ev.headers:
		                    note("hdr %s: %s" % (n, v))
		            elif isinstance(ev, h2.events.DataReceived):
		                body[ev.stream_id] += ev.data
		                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
		            elif isinstance(ev, h2.events.StreamEnded):
		                sid = ev.stream_id
		                note("body %d" % len(body[sid]))
		                conn.send_headers(sid, [(":status", "200"), ("content-type", "application/grpc")])
		                for i in range(5):
		                    conn.send_data(sid, b"piece %d\n" % i)
		                    t.sendall(conn.data_to_send())
		                    time.sleep(0.3)
		                conn.send_headers(sid, [("grpc-status", "0"),
		                    ("grpc-message", "got %d bytes" % len(body[sid]))], end_stream=True)
		        t.sendall(conn.data_to_send())
		s = socket.socket()
		s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		s.bind((addr, 8445))
		s.listen(16)
		while True:
		    c, _ = s.accept()
		    threading.Thread(target=serve, args=(c,), daemon=True).start()
	EOF
	ip netns exec "$WORLD_NS_UP" "$WORLD_PYTHON" "$WORLD_DIR/grpc.py" "$WORLD_CERT" "$WORLD_KEY" \
		"$WORLD_UP4" "$GRPCLOG" </dev/null >"$WORLD_DIR/grpc.out" 2>&1 &
else
	HAVE_H2PY=
fi

conf="$WORLD_DIR/postern.ini"
# write_conf [SECRETS]: the config; SECRETS is the session's secrets =.
write_conf() {
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private, allowed.test:8443 private, allowed.test:8444 private
		allow_hosts = allowed.test:8445 private, allowed.test:8446 private
		allow_hosts = api.example.test:8443/v1/ private, other.test private
		secrets = ${1:-k, g, a}
		[secret k]
		from_env = PX_TEST_KEY
		inject = allowed.test:8443 header x-api-key
		inject = allowed.test:8444 header x-api-key
		inject = allowed.test:8445 header x-api-key
		inject = allowed.test:8446 header x-api-key
		inject = allowed.test header x-api-key
		[secret g]
		from_env = PX_TEST_TOK
		inject = api.example.test:8443 basic x-access-token
		[secret a]
		from_env = PX_TEST_KEY
		placeholder_env = PX_A
		inject_when = always
		inject = allowed.test:8443 header x-always
	EOF
} >"$conf.tmp"
mv "$conf.tmp" "$conf"
}
write_conf
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# Until the upstreams listen (5 s at most).
in_up "$WORLD_PYTHON" -c '
import socket, sys, time
for i in range(100):
    try:
        for p in sys.argv[2:]:
            socket.create_connection((sys.argv[1], int(p)), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
' "$WORLD_UP4" 8443 8444 8446 ${HAVE_H2PY:+8445}

CA="$state/ca/default.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH_K=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_KEY //p')
PH_G=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_TOK //p')
[ -n "$PH_K" ] && [ -n "$PH_G" ] || die "no placeholders"

h2c() { in_px curl -sS --max-time 20 --http2 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
# up_saw ERE MESSAGE / up_never ERE MESSAGE: a request header field nghttpd
# received matches ERE, or none does (-v logs each one as "recv (stream_id=N)
# NAME: VALUE", with ", sensitive" after N when it came never indexed).
UPF='recv \(stream_id=[0-9]+(, sensitive)?\) '
up_saw() { expect_match "$UPF$1" "$(cat "$H2LOG")" "$2"; }
up_never() { expect_no_match "$UPF$1" "$(cat "$H2LOG")" "$2"; }

# 1. ALPN h2 end to end, and the credential injected on the stream.
out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' -H "x-api-key: $PH_K" \
	https://allowed.test:8443/inj)
expect_eq "2 200" "$out" "curl --http2 through the terminated tunnel: HTTP/2, 200"
up_saw "x-api-key: $VALUE$" "nghttpd received the real credential"
expect_match "sensitive\) x-api-key: $VALUE$" "$(cat "$H2LOG")" \
	"never indexed by HPACK (RFC 7541 §7.1.3)"
expect_no_match "$PH_K" "$(cat "$H2LOG")" "and not the placeholder"
expect_audit "the stream has one line: proto h2, decision, rule, status, secret" event=request \
	method=GET host=allowed.test port=8443 path=/inj tls=terminated secret=k decision=allow \
	reason=allowed rule~. rule_at~:[0-9]+$ proto=h2 status=200
expect_no_audit "and no second line for it (one line per request)" event=decision \
	path=/inj port=8443
expect_match "^[1-9]" "$(metrics_get postern_secret_injections_total session=default secret=k)" \
	"/metrics counts the injection over h2"

# Basic auth over h2 (an authorization edit), on a path-narrowed host.
out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' -u "x-access-token:$PH_G" \
	https://api.example.test:8443/v1/ok)
expect_eq "2 200" "$out" "basic over h2: 200"
basic=$(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)
up_saw "authorization: Basic $basic$" "nghttpd received authorization: Basic"

# 2. Per stream on one connection: a path outside the rule is 403, the next
# stream on the same connection still goes.
out=$(h2c -w '%{http_code} %{num_connects}\n' -o /dev/null https://api.example.test:8443/v2/x \
	-o /dev/null https://api.example.test:8443/v1/ok)
expect_eq "403 1
200 0" "$out" "path rule per stream: /v2/x 403, then /v1/ok 200 on the same connection"
expect_audit "path_not_allowed on the stream, audited" path=/v2/x reason=path_not_allowed \
	tls=terminated
up_never ":path: /v2/x" "the refused path reached no upstream"

# 3. A fronted :authority is 421 on that stream.
out=$(h2c -i -H "Host: other.test" https://allowed.test:8443/front)
expect_match "^HTTP/2 421" "$out" "a :authority naming another host: 421"
expect_match "^x-postern-reason: misdirected_request" "$out" "reason misdirected_request"
expect_audit "421 audited" reason=misdirected_request path=/front port=8443
up_never ":path: /front" "the fronted stream reached no upstream"

# 4. A placeholder sent to a host its secret is not bound to: 403.
out=$(h2c -i -H "x-api-key: $PH_K" https://api.example.test:8443/v1/steal)
expect_match "^HTTP/2 403" "$out" "k's placeholder to api.example.test over h2: 403"
expect_match "^x-postern-reason: secret_misdirected" "$out" "reason secret_misdirected"
expect_audit "misdirected over h2 audited" reason=secret_misdirected host=api.example.test \
	path=/v1/steal
up_never ":path: /v1/steal" "nothing misdirected reached upstream"
expect_eq 1 "$(metrics_get postern_secret_misdirected_total session=default secret=k)" \
	"/metrics: one misdirected attempt"

# 5. 20 concurrent streams on one connection, each injected.
before=$(audit_count event=decision method=CONNECT port=8443)
got0=$(grep -Ec "${UPF}x-api-key: $VALUE$" "$H2LOG")
urls=
for i in $(seq 1 20); do urls="$urls https://allowed.test:8443/p$i"; done
# shellcheck disable=SC2086
out=$(h2c --parallel --parallel-max 20 -H "x-api-key: $PH_K" $urls)
expect_eq 20 "$(printf '%s\n' "$out" | grep -c '^stream [0-9]*$')" "20 parallel streams answered"
expect_eq $((before + 1)) "$(audit_count event=decision method=CONNECT port=8443)" \
	"over one tunnel"
expect_eq 20 "$(audit_count event=request proto=h2 secret=k path~^/p[0-9]+$)" \
	"20 request lines, each injected"
expect_eq $((got0 + 20)) "$(grep -Ec "${UPF}x-api-key: $VALUE$" "$H2LOG")" \
	"nghttpd got the credential on every stream"

# 6. A large answer (beyond every flow-control window) arrives whole.
expect_eq "$(sha256sum <"$docs/big" | cut -d' ' -f1)" \
	"$(h2c https://allowed.test:8443/big | sha256sum | cut -d' ' -f1)" \
	"3 MB over h2 arrive intact"

# 7. A gRPC-like stream (python3-h2 on both ends): a POST whose body is
# all sent, an answer streamed in pieces as the upstream sends them (not
# buffered), and trailers after it.
if [ -n "$HAVE_H2PY" ]; then
	out=$(in_px env CA="$CA" PH="$PH_K" "$WORLD_PYTHON" -c '
import os, socket, ssl, time
import h2.config, h2.connection, h2.events
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:8445 HTTP/1.1\r\nHost: allowed.test:8445\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
ctx = ssl.create_default_context(cafile=os.environ["CA"])
ctx.set_alpn_protocols(["h2"])
t = ctx.wrap_socket(s, server_hostname="allowed.test")
print("alpn", t.selected_alpn_protocol())
conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True,
    header_encoding="utf-8"))
conn.initiate_connection()
sid = conn.get_next_available_stream_id()
conn.send_headers(sid, [(":method", "POST"), (":scheme", "https"),
    (":authority", "allowed.test:8445"), (":path", "/pkg.Echo/Stream"),
    ("content-type", "application/grpc"), ("te", "trailers"), ("x-api-key", os.environ["PH"])])
conn.send_data(sid, b"\0\0\0\0\x05hello", end_stream=True)
t.sendall(conn.data_to_send())
times, done = [], False
while not done:
    data = t.recv(65536)
    if not data:
        break
    for ev in conn.receive_data(data):
        if isinstance(ev, h2.events.ResponseReceived):
            print("status", dict(ev.headers)[":status"])
        elif isinstance(ev, h2.events.DataReceived):
            times.append(time.monotonic())
            conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.TrailersReceived):
            for n, v in ev.headers:
                print("trailer %s: %s" % (n, v))
        elif isinstance(ev, h2.events.StreamEnded):
            done = True
    t.sendall(conn.data_to_send())
print("pieces", len(times))
print("spread %.1f" % (times[-1] - times[0] if times else 0))
' 2>&1)
	expect_match "^alpn h2$" "$out" "grpc-like: ALPN h2"
	expect_match "^status 200$" "$out" "grpc-like: 200"
	expect_match "^trailer grpc-status: 0$" "$out" "grpc-like: the trailers arrive (grpc-status)"
	expect_match "^trailer grpc-message: got 10 bytes$" "$out" "and the whole request body went up"
	expect_match "^pieces 5$" "$out" "grpc-like: five DATA frames"
	expect_match "^spread (0\.[89]|[1-9])" "$out" \
		"streamed: the pieces arrive as they are sent, over >= 0.8 s, not at once"
	expect_match "^hdr x-api-key: $VALUE$" "$(cat "$GRPCLOG")" "grpc-like: the credential injected"
	expect_match "^hdr te: trailers$" "$(cat "$GRPCLOG")" "te: trailers passes (RFC 9113 §8.2.2)"
	expect_audit "grpc-like: its request line" event=request path=/pkg.Echo/Stream proto=h2 \
		status=200 secret=k bytes_up=10
else
	diag "python3-h2 is not installed: the gRPC-like stream is not tried"
fi

# 8. A reload that removes k: from the next stream on, on the same h2
# connection, k is no longer injected (the snapshot in force decides each
# stream, as it does each HTTP/1.1 request).
if [ -n "$HAVE_H2PY" ]; then
	in_px env CA="$CA" PH="$PH_K" SYNC="$WORLD_DIR/sync" "$WORLD_PYTHON" -c '
import os, socket, ssl, time
import h2.config, h2.connection, h2.events
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:8443 HTTP/1.1\r\nHost: allowed.test:8443\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
ctx = ssl.create_default_context(cafile=os.environ["CA"])
ctx.set_alpn_protocols(["h2"])
t = ctx.wrap_socket(s, server_hostname="allowed.test")
conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True,
    header_encoding="utf-8"))
conn.initiate_connection()
def get(path):
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "GET"), (":scheme", "https"),
        (":authority", "allowed.test:8443"), (":path", path),
        ("x-api-key", os.environ["PH"])], end_stream=True)
    t.sendall(conn.data_to_send())
    while True:
        data = t.recv(65536)
        if not data:
            return "eof"
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.ResponseReceived):
                print(path, dict(ev.headers)[":status"])
            elif isinstance(ev, h2.events.DataReceived):
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                t.sendall(conn.data_to_send())
                return
        t.sendall(conn.data_to_send())
get("/before")
open(os.environ["SYNC"] + ".go", "w").close()
for i in range(200):
    if os.path.exists(os.environ["SYNC"] + ".done"):
        break
    time.sleep(0.05)
get("/after")
' >"$WORLD_DIR/keep.out" 2>&1 &
	kpid=$!
	i=0
	while [ ! -e "$WORLD_DIR/sync.go" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	write_conf g
	proxy_reload
	wait_generation 2 3 >/dev/null || fail "the reload was not taken"
	touch "$WORLD_DIR/sync.done"
	wait $kpid
	out=$(cat "$WORLD_DIR/keep.out")
	expect_match "^/before 200$" "$out" "reload: the stream before it answered"
	expect_match "^/after 200$" "$out" "reload: the stream after it, on the same connection, answered"
	expect_audit "the stream before the reload was injected" event=request path=/before proto=h2 \
		secret=k
	expect_audit "the stream after the reload has its line, by the new generation" \
		event=request path=/after proto=h2 generation=2
	expect_no_audit "and no secret on it" event=request path=/after secret=k
	up_saw "x-api-key: $PH_K$" "after the reload the placeholder went up as it was, not the value"
	write_conf
	proxy_reload
	wait_generation 3 3 >/dev/null || fail "the second reload was not taken"
else
	diag "python3-h2 is not installed: the reload on an open h2 connection is not tried"
fi

# since N: the nghttpd log lines after its first N.
since() { tail -n +$(($1 + 1)) "$H2LOG"; }

# 9. Only a stream that carries the placeholder where the binding puts the
# value gets it; inject_when = always (secret a) on every stream.
n0=$(wc -l <"$H2LOG")
out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' https://allowed.test:8443/p1 \
	-H "x-api-key: mine")
expect_eq "2 200" "$out" "a stream without the placeholder: 200"
expect_no_match "$UPF.*$VALUE$" "$(since $n0 | grep -v x-always)" "it goes up without the value"
expect_match "${UPF}x-api-key: mine$" "$(since $n0)" "its own x-api-key as sent"
expect_match "${UPF}x-always: $VALUE$" "$(since $n0)" "inject_when = always: the value without the placeholder"
expect_audit "its line names the secret always put on" event=request proto=h2 path=/p1 secret=a
n0=$(wc -l <"$H2LOG")
h2c -o /dev/null -u "someone:wrong" https://api.example.test:8443/v1/ok
expect_match "${UPF}authorization: Basic $(printf 'someone:wrong' | base64 -w0)$" "$(since $n0)" \
	"basic over h2: another password goes up as sent"

# 10. TRACE and TRACK to a host a secret is bound to: 403 on that stream.
for m in TRACE TRACK; do
	out=$(h2c -i -X $m -H "x-api-key: $PH_K" https://allowed.test:8443/$m)
	expect_match "^HTTP/2 403" "$out" "$m over h2: 403"
	expect_match "^x-postern-reason: method_not_allowed" "$out" "$m over h2: reason method_not_allowed"
	expect_audit "$m over h2: audited" path=/$m port=8443 reason=method_not_allowed tls=terminated
	up_never ":path: /$m" "$m over h2 reached no upstream"
done
out=$(h2c -i -H "x-http-method-override: TRACE" https://allowed.test:8443/override)
expect_match "^HTTP/2 403" "$out" "a method override that says TRACE, over h2: 403"
up_never ":path: /override" "it reached no upstream"

# 11. Each stream to a host a secret is bound to: accept-encoding
# identity; no range, if-range or sec-websocket-extensions.
n0=$(wc -l <"$H2LOG")
out=$(h2c -o /dev/null -w '%{http_code}\n' -H "accept-encoding: gzip, br" -H "range: bytes=0-3" \
	-H 'if-range: "x"' -H "sec-websocket-extensions: permessage-deflate" -H "x-api-key: $PH_K" \
	https://allowed.test:8443/inj)
expect_eq 200 "$out" "a narrowed stream: 200"
expect_match "${UPF}accept-encoding: identity$" "$(since $n0)" "accept-encoding goes up as identity"
expect_no_match "${UPF}accept-encoding: [^i]" "$(since $n0)" "and only as identity"
expect_no_match "${UPF}(range|if-range|sec-websocket-extensions):" "$(since $n0)" \
	"no range, if-range or sec-websocket-extensions"
expect_match "${UPF}x-api-key: $VALUE$" "$(since $n0)" "(the narrowed stream was injected)"

# 12. ALPN follows the upstream and the client.  An upstream that offers h2
# and http/1.1: a client that offers only http/1.1 gets it, and the
# upstream was never offered h2.
out=$(in_px curl -sS --max-time 10 --http1.1 -x http://127.0.0.1:3128 --cacert "$CA" \
	-w '%{http_version}\n' https://allowed.test:8444/one)
expect_match "^alpn=http/1.1$" "$out" "an http/1.1-only client: the h2-capable upstream chose http/1.1"
expect_match "^1.1$" "$out" "and the client speaks HTTP/1.1"
expect_no_match "^alpn=h2" "$(cat "$DUALLOG")" "the upstream was never offered h2 for it"
# An upstream that speaks h2 only (nghttpd) and a client that offers only
# http/1.1: the proxy does not translate; each request is a 502 saying so.
out=$(in_px curl -sS --max-time 10 --http1.1 -x http://127.0.0.1:3128 --cacert "$CA" -i \
	https://allowed.test:8443/inj)
expect_match "^HTTP/1.1 502" "$out" "an http/1.1-only client to an h2-only upstream: 502"
expect_match "^X-Postern-Reason: bad_upstream_response" "$out" "with reason bad_upstream_response"
expect_match "the client must offer h2" "$out" "and a text that says what to do"
# The same when the h2-only upstream's close comes after the client's
# tunnel is open and before it asks (late.py on 8446, a client that waits
# a second): the first request still gets the 502 that says why, not a
# closed tunnel.
out=$(in_px env CA="$CA" "$WORLD_PYTHON" -c '
import os, socket, ssl, time
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:8446 HTTP/1.1\r\nHost: allowed.test:8446\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
ctx = ssl.create_default_context(cafile=os.environ["CA"])
ctx.set_alpn_protocols(["http/1.1"])
t = ctx.wrap_socket(s, server_hostname="allowed.test")
time.sleep(1)
t.sendall(b"GET /inj HTTP/1.1\r\nHost: allowed.test:8446\r\n\r\n")
out = b""
try:
    while True:
        b = t.recv(65536)
        if not b:
            break
        out += b
except (ssl.SSLError, OSError):
    pass
print(out.decode("utf-8", "replace"))
' 2>&1)
expect_match "^HTTP/1.1 502" "$out" "a client that asks after the h2-only upstream closed: 502"
expect_match "the client must offer h2" "$out" "and the text that says what to do"
# The world's upstream on 443 speaks http/1.1 only: an h2 client gets 1.1.
out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' -H "x-api-key: $PH_K" https://allowed.test/h1)
expect_eq "1.1 200" "$out" "curl --http2 to an http/1.1-only upstream: HTTP/1.1, 200"

# The value is nowhere the proxy writes.
all="$(cat "$WORLD_DIR/proxy.out")
$(cat "$PROXY_LOG")
$(admin_get /metrics)"
expect_no_match "$VALUE" "$all" "the value is in no log, audit line or metric"
expect_no_match "$PH_K" "$(cat "$PROXY_LOG")" "no placeholder in the audit log"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
