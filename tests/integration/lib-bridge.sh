# tests/integration/lib-bridge.sh: shared helpers for the bridge-*.sh tests.
#
# Sourced, not run.  Gives each test a private temporary directory, a
# cleanup trap that ends every process the test started and removes every
# file, a way into a fresh network namespace, a small HTTP "proxy" on a UNIX
# socket outside the namespace (python3, stands in for postern-proxy), an
# upstream HTTP server on the host's loopback behind it, and a test client.
# Traffic only ever goes to loopback, inside the namespace or on the host.

set -u

: "${top_builddir:=.}"
: "${top_srcdir:=.}"
BRIDGE="$top_builddir/postern-bridge"
BR_PIDS=""
BR_T=""

br_skip() { echo "SKIP: $*"; exit 77; }
br_fail() { echo "FAIL: $*"; exit 1; }
br_pass() { echo "PASS: $*"; }

br_cleanup() {
	local p
	for p in $BR_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $BR_PIDS; do
		wait "$p" 2>/dev/null
	done
	[ -n "$BR_T" ] && rm -rf "$BR_T"
}

# br_ns CMD...: run CMD in a new network namespace (lo down).  As root a plain
# "unshare -n"; otherwise inside a user namespace that maps us to root.
br_ns() {
	if [ "$(id -u)" = 0 ]; then
		unshare -n "$@"
	else
		unshare -rn "$@"
	fi
}

# $BR_ROOT: "--allow-root" when the tests run as root.  There br_ns is a
# plain "unshare -n" in the host's user namespace, where the bridge refuses
# to run CMD as the host's uid 0; these tests are about relaying, signals
# and processes, not identity (bridge-root.sh and the recipe tests are), so
# they say --allow-root.  As a user, "unshare -rn" maps them to their own
# uid and nothing is needed.
if [ "$(id -u)" = 0 ]; then
	BR_ROOT=--allow-root
	export BR_ROOT
else
	BR_ROOT=
fi

# $BR_NS CMD...: br_ns as a command.  $BR_PIDNS CMD...: like br_ns, also in
# a new PID namespace with its own /proc, so that CMD (the bridge) is PID 1
# there.  Commands, not functions, so that they work after "env -i" and "sh
# -c", and $! is unshare's own pid.
if [ "$(id -u)" = 0 ]; then
	BR_NS="unshare -n"
	BR_PIDNS="unshare -n -p -f -m --mount-proc"
else
	BR_NS="unshare -rn"
	BR_PIDNS="unshare -rn -p -f -m --mount-proc"
fi

# br_ns_bg CMD...: br_ns in the background; BG_PID is CMD's own pid (unshare
# without -f execs CMD), so signals sent to it reach CMD, not a subshell.
br_ns_bg() {
	if [ "$(id -u)" = 0 ]; then
		unshare -n "$@" &
	else
		unshare -rn "$@" &
	fi
	BG_PID=$!
	BR_PIDS="$BR_PIDS $BG_PID"
}

br_init() {
	[ -x "$BRIDGE" ] || br_fail "$BRIDGE not built"
	command -v python3 >/dev/null || br_skip "python3 is not installed"
	command -v unshare >/dev/null || br_skip "unshare (util-linux) is not installed"
	br_ns true 2>/dev/null ||
		br_skip "cannot create a network namespace (need root or unprivileged user namespaces)"
	BR_T=$(mktemp -d /tmp/postern-bridge-test.XXXXXX) || br_fail "mktemp"
	chmod 755 "$BR_T"
	trap br_cleanup EXIT
	trap 'exit 1' INT TERM HUP
	br_write_python
}

# br_wait_file PATH [TENTHS]: wait until PATH exists (default 5 s).
br_wait_file() {
	local i=0 max=${2:-50}
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -gt "$max" ] && return 1
		sleep 0.1
	done
	return 0
}

# br_start_upstream: a plain HTTP server on 127.0.0.1 (host namespace) with
# $BR_T/www/hello.txt; sets UP_PORT.
br_start_upstream() {
	mkdir -p "$BR_T/www"
	echo "hello from upstream" > "$BR_T/www/hello.txt"
	python3 "$BR_T/upstream.py" "$BR_T/www" "$BR_T/up.port" 2>>"$BR_T/upstream.log" &
	BR_PIDS="$BR_PIDS $!"
	br_wait_file "$BR_T/up.port" || br_fail "upstream did not start"
	UP_PORT=$(cat "$BR_T/up.port")
}

# br_start_proxy SOCK: the test proxy on UNIX socket SOCK, forwarding to
# the upstream (UP_PORT, or nothing when unset).  Sets PROXY_PID.
br_start_proxy() {
	python3 "$BR_T/proxy.py" "$1" "${UP_PORT:-0}" "$BR_T/proxy.log" 2>>"$BR_T/proxy.err" &
	PROXY_PID=$!
	BR_PIDS="$BR_PIDS $PROXY_PID"
	br_wait_file "$1" || br_fail "test proxy did not start"
}

br_write_python() {
	# lo's interface flags (SIOCGIFFLAGS), without iproute2 or sysfs (which
	# shows the namespace of whoever mounted it).
	cat > "$BR_T/loflags.py" <<'EOF'
import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r = fcntl.ioctl(s, 0x8913, struct.pack("16sH", b"lo", 0))
print(struct.unpack("16sH", r[:18])[1])
EOF
	cat > "$BR_T/upstream.py" <<'EOF'
import http.server, os, sys, functools
root, portfile = sys.argv[1], sys.argv[2]
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
        functools.partial(H, directory=root))
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
EOF
	cat > "$BR_T/proxy.py" <<'EOF'
# A stand-in for postern-proxy on a UNIX socket: numbers its connections,
# forwards CONNECT and absolute-form requests to the upstream on the host's
# loopback, and answers a few origin-form test paths itself.
import os, socket, sys, threading, time, zlib
path, up_port, logpath = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
count = 0
block = os.urandom(1 << 20)

def log(line):
    with lock:
        with open(logpath, "a") as f:
            f.write(line + "\n")

def read_head(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None, b""
        buf += d
        if len(buf) > 65536:
            return None, b""
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode("latin-1").split("\r\n"), rest

def pump(a, b):
    try:
        while True:
            d = a.recv(1 << 20)
            if not d:
                break
            b.sendall(d)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass

def relay(c, u, first=b""):
    if first:
        u.sendall(first)
    t = threading.Thread(target=pump, args=(u, c), daemon=True)
    t.start()
    pump(c, u)
    t.join()

def reply(c, n, body, code="200 OK"):
    c.sendall(("HTTP/1.1 %s\r\nContent-Length: %d\r\nX-Conn: %d\r\n"
               "Connection: close\r\n\r\n" % (code, len(body), n)).encode() + body)

def handle(c, n):
    try:
        lines, rest = read_head(c)
        if lines is None:
            return
        method, target, _ = lines[0].split(" ", 2)
        if method == "CONNECT":
            u = socket.create_connection(("127.0.0.1", up_port))
            c.sendall(b"HTTP/1.1 200 Connection established\r\nX-Conn: %d\r\n\r\n" % n)
            relay(c, u, rest)
            u.close()
        elif target.startswith("http://"):
            pathpart = "/" + target[7:].split("/", 1)[1] if "/" in target[7:] else "/"
            hdrs = [h for h in lines[1:] if not h.lower().startswith(("connection:", "proxy-"))]
            head = "\r\n".join(["%s %s HTTP/1.1" % (method, pathpart)] + hdrs +
                               ["Connection: close", "", ""]).encode()
            u = socket.create_connection(("127.0.0.1", up_port))
            relay(c, u, head + rest)
            u.close()
        elif target == "/id":
            reply(c, n, b"conn=%d\n" % n)
        elif target.startswith("/hold/"):
            # Hold the connection open a while before answering, so that
            # clients overlap in time.
            time.sleep(int(target.split("/")[2]) / 1000)
            reply(c, n, b"conn=%d\n" % n)
        elif target == "/sink":
            # Read the body until EOF (the client's half-close), then
            # answer with its length and CRC: only possible when the
            # EOF crossed the bridge and the way back is still open.
            total, crc = len(rest), zlib.crc32(rest)
            buf = bytearray(1 << 20)
            while True:
                k = c.recv_into(buf)
                if k == 0:
                    break
                total += k
                crc = zlib.crc32(memoryview(buf)[:k], crc)
            log("sink n=%d len=%d crc=%08x" % (n, total, crc))
            reply(c, n, b"len=%d crc=%08x\n" % (total, crc))
        elif target.startswith("/bytes/"):
            left = int(target.split("/")[2])
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % left)
            crc, sent = 0, 0
            mv = memoryview(block)
            while left > 0:
                k = min(left, len(block))
                c.sendall(mv[:k])
                crc = zlib.crc32(mv[:k], crc)
                left -= k
                sent += k
            log("bytes n=%d len=%d crc=%08x" % (n, sent, crc))
        elif target == "/early":
            # Refuse at once, while the client is still sending its body,
            # and close with that body unread: the way a proxy answers an
            # upload it will not allow.
            reply(c, n, b"denied before the body\n", "403 Forbidden")
        elif target == "/close":
            # The server ends the exchange: answer with no length and
            # close at once, without waiting for the client.
            c.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbye\n")
        else:
            reply(c, n, b"no such test path\n", "404 Not Found")
    except OSError as e:
        log("error n=%d %s" % (n, e))
    finally:
        c.close()

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".tmp")
s.listen(512)
os.rename(path + ".tmp", path)
while True:
    c, _ = s.accept()
    with lock:
        count += 1
        n = count
    log("accept n=%d" % n)
    threading.Thread(target=handle, args=(c, n), daemon=True).start()
EOF
	cat > "$BR_T/client.py" <<'EOF'
# The test client, run inside the namespace: talks to the bridge's listener.
import os, socket, sys, time, zlib
addr = ("127.0.0.1", int(os.environ.get("BR_PORT", "3128")))

def conn():
    return socket.create_connection(addr, timeout=30)

def read_all(c):
    out = b""
    while True:
        d = c.recv(65536)
        if not d:
            return out
        out += d

def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1

cmd = sys.argv[1]
if cmd == "ids":
    k = int(sys.argv[2])
    cs = [conn() for _ in range(k)]
    for c in cs:
        c.sendall(b"GET /hold/300 HTTP/1.1\r\nHost: t\r\n\r\n")
    for c in cs:
        body = read_all(c).split(b"\r\n\r\n", 1)[1]
        print(body.decode().strip())
elif cmd == "halfclose":
    # Send a request, shut our write side, and still expect the whole
    # answer, which the server only gives after it saw our EOF.
    size = int(sys.argv[2])
    data = os.urandom(size)
    c = conn()
    c.sendall(b"POST /sink HTTP/1.1\r\nHost: t\r\n\r\n" + data)
    c.shutdown(socket.SHUT_WR)
    resp = read_all(c)
    want = b"len=%d crc=%08x" % (size, zlib.crc32(data))
    print("ok" if want in resp else "bad: %r" % resp[-200:])
elif cmd == "serverclose":
    # Keep our side open; the server's close must reach us as EOF.
    c = conn()
    c.sendall(b"GET /close HTTP/1.1\r\nHost: t\r\n\r\n")
    c.settimeout(5)
    try:
        resp = read_all(c)
        print("ok" if resp.endswith(b"bye\n") else "bad: %r" % resp)
    except socket.timeout:
        print("bad: no EOF within 5 s")
elif cmd == "early":
    # Upload a large body while the proxy refuses after the head: the
    # refusal must still reach us, not a bare reset.
    import threading
    c = conn()
    c.sendall(b"POST /early HTTP/1.1\r\nHost: t\r\nContent-Length: 67108864\r\n\r\n")
    def send_body():
        block = b"x" * 65536
        try:
            for _ in range(1024):
                c.sendall(block)
        except OSError:
            pass
    t = threading.Thread(target=send_body, daemon=True)
    t.start()
    resp = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            resp += d
    except OSError as e:
        resp += b" [%s]" % str(e).encode()
    print("ok" if b"403 Forbidden" in resp and b"denied before the body" in resp
          else "bad: %r" % resp[-200:])
elif cmd == "download":
    size, slow = int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 0
    c = conn()
    c.sendall(b"GET /bytes/%d HTTP/1.1\r\nHost: t\r\n\r\n" % size)
    head = b""
    while b"\r\n\r\n" not in head:
        head += c.recv(1)
    bridge = os.getppid()
    rss0 = rss_kb(bridge)
    rssmax = rss0
    buf = bytearray(1 << 20)
    mv = memoryview(buf)
    got, crc = 0, 0
    t0 = time.monotonic()
    while got < size:
        slow_now = time.monotonic() - t0 < slow
        k = c.recv_into(mv[:65536] if slow_now else mv)
        if k == 0:
            break
        crc = zlib.crc32(mv[:k], crc)
        got += k
        if slow_now:
            time.sleep(0.005)
            rssmax = max(rssmax, rss_kb(bridge))
    rssmax = max(rssmax, rss_kb(bridge))
    print("len=%d crc=%08x rss0=%d rssmax=%d secs=%.2f" %
          (got, crc, rss0, rssmax, time.monotonic() - t0))
elif cmd == "upload":
    size = int(sys.argv[2])
    block = os.urandom(1 << 20)
    mv = memoryview(block)
    c = conn()
    c.sendall(b"POST /sink HTTP/1.1\r\nHost: t\r\n\r\n")
    left, crc = size, 0
    t0 = time.monotonic()
    while left > 0:
        k = min(left, len(block))
        c.sendall(mv[:k])
        crc = zlib.crc32(mv[:k], crc)
        left -= k
    c.shutdown(socket.SHUT_WR)
    resp = read_all(c)
    want = b"len=%d crc=%08x" % (size, crc)
    print("%s secs=%.2f" % ("ok" if want in resp else "bad: %r" % resp[-200:],
          time.monotonic() - t0))
else:
    sys.exit("unknown command " + cmd)
EOF
}

