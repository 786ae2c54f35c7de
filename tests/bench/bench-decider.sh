#!/bin/sh
# tests/bench/bench-decider.sh: decisions through a decider (decider =
# unix:PATH, tests/integration/lib-proxy/decider.py, every answer an
# allow, none kept) next to the same requests decided by the allowlist
# alone, in one run; BENCH_ROUNDS rounds (3), medians, and the ratio.
#
#   decisions/s    CONNECT to the bench server's echo port, read the 200,
#                  close; BENCH_CONC (16) clients in a closed loop for
#                  BENCH_SECONDS (5)
#   p50, p99       from the connect to the status line, at BENCH_RATE
#                  (200) CONNECTs a second for BENCH_SECONDS, in ms
#
# The client is tests/integration/lib-proxy/decload.py (Python asyncio),
# the same for both columns; the upstream is proxy-load serve.  Runs in a
# private network namespace (unshare -n) with only loopback, as root.
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$PWD}"
if [ "${BENCH_IN_NS:-}" != 1 ]; then
	command -v unshare >/dev/null || { echo "bench-decider: unshare(1) is missing" >&2; exit 1; }
	BENCH_IN_NS=1 top_srcdir=$top_srcdir top_builddir=$top_builddir exec unshare -n -- sh "$0" "$@"
fi
ip link set lo up
ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECONDS:-5}
CONC=${BENCH_CONC:-16}
RATE=${BENCH_RATE:-200}
PY=${PYTHON:-python3}
L="$top_srcdir/tests/integration/lib-proxy/decload.py"
D="$top_srcdir/tests/integration/lib-proxy/decider.py"
W=$(mktemp -d /tmp/bench-decider.XXXXXX)
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || :; done; wait 2>/dev/null || :; rm -rf "$W"; }
trap cleanup EXIT INT TERM

"$top_builddir/tests/bench/proxy-load" serve "$W/ports" >/dev/null 2>&1 &
pids="$pids $!"
i=0
while [ ! -s "$W/ports" ]; do i=$((i + 1)); [ $i -gt 50 ] && { echo "no bench server" >&2; exit 1; }; sleep 0.1; done
RAW=$(cut -d' ' -f1 "$W/ports")
"$PY" "$D" "unix:$W/decider.sock" /dev/null >"$W/decider.out" 2>&1 &
pids="$pids $!"
i=0
while ! grep -q ready "$W/decider.out" 2>/dev/null; do i=$((i + 1)); [ $i -gt 50 ] && exit 1; sleep 0.1; done

# conf NAME PORT RULE [LINE]: a config for one proxy on 127.0.0.1:PORT.
conf() {
	printf '[proxy]\nlisten = tcp:127.0.0.1:%s\nlog = /dev/null\nmax_connections = 10000\n[defaults]\nallow_hosts = %s\n%s\n' \
		"$2" "$3" "${4:-}" >"$W/$1.ini"
}
conf allowlist 3401 "127.0.0.1:$RAW"
conf decider 3402 "127.0.0.1:1" "decider = unix:$W/decider.sock
decider_cache_max = 0"
for k in allowlist decider; do
	"$top_builddir/postern-proxy" -c "$W/$k.ini" >"$W/$k.out" 2>&1 &
	pids="$pids $!"
done
sleep 1
# Both answer a CONNECT with 200 before measuring.
for p in 3401 3402; do
	r=$("$PY" "$L" --ports $p --target "127.0.0.1:$RAW" --rate 10 --seconds 0.5)
	echo "$r" | grep -q '"status": {"200": 5}' || { echo "bench-decider: port $p does not allow: $r" >&2; exit 1; }
done

j() { "$PY" -c 'import json, sys; r = json.loads(sys.argv[1]); print(r[sys.argv[2]])' "$1" "$2"; }
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'; }

r=1
while [ $r -le "$ROUNDS" ]; do
	for k in allowlist decider; do
		p=3401
		[ $k = decider ] && p=3402
		out=$("$PY" "$L" --ports $p --target "127.0.0.1:$RAW" --rate 0 --conc "$CONC" --seconds "$SECS")
		j "$out" rate >>"$W/$k.tput"
		out=$("$PY" "$L" --ports $p --target "127.0.0.1:$RAW" --rate "$RATE" --seconds "$SECS")
		j "$out" p50 >>"$W/$k.p50"
		j "$out" p99 >>"$W/$k.p99"
		echo "round $r $k: $(tail -1 "$W/$k.tput")/s p50 $(tail -1 "$W/$k.p50") ms p99 $(tail -1 "$W/$k.p99") ms" >&2
	done
	r=$((r + 1))
done

printf '\n%-22s %12s %12s %10s\n' "" allowlist decider "ratio"
for m in tput p50 p99; do
	a=$(median "$W/allowlist.$m")
	d=$(median "$W/decider.$m")
	case $m in
	tput) name="decisions/s" ;;
	p50) name="latency p50 (ms)" ;;
	p99) name="latency p99 (ms)" ;;
	esac
	printf '%-22s %12s %12s %10s\n' "$name" "$a" "$d" "$(ratio "$d" "$a")"
done
echo "($ROUNDS rounds, medians; ratio = decider / allowlist; $CONC clients closed loop, $RATE/s for latency, ${SECS}s each)"
