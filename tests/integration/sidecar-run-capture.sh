#!/bin/sh
# sidecar-run-capture.sh: transparent capture in postern-sidecar run (issue
# 16): programs that ignore HTTP_PROXY (Node 20's fetch, curl --noproxy,
# Python's http.client) reach an allowed host by name through the bridge's
# DNS stub and its 198.18.0.0/15 listeners, judged by the proxy like any
# CONNECT (the SNI check included); a name never allowed gets NXDOMAIN at
# once, and run prints the refusal with its --allow hint; MX and TXT get an
# empty answer and nothing is forwarded to any DNS server; a synthetic
# address on a port no rule allows, or one never handed out, is refused at
# once (a reset, not a timeout); a typed real IP still goes nowhere.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v getent >/dev/null 2>&1 || skip "getent is not installed"
[ -f /etc/resolv.conf ] || skip "no /etc/resolv.conf to bind over"

XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
cat >"$WORLD_DIR/probe.py" <<'PY'
# probe.py: what a program without proxy support sees in the sandbox.
import http.client, socket, ssl, struct, sys, time

def resolve(name):
    try:
        return socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except socket.gaierror as e:
        return "gaierror %d" % e.errno

def connect(host, port):
    t = time.monotonic()
    try:
        socket.create_connection((host, port), timeout=5).close()
        r = "OK"
    except OSError as e:
        r = "errno %d" % e.errno
    return "%s in %s" % (r, "under 1s" if time.monotonic() - t < 1 else "over 1s")

def query(name, qtype):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    for l in name.encode().split(b"."):
        q += bytes([len(l)]) + l
    q += b"\0" + struct.pack(">HH", qtype, 1)
    s.sendto(q, ("127.0.0.1", 53))
    a = s.recv(512)
    return "rcode %d answers %d" % (a[3] & 15, struct.unpack(">H", a[6:8])[0])

def tcp_query(name):
    q = struct.pack(">HHHHHH", 0x4343, 0x0100, 1, 0, 0, 0)
    for l in name.encode().split(b"."):
        q += bytes([len(l)]) + l
    q += b"\0" + struct.pack(">HH", 1, 1)
    s = socket.create_connection(("127.0.0.1", 53), timeout=3)
    s.sendall(struct.pack(">H", len(q)) + q)
    a = b""
    while len(a) < 2 or len(a) < 2 + struct.unpack(">H", a[:2])[0]:
        b = s.recv(512)
        if not b:
            break
        a += b
    a = a[2:]
    return "rcode %d answers %d addr %s" % (a[3] & 15, struct.unpack(">H", a[6:8])[0],
        socket.inet_ntoa(a[-4:]))

print("resolve allowed", resolve("allowed.test"))
print("tcp", tcp_query("allowed.test"))
print("resolve again", resolve("allowed.test"))
print("resolve denied", resolve("denied.test"))
c = http.client.HTTPConnection("allowed.test", 80, timeout=5)
c.request("GET", "/py")
print("python status", c.getresponse().status)
print("mx", query("allowed.test", 15))
print("txt", query("allowed.test", 16))
print("aaaa", query("allowed.test", 28))
print("port 8443", connect("allowed.test", 8443))
print("unknown synthetic", connect("198.18.200.7", 443))
print("real ip", connect(sys.argv[1], 80))
# The SNI check applies through capture: a TLS hello naming another host
# on allowed.test's address is cut.
ctx = ssl.create_default_context(cafile=sys.argv[2])
ctx.check_hostname = False
try:
    with socket.create_connection(("allowed.test", 443), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="other.test") as t:
            print("sni", "handshake completed")
except (OSError, ssl.SSLError) as e:
    print("sni", "refused")
PY
cp "$WORLD_CA" "$WORLD_DIR/ca.pem"
chmod 644 "$WORLD_DIR/ca.pem" "$WORLD_DIR/probe.py"
dns_log_reset
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow "allowed.test private" \
	--allow "allowed.test:80 private" -- sh -c '
	python3 /dev/fd/4 "$1" /dev/fd/3
	node -e "fetch(\"http://allowed.test/node\").then(r => console.log(\"node\", r.status),
		e => console.log(\"node error\", e.cause ? e.cause.code : e.message))"
	curl -sS --noproxy "*" --max-time 10 -o /dev/null -w "curl %{http_code}\n" http://allowed.test/curl
	curl -sS --noproxy "*" --max-time 10 --cacert /dev/fd/3 https://allowed.test/tls | grep "^sni="
	getent hosts denied.test; echo "getent denied $?"
	head -n 2 /etc/resolv.conf | tail -n 1' sh "$WORLD_UP4" 2>"$WORLD_DIR/run.err" \
	3<"$WORLD_DIR/ca.pem" 4<"$WORLD_DIR/probe.py")
err=$(cat "$WORLD_DIR/run.err")
expect_match "^nameserver 127.0.0.1$" "$out" "CMD's /etc/resolv.conf names the stub"
expect_match "^resolve allowed 198\.1[89]\." "$out" "an allowed name resolves into 198.18.0.0/15"
a1=$(echo "$out" | sed -n 's/^resolve allowed //p')
expect_eq "resolve again $a1" "$(echo "$out" | grep '^resolve again')" "the same address twice"
expect_eq "tcp rcode 0 answers 1 addr $a1" "$(echo "$out" | grep '^tcp ')" \
	"the same answer over TCP (RFC 1035 §4.2.2)"
expect_match "^python status 200$" "$out" "Python's http.client (no proxy support) reaches it"
expect_match "^node 200$" "$out" "Node 20's fetch (no proxy support) reaches it"
expect_match "^curl 200$" "$out" "curl --noproxy '*' reaches it"
expect_match "^sni=allowed.test$" "$out" "HTTPS by name through capture"
expect_match "^resolve denied gaierror -2$" "$out" "a denied name: EAI_NONAME (NXDOMAIN)"
expect_match "^getent denied 2$" "$out" "getent hosts finds no denied name"
expect_match "refused DNS denied.test:443: host_not_allowed .*--allow 'denied.test'" "$err" \
	"run prints the refusal with its --allow hint"
expect_match "^mx rcode 0 answers 0$" "$out" "MX: an empty answer"
expect_match "^txt rcode 0 answers 0$" "$out" "TXT: an empty answer"
expect_match "^aaaa rcode 0 answers 0$" "$out" "AAAA: an empty answer (no IPv6 range)"
# The proxy resolves allowed.test for each CONNECT (real resolution stays
# there); nothing else of the sandbox's reaches the world's DNS server.
expect_eq "" "$(dns_queries | grep -Ev '^(A|AAAA) allowed.test$')" \
	"no MX, TXT or denied name reached the world's DNS server"
expect_match "^port 8443 errno 111 in under 1s$" "$out" \
	"a port no rule allows: connection refused at once"
expect_match "^unknown synthetic errno 111 in under 1s$" "$out" \
	"an address never handed out: connection refused at once"
expect_match "^real ip errno 101 in under 1s$" "$out" "a typed real IP goes nowhere (ENETUNREACH)"
expect_match "^sni refused$" "$out" "a TLS hello naming another host is refused through capture"
expect_match "sni_mismatch" "$err" "and run says it is the SNI check"
expect_eq 3 "$(upstream_count kind=http target~'^/(py|node|curl)$')" \
	"the upstream saw the three requests"
