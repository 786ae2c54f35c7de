#!/bin/sh
# tests/bench/bench-capture.sh: the three ways out of a postern-bridge
# sandbox side by side, against the same sink, with
# the same client (tests/bench/bridge-load), in one run; BENCH_ROUNDS
# rounds (3), medians.
#
#   connect   client -> the bridge's 127.0.0.1:3128, HTTP CONNECT
#             sink.bench:PORT -> postern-proxy's UNIX socket -> sink
#   socks     the same listener, SOCKS5 CONNECT to the name (ATYP 0x03):
#             the bridge relays the bytes, the proxy speaks SOCKS5
#   capture   client -> the synthetic 198.18.x.y address the bridge's DNS
#             stub gave sink.bench -> the bridge's capture listener ->
#             CONNECT sink.bench:PORT on the session socket -> sink
#
#   tunnels/s   dial + tunnel + 64-byte echo + close, 8 clients at once
#   bulk        one tunnel, BENCH_BYTES (512 MiB) each way, MB/s
#   DNS stub    answers/s, BENCH_DNS_CLIENTS (4) UDP clients asking the A
#               record of sink.bench, one query in flight each; and the
#               same for BENCH_DNS_NAMES (300) distinct names a round
#               (nN.names.bench, allowed by a wildcard), each asked once:
#               the first ask of a name, which waits for the proxy's name
#               check (no goal; the bridge hands out at most 1024 names)
#
# Goals: socks and capture within 10% of connect (ratio >=
# 0.90) on every row; the stub >= 20,000 answers/s.
#
# The proxy and the sink run in a private network namespace (unshare -n,
# loopback only: no byte leaves the machine); the bridge runs in one more,
# its own, as in a sandbox (the capture makes 198.18.0.0/15 local on its lo
# and binds its port 53), with the proxy's UNIX socket as its --connect and
# the rounds as its CMD.  sink.bench is pinned to 127.0.0.1 in [hosts] and
# allowed on the sink's port with "private".  Needs root.  Bounded by
# BENCH_LIMIT seconds (300).  BENCH_KEEP=1 keeps the temporary directory.
# Not part of "make check": "make bench-capture".
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LOAD="$top_builddir/tests/bench/bridge-load"
BRIDGE="$top_builddir/postern-bridge"
PROXY="$top_builddir/postern-proxy"
ROUNDS=${BENCH_ROUNDS:-3}
BYTES=${BENCH_BYTES:-536870912}
SECS=${BENCH_SECONDS:-2}
DNS_CLIENTS=${BENCH_DNS_CLIENTS:-4}
DNS_NAMES=${BENCH_DNS_NAMES:-300}
LIMIT=${BENCH_LIMIT:-300}
NAME=sink.bench

# --- inside the bridge's namespace: the rounds (the bridge's CMD) ---
if [ "${1:-}" = --rounds ]; then
	T=$2
	# The bridge gives CMD an environment of its own making: the
	# settings come in a file.
	. "$T/params"
	sysctl -qw net.ipv4.ip_local_port_range="1024 65000" 2>/dev/null
	sysctl -qw net.ipv4.tcp_tw_reuse=1 2>/dev/null
	SINK_PORT=$(cat "$T/sink.port")
	CAP=$("$LOAD" dns-a tcp:127.0.0.1:53 "$NAME") || {
		echo "bench-capture: the stub gave $NAME no address" >&2
		exit 1
	}
	echo "bench-capture: the stub gave $NAME $CAP"
	# One client, three ways to reach the same sink.
	run() { # PATH CMD ARGS-AFTER-ADDR...
		p=$1
		shift
		c=$1
		shift
		case $p in
		connect) BRIDGE_LOAD_CONNECT="$NAME:$SINK_PORT" timeout 60 "$LOAD" "$c" \
			tcp:127.0.0.1:3128 "$@" ;;
		socks) BRIDGE_LOAD_SOCKS="$NAME:$SINK_PORT" timeout 60 "$LOAD" "$c" \
			tcp:127.0.0.1:3128 "$@" ;;
		capture) timeout 60 "$LOAD" "$c" "tcp:$CAP:$SINK_PORT" "$@" ;;
		esac
	}
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		echo "bench-capture: round $r (load average $(cut -d' ' -f1-3 /proc/loadavg))"
		# One test at a time across the paths, so that the paths in a
		# ratio were measured seconds apart, not a round apart; each
		# round starts with another path, so that none is always first
		# (the one that meets the machine's leftovers).
		case $((r % 3)) in
		1) order="connect socks capture" ;;
		2) order="socks capture connect" ;;
		0) order="capture connect socks" ;;
		esac
		for p in $order; do
			v=$(run $p tps 8 "$SECS" 2>>"$T/err.$p") && echo "$v" >> "$T/tps.$p"
		done
		for p in $order; do
			v=$(run $p up "$BYTES" 2>>"$T/err.$p") && echo "$v" >> "$T/up.$p"
		done
		for p in $order; do
			v=$(run $p down "$BYTES" 2>>"$T/err.$p") && echo "$v" >> "$T/down.$p"
		done
		v=$(timeout 60 "$LOAD" dns tcp:127.0.0.1:53 "$NAME" "$DNS_CLIENTS" "$SECS" \
			2>>"$T/err.dns") && echo "$v" >> "$T/dns.stub"
		v=$(timeout 60 "$LOAD" dns tcp:127.0.0.1:53 "n%u.names.bench" "$DNS_CLIENTS" 30 \
			$(((r - 1) * DNS_NAMES)) "$DNS_NAMES" 2>>"$T/err.dns") &&
			echo "$v" >> "$T/dns.distinct"
	done
	exit 0
fi

# --- the bench's own namespace ---
if [ -z "${BENCH_IN_NETNS:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-capture: needs root (network namespaces, the bridge's capture)" >&2
		exit 1
	fi
	command -v unshare >/dev/null || { echo "bench-capture: unshare(1) is missing" >&2; exit 1; }
	BENCH_IN_NETNS=1
	export BENCH_IN_NETNS top_builddir top_srcdir
	exec unshare -n -- sh "$0" "$@"
fi

for x in "$LOAD" "$BRIDGE" "$PROXY"; do
	[ -x "$x" ] || { echo "bench-capture: $x is not built" >&2; exit 1; }
done
# The rounds run as the bridge's CMD: absolute paths.
top_builddir=$(cd "$top_builddir" && pwd)
LOAD="$top_builddir/tests/bench/bridge-load"
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

T=$(mktemp -d /tmp/postern-bench-capture.XXXXXX)
chmod 755 "$T"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench-capture: kept $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'echo "bench-capture: stopped" >&2; exit 1' INT TERM HUP
( sleep "$LIMIT" </dev/null >/dev/null 2>&1; echo "bench-capture: over ${LIMIT}s, stopping" >&2; kill -TERM $$ ) &
WATCHDOG=$!

ip link set lo up || { echo "bench-capture: cannot bring lo up" >&2; exit 1; }
sysctl -qw net.ipv4.ip_local_port_range="1024 65000" 2>/dev/null
sysctl -qw net.ipv4.tcp_tw_reuse=1 2>/dev/null
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null

"$LOAD" serve "$T/sink.sock" "$T/sink.port" 2>"$T/sink.err" &
PIDS="$PIDS $!"
i=0
while [ ! -s "$T/sink.port" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-capture: the sink did not start" >&2; exit 1; }
	sleep 0.1
done
SINK_PORT=$(cat "$T/sink.port")

# The audit log apart from the config, as in a deployment (postern
# watches its config's directory; see bench-proxy.sh).
mkdir -p "$T/log"
cat > "$T/postern.ini" <<EOF
[proxy]
log = $T/log/audit.log
max_connections = 10000

[hosts]
$NAME = 127.0.0.1

[session bench]
listen = unix:$T/proxy.sock
max_connections = 10000
allow_hosts = $NAME:$SINK_PORT private, *.names.bench:$SINK_PORT private
EOF
"$PROXY" -c "$T/postern.ini" 2>"$T/proxy.err" &
PROXY_PID=$!
PIDS="$PIDS $PROXY_PID"
i=0
while [ ! -S "$T/proxy.sock" ]; do
	i=$((i + 1))
	if [ $i -gt 50 ] || ! kill -0 $PROXY_PID 2>/dev/null; then
		echo "bench-capture: postern-proxy did not start:" >&2
		tail -n 5 "$T/proxy.err" >&2
		exit 1
	fi
	sleep 0.1
done

echo "bench-capture: $ROUNDS rounds, $BYTES bytes per stream, ${SECS}s per timed test, $DNS_CLIENTS DNS clients"
echo "bench-capture: $(nproc) CPUs, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
root=
[ "$(id -u)" = 0 ] && root=--allow-root
# The bridge in a namespace of its own, as in a sandbox; the rounds are
# its CMD (so they run where its listeners and its stub are).
cat > "$T/params" <<EOF
LOAD='$LOAD'
ROUNDS=$ROUNDS
BYTES=$BYTES
SECS=$SECS
DNS_CLIENTS=$DNS_CLIENTS
DNS_NAMES=$DNS_NAMES
EOF
unshare -n -- "$BRIDGE" $root --connect "$T/proxy.sock" --listen 127.0.0.1:3128 -- \
	sh "$SELF" --rounds "$T" 2>"$T/bridge.err" &
BR_PID=$!
PIDS="$PIDS $BR_PID"
wait $BR_PID
rc=$?
PIDS=$(echo "$PIDS" | sed "s/ $BR_PID//")
kill $WATCHDOG 2>/dev/null
if [ $rc != 0 ]; then
	echo "bench-capture: the rounds failed ($rc):" >&2
	tail -n 10 "$T/bridge.err" >&2
	exit 1
fi
for f in "$T"/err.*; do
	[ -s "$f" ] && { echo "bench-capture: ${f##*/err.}: $(sort "$f" | uniq -c | sort -rn | head -3 | tr '\n' ';')"; }
done

median() { # FILE
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
check() { # VALUE OP LIMIT
	awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
		if (v == "-") { print "n/a"; exit }
		ok = (op == ">=") ? v >= l : v <= l
		print ok ? "met" : "NOT MET" }'
}
val() { [ -s "$1" ] && median "$1" || echo -; }

echo
echo "| median of $ROUNDS | connect | socks | capture | socks÷connect | capture÷connect | goal |"
echo "|---|---:|---:|---:|---:|---:|---|"
for m in tps up down; do
	case $m in
	tps) label="tunnels/s (8 clients)" ;;
	up) label="bulk up, one tunnel (MB/s)" ;;
	down) label="bulk down, one tunnel (MB/s)" ;;
	esac
	c=$(val "$T/$m.connect")
	s=$(val "$T/$m.socks")
	k=$(val "$T/$m.capture")
	rs=$(ratio "$s" "$c")
	rk=$(ratio "$k" "$c")
	g="both ≥ 0.90: socks $(check "$rs" '>=' 0.90), capture $(check "$rk" '>=' 0.90)"
	echo "| $label | $c | $s | $k | $rs | $rk | $g |"
done
d=$(val "$T/dns.stub")
echo "| DNS stub answers/s ($DNS_CLIENTS UDP clients, one name) | | | $d | | | ≥ 20000: $(check "$d" '>=' 20000) |"
d=$(val "$T/dns.distinct")
echo "| DNS stub answers/s ($DNS_CLIENTS UDP clients, $DNS_NAMES new names) | | | $d | | | (none) |"
echo
echo "bench-capture: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
