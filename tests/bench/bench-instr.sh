#!/bin/sh
# tests/bench/bench-instr.sh: the instructions postern-proxy spends per
# tunnel, per keep-alive plain-HTTP request and per refusal, counted by
# valgrind's callgrind, and the same for an older build when BENCH_BASE
# names one (side by side in one run, with the ratio).  Instructions, not
# seconds: the count is the same however loaded the machine is (a shared
# 2-core machine swings bench-proxy.sh's rates by 2x), so this is the
# before/after that holds on a busy machine; bench-proxy.sh gives the
# rates against the peers.
#
#   tunnel     CONNECT 127.0.0.1:RAW, 200, a 64-byte echo, close
#   request    GET http://127.0.0.1:HTTP/ on one keep-alive connection
#   refusal    CONNECT to a name no rule allows, read the 403, close
#
# Each target runs under callgrind in this script's private network
# namespace (unshare -n, loopback only); after a warm-up of 50 operations
# the counters are zeroed, BENCH_N operations (1000; 2 x for requests)
# run, and the counters are dumped: instructions / operations.  Needs root
# (for unshare), valgrind and python3.  "make bench-instr".
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
if [ -z "${BENCH_IN_NETNS:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-instr: needs root (a private network namespace)" >&2
		exit 1
	fi
	for t in unshare valgrind callgrind_control python3; do
		command -v $t >/dev/null || { echo "bench-instr: $t is missing" >&2; exit 1; }
	done
	BENCH_IN_NETNS=1
	export BENCH_IN_NETNS top_builddir top_srcdir
	exec unshare -n -- sh "$0" "$@"
fi
ip link set lo up 2>/dev/null || true

LOAD="$top_builddir/tests/bench/proxy-load"
CLIENT="$top_srcdir/tests/bench/instr-client.py"
N=${BENCH_N:-1000}
T=$(mktemp -d /tmp/postern-bench-instr.XXXXXX)
chmod 755 "$T"
trap 'kill $SRV 2>/dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"' EXIT INT TERM

"$LOAD" serve "$T/ports" 2>"$T/server.err" &
SRV=$!
i=0
while [ ! -s "$T/ports" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-instr: server did not start" >&2; exit 1; }
	sleep 0.1
done
read -r RAW HTTP <"$T/ports"

# measure LABEL BIN PORT: prints "tunnel request refusal" instructions each.
measure() {
	local label bin port d pid out a b c
	label=$1 bin=$2 port=$3
	d="$T/$label"
	mkdir -p "$d"
	cat >"$d/p.ini" <<EOT
[proxy]
listen = tcp:127.0.0.1:$port
log = $d/audit.log
[defaults]
allow_hosts = 127.0.0.1:$RAW, 127.0.0.1:$HTTP
EOT
	chmod 755 "$d"
	chmod 644 "$d/p.ini"
	valgrind --tool=callgrind --callgrind-out-file="$d/cg.%p" -q "$bin" -c "$d/p.ini" \
		2>"$d/err" &
	pid=$!
	i=0
	until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 100 ] && { echo "bench-instr: $label did not start" >&2; return 1; }
		sleep 0.2
	done
	python3 "$CLIENT" tunnel "$port" "127.0.0.1:$RAW" 50 || return 1
	python3 "$CLIENT" http "$port" "127.0.0.1:$HTTP" 50 || return 1
	python3 "$CLIENT" refuse "$port" "refused.invalid:$RAW" 50 || return 1
	out=
	for w in "tunnel 127.0.0.1:$RAW $N $N" "http 127.0.0.1:$HTTP $((2 * N)) $((2 * N))" \
	    "refuse refused.invalid:$RAW $N $N"; do
		set -- $w
		callgrind_control -z "$pid" >/dev/null 2>&1
		python3 "$CLIENT" "$1" "$port" "$2" "$3" || return 1
		callgrind_control -d "$pid" >/dev/null 2>&1
		sleep 0.3
		f=$(ls -t "$d"/cg.* | head -n 1)
		ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$f" | head -n 1)
		out="$out $((ir / $4))"
	done
	kill "$pid"
	wait "$pid" 2>/dev/null
	echo "$out"
}

echo "bench-instr: $N tunnels, $((2 * N)) keep-alive requests, $N refusals per target"
P=$(measure postern "$top_builddir/postern-proxy" 18090) || exit 1
B=
if [ -n "${BENCH_BASE:-}" ]; then
	B=$(measure postern-base "$BENCH_BASE" 18091) || exit 1
fi
set -- $P
pt=$1 pr=$2 pf=$3
printf '| instructions per | postern |%s\n' "${B:+ postern-base | postern ÷ base |}"
printf '|---|--:|%s\n' "${B:+--:|--:|}"
if [ -n "$B" ]; then
	set -- $B
	for row in "tunnel $pt $1" "request $pr $2" "refusal $pf $3"; do
		set -- $row
		awk -v n="$1" -v p="$2" -v b="$3" 'BEGIN { printf "| %s | %d | %d | %.3f |\n", n, p, b, p / b }'
	done
else
	printf '| tunnel | %d |\n| request | %d |\n| refusal | %d |\n' "$pt" "$pr" "$pf"
fi
