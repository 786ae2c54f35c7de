#!/bin/sh
# tests/load/tunnels.sh [N] [SECONDS]: N concurrent CONNECT tunnels (default
# 9,900: with the machine's hard limit of 20,000 descriptors a proxy holds
# two per tunnel plus its own few) doing steady 64-byte ping-pongs through
# postern-proxy for SECONDS (default 300), on loopback only.  Meanwhile the
# admin socket's GET /status is timed once a second.  Reports RSS per
# tunnel, the tunnels' round-trip p50/p99, /status p50/p99, and RSS and fd
# count before, at peak and after.  Run by hand (as root for the limits);
# not part of make check.
set -eu
N=${1:-9900}
SECS=${2:-300}
top=$(cd "$(dirname "$0")/../.." && pwd)
b=${top_builddir:-$top}
load="$b/tests/bench/proxy-load"
[ -x "$load" ] || (cd "$b" && make -s tests/bench/proxy-load)
work=$(mktemp -d /tmp/postern-load.XXXXXX)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null || true; done; rm -rf "$work"' EXIT INT TERM
ulimit -n 20000
"$load" serve "$work/ports" & pids="$pids $!"
while [ ! -s "$work/ports" ]; do sleep 0.1; done
raw=$(cut -d' ' -f1 "$work/ports")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/p.ini" <<CONF
[proxy]
listen = tcp:127.0.0.1:$port
admin = unix:$work/admin.sock
log = $work/audit.log
max_connections = 20000
[defaults]
max_connections = 20000
allow_hosts = 127.0.0.1:$raw
CONF
"$b/postern-proxy" -c "$work/p.ini" 2>"$work/proxy.err" & pp=$!; pids="$pids $pp"
while [ ! -S "$work/admin.sock" ]; do sleep 0.1; done
rss() { awk '/^VmRSS/{print $2}' /proc/$pp/status; }
fds() { ls /proc/$pp/fd | wc -l; }
rss0=$(rss); fds0=$(fds)
echo "before: RSS $rss0 kB, $fds0 fds"
"$load" lat "127.0.0.1:$port" "127.0.0.1:$raw" "$N" "$SECS" >"$work/lat.out" 2>&1 & lp=$!; pids="$pids $lp"
peak_rss=0 peak_fds=0
: >"$work/status.ms"
while kill -0 $lp 2>/dev/null; do
	python3 - "$work/admin.sock" >>"$work/status.ms" <<'PY'
import socket, sys, time
t = time.monotonic()
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"GET /status HTTP/1.0\r\n\r\n")
while s.recv(65536):
    pass
print("%.3f" % ((time.monotonic() - t) * 1000))
PY
	r=$(rss); f=$(fds)
	[ "$r" -gt "$peak_rss" ] && peak_rss=$r
	[ "$f" -gt "$peak_fds" ] && peak_fds=$f
	sleep 1
done
lrc=0
wait $lp || lrc=$?
sleep 2
rss1=$(rss); fds1=$(fds)
echo "tunnels: $N for ${SECS}s; round trip p50/p99 (us): $(cat "$work/lat.out")"
echo "peak: RSS $peak_rss kB, $peak_fds fds; per tunnel $(( (peak_rss - rss0) * 1024 / N )) bytes"
sort -n "$work/status.ms" | awk '{a[NR]=$1} END {print "admin /status: " NR " samples, p50 " a[int(NR*0.5)+1] " ms, p99 " a[int(NR*0.99)+1] " ms, max " a[NR] " ms"}'
echo "after: RSS $rss1 kB, $fds1 fds (before: $rss0 kB, $fds0 fds)"
grep -c '"event":"decision"' "$work/audit.log" | sed 's/^/decisions logged: /'
if [ $lrc -ne 0 ]; then
	echo "FAILED: the load client exited $lrc (a tunnel died or could not be opened)"
	exit 1
fi
echo "errors: none (every tunnel opened, and none died)"
