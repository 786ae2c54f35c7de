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
	br_write_recipe_python
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

def handle(c):
    global count
    n = 0
    try:
        lines, rest = read_head(c)
        if lines is None:
            return
        method, target, _ = lines[0].split(" ", 2)
        if method == "GET" and target == "/.well-known/postern/session":
            # The bridge's session request (postern-bridge(8) SESSION
            # INFO), answered as a proxy with nothing to give this
            # session; neither counted nor logged, so that the tests'
            # connection numbers are their own clients'.
            body = b"postern-session 1\n"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            return
        with lock:
            count += 1
            n = count
        log("accept n=%d" % n)
        if "denied.test" in target:
            # The one name this stand-in refuses, as postern-proxy would.
            reply(c, n, b"refused\n", "403 Forbidden")
            return
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
    threading.Thread(target=handle, args=(c,), daemon=True).start()
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

# ---------------------------------------------------------------------------
# The printed recipes (bridge-bwrap.sh, bridge-unshare.sh).
#
# The README and postern-bridge(8) print how to start the bridge under bwrap
# and unshare, for an ordinary user and for root.  These helpers take those
# lines out of the documents themselves, so that the very text a reader
# copies is what runs: KEEP THE README AND THE MAN PAGE IN SYNC (the tests
# compare them), and keep the placeholders "/run/postern/s1/proxy.sock"
# (the session's socket, in a directory of its own) and "agent ..." (the command) in every recipe.

# br_doc_recipe FILE WORD [TEXT]: the first recipe in FILE (README.md, or a
# man page whose roff escapes are undone) whose first line starts with WORD
# (after indentation) and, with TEXT, that contains TEXT, its "\"-continued
# lines joined into one.  Prints nothing when there is none.
br_doc_recipe() {
	sed -e 's/\\-/-/g' -e 's/\\e/\\/g' "$1" | awk -v word="$2" -v text="${3:-}" '
		!found { sub(/^[ \t]+/, ""); if (index($0, word " ") != 1) next; found = 1 }
		found {
			sub(/^[ \t]+/, "")
			if (sub(/[ \t]*\\$/, "")) { line = line $0 " "; next }
			line = line $0
			# A trailing shell comment is for the reader, not the shell.
			sub(/[ \t]+#.*$/, "", line)
			if (index(line, text) == 0) { found = 0; line = ""; next }
			print line; exit
		}'
}

# br_recipe_world: the test's own view of the host, in a private mount
# namespace made once here (the script re-executes itself in it), so that
# the recipes find what they name without changing the real host: the bridge
# and the probe installed in /usr/local/bin (a tmpfs), a fresh /run holding
# the session socket /run/postern/s1/proxy.sock and a stand-in host socket
# /run/x.sock, a home-like /home/agent with another, and one in $BR_T under
# /tmp.  Root only.  Sets BR_HOST_SOCKS.
br_recipe_world() {
	if [ "${BR_IN_MNTNS:-}" != 1 ]; then
		[ "$(id -u)" = 0 ] ||
			br_skip "runs each recipe as root and as uid 1000: needs root"
		command -v setpriv >/dev/null || br_skip "setpriv (util-linux) is not installed"
		command -v nsenter >/dev/null || br_skip "nsenter (util-linux) is not installed"
		command -v curl >/dev/null || br_skip "curl is not installed"
		unshare -m --propagation private true 2>/dev/null ||
			br_skip "cannot make a private mount namespace"
		BR_IN_MNTNS=1 exec unshare -m --propagation private sh "$0" "$@"
	fi
	br_init
	mount -t tmpfs -o mode=755 postern-test /usr/local/bin || br_fail "tmpfs on /usr/local/bin"
	mount -t tmpfs -o mode=755 postern-test /run || br_fail "tmpfs on /run"
	mount -t tmpfs -o mode=755 postern-test /home || br_fail "tmpfs on /home"
	# A copy uid 1000 can read wherever the build tree is.
	cp "$BRIDGE" /usr/local/bin/postern-bridge || br_fail "install the bridge"
	cp "$BR_T/probe.py" /usr/local/bin/postern-probe || br_fail "install the probe"
	chmod 755 /usr/local/bin/postern-bridge /usr/local/bin/postern-probe
	mkdir -p /run/postern/s1 /home/agent
	chmod 755 /run/postern /run/postern/s1 /home/agent
	chown 1000:1000 /home/agent
	br_start_upstream
	br_start_proxy /run/postern/s1/proxy.sock
	# The stand-in proxy cannot give its socket an owner and mode yet (the
	# real proxy's listen options are another change): hand it to uid 1000
	# by hand, the way a session socket would belong to its user.
	chown 1000:1000 /run/postern/s1/proxy.sock && chmod 0660 /run/postern/s1/proxy.sock ||
		br_fail "chown the session socket"
	BR_HOST_SOCKS="/run/x.sock $BR_T/x.sock /home/agent/x.sock"
	for s in $BR_HOST_SOCKS; do
		python3 "$BR_T/listen.py" "$s" &
		BR_PIDS="$BR_PIDS $!"
	done
	for s in $BR_HOST_SOCKS; do
		br_wait_file "$s" || br_fail "stand-in socket $s did not appear"
		# Open to anyone: only the sandbox may stand in the way.
		chmod 0777 "$s"
	done
	# Reachable from outside a sandbox, as uid 1000: or the test proves nothing.
	for s in $BR_HOST_SOCKS; do
		setpriv --reuid=1000 --regid=1000 --clear-groups /usr/bin/python3 "$BR_T/connect.py" "$s" ||
			br_fail "uid 1000 cannot reach the stand-in $s even outside a sandbox"
	done
}

# br_run_recipe NAME LAUNCHER RECIPE: run RECIPE (one shell line whose
# command is "agent ...") by "sh -c", started by LAUNCHER: "root", or
# "user" (uid and gid 1000, no other group, HOME=/home/agent).  The launcher
# holds POSTERN_TEST_SECRET in its environment.  "agent ..." becomes the
# probe, which reports what CMD can do and then waits; while it waits, its
# identity and capabilities are read from outside (the kernel's view).
# Prints the probe's report into $BR_T/NAME.out and checks it; returns
# nonzero (after printing FAIL lines) when anything does not hold.  With
# SOCKETS=yes the stand-in host sockets must be unreachable too.
br_run_recipe() {
	local name=$1 who=$2 recipe=$3 cmd out pid ppid st bst f bad=0 secret
	secret="postern-secret-$$-$name"
	case "$recipe" in
	*"agent ..."*) ;;
	*) echo "FAIL: $name: the recipe has no 'agent ...': $recipe"; return 1 ;;
	esac
	cmd="postern-probe $name $secret \$\$ $BR_HOST_SOCKS"
	recipe=$(printf '%s\n' "$recipe" | sed "s|agent \.\.\.|$cmd|")
	echo "$name: $recipe"
	out="$BR_T/$name.out"
	rm -f "$BR_T/$name.go" "$out"
	mkfifo "$BR_T/$name.go"
	chmod 666 "$BR_T/$name.go"
	if [ "$who" = root ]; then
		(cd / && env POSTERN_TEST_SECRET="$secret" sh -c "$recipe") \
			< "$BR_T/$name.go" > "$out" 2>&1 &
	else
		(cd /home/agent && setpriv --reuid=1000 --regid=1000 --clear-groups \
			env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/agent \
			USER=agent POSTERN_TEST_SECRET="$secret" sh -c "$recipe") \
			< "$BR_T/$name.go" > "$out" 2>&1 &
	fi
	f=$!
	exec 3> "$BR_T/$name.go"
	i=0
	until grep -q '^READY$' "$out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 150 ] || ! kill -0 $f 2>/dev/null; then
			exec 3>&-
			wait $f
			echo "FAIL: $name: the probe never got ready:"
			cat "$out"
			return 1
		fi
		sleep 0.1
	done
	# The kernel's view of CMD, from the initial namespaces.
	pid=$(pgrep -f "^/usr/bin/python3 /usr/local/bin/postern-probe $name ")
	st=$(grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' "/proc/$pid/status" 2>/dev/null)
	# And of the bridge, CMD's parent: it kept nothing either.
	ppid=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
	bst=$(grep -E '^(Name|Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' "/proc/$ppid/status" 2>/dev/null)
	exec 3>&-
	wait $f
	echo "$st" | sed "s/^/$name: host view: /"
	sed "s/^/$name: probe: /" "$out"
	[ -n "$pid" ] && [ -n "$st" ] || { echo "FAIL: $name: CMD not found from outside"; return 1; }
	echo "$bst" | sed "s/^/$name: bridge: /"
	echo "$bst" | grep -q '^Name:[[:space:]]*postern-bridge$' ||
		{ echo "FAIL: $name: CMD's parent is not the bridge"; bad=1; }
	for f in CapInh CapPrm CapEff CapAmb; do
		echo "$bst" | grep -q "^$f:[[:space:]]*0000000000000000$" ||
			{ echo "FAIL: $name: the bridge's $f is not empty"; bad=1; }
	done
	for f in CapInh CapPrm CapEff CapBnd CapAmb; do
		echo "$st" | grep -q "^$f:[[:space:]]*0000000000000000$" ||
			{ echo "FAIL: $name: CMD's $f is not empty"; bad=1; }
	done
	echo "$st" | grep -q '^NoNewPrivs:[[:space:]]*1$' || { echo "FAIL: $name: no no_new_privs"; bad=1; }
	echo "$st" | grep -Eq '^Uid:([[:space:]]+[1-9][0-9]*){4}$' ||
		{ echo "FAIL: $name: CMD runs as kernel uid 0"; bad=1; }
	echo "$st" | grep -Eq '^Gid:([[:space:]]+[1-9][0-9]*){4}$' ||
		{ echo "FAIL: $name: CMD runs as kernel gid 0"; bad=1; }
	echo "$st" | grep -Eq '^Groups:.*[[:space:]]0([[:space:]]|$)' &&
		{ echo "FAIL: $name: CMD has kernel group 0"; bad=1; }
	grep -q '^environ_readable=[1-9]' "$out" ||
		{ echo "FAIL: $name: the probe could not read even its own environ"; bad=1; }
	grep -q '^secret_hits=0$' "$out" ||
		{ echo "FAIL: $name: the launcher's secret is readable in $(grep '^secret_in=' "$out")"; bad=1; }
	grep -q '^outside_pids=0$' "$out" ||
		{ echo "FAIL: $name: CMD sees processes outside its sandbox"; bad=1; }
	grep -q '^foreign_netns=0$' "$out" ||
		{ echo "FAIL: $name: CMD sees processes outside its network namespace"; bad=1; }
	grep -q '^nsenter_rc=0$' "$out" &&
		{ echo "FAIL: $name: nsenter into the launcher's network namespace worked"; bad=1; }
	grep -q '^allowed=hello from upstream$' "$out" ||
		{ echo "FAIL: $name: the allowed request did not get through"; bad=1; }
	grep -q '^denied=403$' "$out" ||
		{ echo "FAIL: $name: the denied request was not refused"; bad=1; }
	if [ "${SOCKETS:-no}" = yes ]; then
		for s in $BR_HOST_SOCKS; do
			# Refused is reached too: the path led to a socket.
			grep -Eq "^socket $s=(ok|Connection refused)$" "$out" &&
				{ echo "FAIL: $name: CMD reached the host socket $s"; bad=1; }
			grep -q "^socket $s=" "$out" ||
				{ echo "FAIL: $name: no socket result for $s"; bad=1; }
		done
	fi
	return $bad
}

br_write_recipe_python() {
	cat > "$BR_T/listen.py" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(16)
while True:
    c, _ = s.accept()
    try:
        c.sendall(b"host socket\n")
    except OSError:
        pass
    c.close()
PY
	cat > "$BR_T/connect.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
s.connect(sys.argv[1])
sys.exit(0 if s.recv(64) == b"host socket\n" else 1)
PY
	cat > "$BR_T/probe.py" <<'PY'
#!/usr/bin/python3
# The hostile agent: what can CMD of a printed recipe reach?  Prints one
# "key=value" line per finding, then READY, then waits for a line on stdin
# (while the test reads its identity from outside).
#   postern-probe NAME SECRET LAUNCHER_PID SOCKET...
import os, socket, subprocess, sys
name, secret, launcher = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
socks = sys.argv[4:]
out = []
me = os.readlink("/proc/self/ns/net")
readable = hits = foreign = 0
where = []
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    for sub in ["/proc/%s" % p] + ["/proc/%s/task/%s" % (p, t)
            for t in (os.listdir("/proc/%s/task" % p) if os.path.isdir("/proc/%s/task" % p) else [])]:
        try:
            with open(sub + "/environ", "rb") as f:
                data = f.read()
            readable += 1
            if secret in data:
                hits += 1
                where.append(sub)
        except OSError:
            pass
    try:
        if os.readlink("/proc/%s/ns/net" % p) != me:
            foreign += 1
    except OSError:
        pass
# Every process CMD can see but itself and the bridge as PID 1 is one
# outside its sandbox.
outside = []
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) == os.getpid():
        continue
    try:
        with open("/proc/%s/cmdline" % p, "rb") as f:
            argv0 = f.read().split(b"\0")[0]
    except OSError:
        argv0 = b""
    if p == "1" and os.path.basename(argv0) == b"postern-bridge":
        continue
    outside.append(p)
out.append("outside_pids=%d" % len(outside))
out.append("environ_readable=%d" % readable)
out.append("secret_hits=%d" % hits)
out.append("secret_in=%s" % ",".join(where))
out.append("foreign_netns=%d" % foreign)
r = subprocess.run(["nsenter", "--net=/proc/%s/ns/net" % launcher, "true"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
out.append("nsenter_rc=%d" % r.returncode)
for s in socks:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(3)
    try:
        c.connect(s)
        res = "ok"
    except OSError as e:
        res = os.strerror(e.errno) if e.errno else str(e)
    c.close()
    out.append("socket %s=%s" % (s, res))
r = subprocess.run(["curl", "-sS", "--max-time", "10", "http://upstream.test/hello.txt"],
                   capture_output=True, text=True)
out.append("allowed=%s" % (r.stdout.strip() or r.stderr.strip()))
r = subprocess.run(["curl", "-s", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
                    "http://denied.test/"], capture_output=True, text=True)
out.append("denied=%s" % r.stdout.strip())
print("\n".join(out))
print("READY", flush=True)
sys.stdin.readline()
PY
}
