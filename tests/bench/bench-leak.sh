#!/bin/sh
# tests/bench/bench-leak.sh: what the leak scan costs on plain HTTP.  Two
# postern-proxy of the same build, side by side in each round: "scan", whose
# session has a secret (bound elsewhere, so every request here is scanned
# for its placeholder and value in every encoding) and two canaries, and
# "plain", whose session has neither (nothing is scanned).  BENCH_ROUNDS
# rounds (3), medians, and the ratio scan / plain.
#
#   HTTP req/s     wrk, 1 thread, 32 keep-alive connections, absolute-form
#                  GET to proxy-load serve's HTTP port, BENCH_SECONDS (2)
#   bulk MB/s      one POST of BENCH_MB (256) MB with a Content-Length to a
#                  sink that reads and discards it: random bytes (a '%' in
#                  every piece: the stretches near escapes are decoded and
#                  scanned again) and random base64 text (no '%': one pass)
#   CPU us/request the proxy's user+system CPU during wrk, per request
#   CPU s/GiB      the proxy's user+system CPU during each POST, per GiB:
#                  steadier than MB/s on a busy machine, where the Python
#                  client and sink bound the rate
#
# Runs in a private network namespace (unshare -n) with only loopback, as
# root.  Not part of "make check": "make bench-leak".
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$PWD}"
if [ "${BENCH_IN_NS:-}" != 1 ]; then
	command -v unshare >/dev/null || { echo "bench-leak: unshare(1) is missing" >&2; exit 1; }
	BENCH_IN_NS=1 top_srcdir=$top_srcdir top_builddir=$top_builddir exec unshare -n -- sh "$0" "$@"
fi
ip link set lo up
ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECONDS:-2}
MB=${BENCH_MB:-256}
PY=${PYTHON:-python3}
command -v wrk >/dev/null || { echo "bench-leak: wrk is not installed" >&2; exit 1; }
W=$(mktemp -d /tmp/bench-leak.XXXXXX)
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || :; done; wait 2>/dev/null || :; rm -rf "$W"; }
trap cleanup EXIT INT TERM

"$top_builddir/tests/bench/proxy-load" serve "$W/ports" >/dev/null 2>&1 &
pids="$pids $!"
i=0
while [ ! -s "$W/ports" ]; do i=$((i + 1)); [ $i -gt 50 ] && { echo "no bench server" >&2; exit 1; }; sleep 0.1; done
read -r _ HTTP _ <"$W/ports"

# The sink: reads a head and its Content-Length body, answers 200.
cat >"$W/sink.py" <<'EOF'
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 3499))
s.listen(16)
def serve(c):
    buf = bytearray(1 << 20)
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(4096)
        if not d:
            return
        head += d
    h, rest = head.split(b"\r\n\r\n", 1)
    n = 0
    for line in h.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    n -= len(rest)
    while n > 0:
        k = c.recv_into(buf)
        if k == 0:
            return
        n -= k
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    c.close()
print("ready", flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
"$PY" "$W/sink.py" >"$W/sink.out" 2>&1 &
pids="$pids $!"

# The bodies: random bytes, random base64 text.
head -c $((MB * 1048576)) /dev/urandom >"$W/bytes"
base64 -w0 "$W/bytes" | head -c $((MB * 1048576)) >"$W/text"

export BENCH_KEY="sk-ant-api03-$(head -c 70 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9' | head -c 93)AA"
conf() { # NAME PORT EXTRA
	printf '[proxy]\nlisten = tcp:127.0.0.1:%s\nlog = /dev/null\nmax_connections = 10000\n[defaults]\nallow_hosts = 127.0.0.1:%s, 127.0.0.1:3499, bound.example\n%s\n' \
		"$2" "$HTTP" "$3" >"$W/$1.ini"
}
conf plain 3411 ""
conf scan 3412 "secrets = k
canaries = DECOY_ONE, DECOY_TWO
[secret k]
from_env = BENCH_KEY
inject = bound.example header x-api-key"
for k in plain scan; do
	"$top_builddir/postern-proxy" -c "$W/$k.ini" >"$W/$k.out" 2>&1 &
	pids="$pids $!"
	echo $! >"$W/$k.pid"
done
HZ=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$(cat "$W/$1.pid")/stat"; }
i=0
while ! grep -q ready "$W/sink.out" 2>/dev/null; do i=$((i + 1)); [ $i -gt 50 ] && exit 1; sleep 0.1; done
sleep 1

# post PORT FILE: MB/s of one POST of FILE through the proxy on PORT.
post() {
	"$PY" - "$1" "$2" <<'EOF'
import os, socket, sys, time
port, path = int(sys.argv[1]), sys.argv[2]
data = open(path, "rb").read()
s = socket.create_connection(("127.0.0.1", port))
t = time.monotonic()
s.sendall(b"POST http://127.0.0.1:3499/sink HTTP/1.1\r\nHost: 127.0.0.1:3499\r\n"
          b"Content-Length: %d\r\n\r\n" % len(data))
s.sendall(data)
got = s.recv(100)
dt = time.monotonic() - t
if not got.startswith(b"HTTP/1.1 200"):
    print(0)
else:
    print("%.0f" % (len(data) / dt / 1e6))
EOF
}
rps() {
	BENCH_UPSTREAM="127.0.0.1:$HTTP" wrk -t1 -c32 -d"${SECS}s" -s "$top_srcdir/tests/bench/wrk-proxy.lua" \
		"http://127.0.0.1:$1/" 2>/dev/null | sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\).*/\1/p' | cut -d. -f1
}
median() { sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p"; }

r=1
while [ $r -le "$ROUNDS" ]; do
	for k in plain scan; do
		p=3411; [ $k = scan ] && p=3412
		t0=$(cpu $k)
		n=$(rps $p)
		t1=$(cpu $k)
		echo "$n" >>"$W/rps.$k"
		awk -v t=$((t1 - t0)) -v hz="$HZ" -v n="$n" -v s="$SECS" \
			'BEGIN { printf "%.1f\n", (n > 0 ? t / hz / (n * s) * 1e6 : 0) }' >>"$W/cpurps.$k"
		for f in bytes text; do
			t0=$(cpu $k)
			post $p "$W/$f" >>"$W/$f.$k"
			t1=$(cpu $k)
			awk -v t=$((t1 - t0)) -v hz="$HZ" -v mb="$MB" \
				'BEGIN { printf "%.2f\n", t / hz / (mb / 1024) }' >>"$W/cpu$f.$k"
		done
	done
	r=$((r + 1))
done

printf '%-28s %10s %10s %8s\n' "plain HTTP, $ROUNDS rounds" plain scan "scan/plain"
for m in rps cpurps bytes text cpubytes cputext; do
	case $m in
	rps) name="HTTP req/s" ;;
	cpurps) name="CPU us/request" ;;
	bytes) name="bulk MB/s, random bytes" ;;
	text) name="bulk MB/s, base64 text" ;;
	cpubytes) name="CPU s/GiB, random bytes" ;;
	cputext) name="CPU s/GiB, base64 text" ;;
	esac
	a=$(median <"$W/$m.plain")
	b=$(median <"$W/$m.scan")
	printf '%-28s %10s %10s %8s\n' "$name" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')"
done
