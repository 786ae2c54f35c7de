#!/bin/sh
# tests/bench/bench-bridge.sh: postern-bridge side by side with socat
# (TCP-LISTEN:...,fork UNIX-CONNECT:...), a direct TCP connection and a direct
# UNIX-socket connection, against the same server and with the same client
# (tests/bench/bridge-load), in one run; BENCH_ROUNDS rounds (3), medians.
#
#   throughput   one stream each way, BENCH_BYTES (1 GiB), MB/s
#   conn/s       connect + 64-byte echo + close, 8 clients at once
#   latency      64-byte ping-pong on persistent connections, 1 and 64 of
#                them, p50/p99 in microseconds
#   PSS          the relay's proportional set size with BENCH_IDLE (1000)
#                idle connections open (socat: all its processes)
#   CPU/GiB      the relay's user+system CPU seconds per GiB relayed
#   chain        curl -> relay -> postern-proxy -> upstream, when
#                ./postern-proxy is built; skipped with a message otherwise
#
# socat runs twice: as it comes (8 KiB reads) and tuned, "socat -b 256K"
# (socat-256k), the peer the goals are set against.
#
# The floor: tests/bench/proxy-load's floor relay in raw mode, TCP in and
# the server's UNIX socket out, copying through one 1 MiB buffer and doing
# nothing else (no half-close: its upload announces its count, bridge-load
# upc).  A goal the floor itself misses is out of any relay's reach on this
# machine; after the targets, each bridge goal is said beside the floor's
# own figure.
#
# BENCH_BASE_BRIDGE=/path/to/an/older/postern-bridge: a before/after in one
# run.  That binary relays to the same server as one more target,
# "bridge-base", measured in the same rounds right after the bridge; the
# first table gains its column and a "br/base" column (bridge ÷
# bridge-base).  The chain keeps to ./postern-bridge.
#
# Loopback only.  Not part of "make check": "make bench-bridge".
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LOAD="$top_builddir/tests/bench/bridge-load"
FLOOR_LOAD="$top_builddir/tests/bench/proxy-load"
BRIDGE="$top_builddir/postern-bridge"
PROXY="$top_builddir/postern-proxy"
ROUNDS=${BENCH_ROUNDS:-3}
BYTES=${BENCH_BYTES:-1073741824}
SECS=${BENCH_SECONDS:-2}
IDLE=${BENCH_IDLE:-1000}
BASE=${BENCH_BASE_BRIDGE:-}
HZ=$(getconf CLK_TCK)

for x in "$LOAD" "$BRIDGE" "$FLOOR_LOAD"; do
	[ -x "$x" ] || { echo "bench-bridge: $x is not built" >&2; exit 1; }
done
if [ -n "$BASE" ] && [ ! -x "$BASE" ]; then
	echo "bench-bridge: BENCH_BASE_BRIDGE=$BASE is not an executable" >&2
	exit 1
fi
command -v socat >/dev/null || { echo "bench-bridge: socat is not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench-bridge: python3 is not installed" >&2; exit 1; }

T=$(mktemp -d /tmp/postern-bench-bridge.XXXXXX)
PIDS=""
cleanup() {
	for p in $PIDS; do
		# socat's per-connection children first, then the process itself.
		for c in $(pgrep -P "$p" 2>/dev/null); do kill "$c" 2>/dev/null; done
		kill "$p" 2>/dev/null
	done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() { # PORT: until something listens on 127.0.0.1:PORT
	i=0
	until python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 50 ] && { echo "bench-bridge: nothing listens on $1" >&2; exit 1; }
		sleep 0.1
	done
}

# CPU ticks of a process; with its reaped children for socat (which forks
# one child per connection and waits for it).
cpu_ticks() { # PID [with-children]
	awk -v kids="${2:-}" '{ sub(/.*\) /, ""); t = $12 + $13; if (kids != "") t += $14 + $15; print t }' "/proc/$1/stat"
}

pss_kb() { # PID...: summed Pss in kB
	for p in "$@"; do
		awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}

steal_ticks() { # the machine's steal ticks and all its ticks since boot
	awk '/^cpu / { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}
steal_share() { # "STEAL TOTAL" (steal_ticks) at the start: the steal's % since then
	echo "$1 $(steal_ticks)" | awk '{ t = $4 - $2; if (t > 0) printf "%.1f%%\n", 100 * ($3 - $1) / t; else print "-" }'
}

median() { # FILE
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'
}

wait_portfile() { # FILE WHAT: until FILE is written, 5 s at most
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-bridge: $2 did not start" >&2; exit 1; }
		sleep 0.1
	done
}

"$LOAD" serve "$T/server.sock" "$T/server.port" 2>"$T/server.err" &
PIDS="$PIDS $!"
wait_portfile "$T/server.port" server
SERVER_PORT=$(cat "$T/server.port")

BRIDGE_PORT=$(free_port)
"$BRIDGE" --connect "$T/server.sock" --listen "127.0.0.1:$BRIDGE_PORT" 2>"$T/bridge.err" &
BRIDGE_PID=$!
PIDS="$PIDS $BRIDGE_PID"
SOCAT_PORT=$(free_port)
socat -lf "$T/socat.log" TCP-LISTEN:"$SOCAT_PORT",fork,reuseaddr,bind=127.0.0.1,backlog=4096 \
	UNIX-CONNECT:"$T/server.sock" &
SOCAT_PID=$!
PIDS="$PIDS $SOCAT_PID"
SOCATB_PORT=$(free_port)
socat -b 262144 -lf "$T/socatb.log" TCP-LISTEN:"$SOCATB_PORT",fork,reuseaddr,bind=127.0.0.1,backlog=4096 \
	UNIX-CONNECT:"$T/server.sock" &
SOCATB_PID=$!
PIDS="$PIDS $SOCATB_PID"
"$FLOOR_LOAD" floor "$T/floor.port" "unix:$T/server.sock" raw 2>"$T/floor.err" &
FLOOR_PID=$!
PIDS="$PIDS $FLOOR_PID"
wait_portfile "$T/floor.port" "the floor relay"
read -r FLOOR_PORT _ < "$T/floor.port"
wait_port "$BRIDGE_PORT"
wait_port "$SOCAT_PORT"
wait_port "$SOCATB_PORT"
wait_port "$FLOOR_PORT"
BASE_PID=
if [ -n "$BASE" ]; then
	BASE_PORT=$(free_port)
	"$BASE" --connect "$T/server.sock" --listen "127.0.0.1:$BASE_PORT" 2>"$T/bridge-base.err" &
	BASE_PID=$!
	PIDS="$PIDS $BASE_PID"
	wait_port "$BASE_PORT"
fi

addr_of() {
	case $1 in
	tcp) echo "tcp:127.0.0.1:$SERVER_PORT" ;;
	unix) echo "unix:$T/server.sock" ;;
	bridge) echo "tcp:127.0.0.1:$BRIDGE_PORT" ;;
	socat) echo "tcp:127.0.0.1:$SOCAT_PORT" ;;
	socatb) echo "tcp:127.0.0.1:$SOCATB_PORT" ;;
	base) echo "tcp:127.0.0.1:$BASE_PORT" ;;
	floor) echo "tcp:127.0.0.1:$FLOOR_PORT" ;;
	esac
}
relay_pid() {
	case $1 in bridge) echo "$BRIDGE_PID" ;; socat) echo "$SOCAT_PID" ;; socatb) echo "$SOCATB_PID" ;; base) echo "$BASE_PID" ;;
	floor) echo "$FLOOR_PID" ;; *) echo "" ;; esac
}

# "base" is BENCH_BASE_BRIDGE, shown as bridge-base.
TARGETS="tcp unix bridge socat socatb floor"
[ -n "$BASE" ] && TARGETS="tcp unix bridge base socat socatb floor"
echo "bench-bridge: $ROUNDS rounds, $BYTES bytes per stream, ${SECS}s per timed test, $IDLE idle connections"
echo "bench-bridge: $(nproc) CPUs, kernel $(uname -r)"
if [ -n "$BASE" ]; then
	brev=$(git -C "$(dirname "$BASE")" rev-parse --short HEAD 2>/dev/null || echo unknown)
	echo "bench-bridge: bridge-base: $BASE (tree at $brev)"
fi

# One test at a time across the four paths, so that the paths compared in
# a ratio were measured minutes apart at most, not a whole round apart: the
# load of whatever else runs on the machine changes over a run.
bulk() { # TARGET
	a=$(addr_of $1)
	p=$(relay_pid $1)
	kids=""
	case $1 in socat*) kids=1 ;; esac
	upcmd=up
	[ "$1" = floor ] && upcmd=upc
	[ -n "$p" ] && c0=$(cpu_ticks "$p" $kids)
	v=$("$LOAD" $upcmd "$a" "$BYTES") && echo "$v" >> "$T/up.$1"
	v=$("$LOAD" down "$a" "$BYTES") && echo "$v" >> "$T/down.$1"
	if [ -n "$p" ]; then
		# socat's children are reaped (and counted) a moment later.
		sleep 0.2
		c1=$(cpu_ticks "$p" $kids)
		awk -v c=$((c1 - c0)) -v hz="$HZ" -v b="$BYTES" \
			'BEGIN { printf "%.3f\n", c / hz / (2 * b / 1073741824) }' >> "$T/cpu.$1"
	fi
}
conns() { # TARGET
	v=$("$LOAD" cps "$(addr_of $1)" 8 "$SECS" 2>>"$T/cps.err") && echo "$v" >> "$T/cps.$1"
}
latency() { # TARGET CONNS
	v=$("$LOAD" lat "$(addr_of $1)" $2 "$SECS") && {
		echo "$v" | awk '{ print $1 }' >> "$T/lat$2p50.$1"
		echo "$v" | awk '{ print $2 }' >> "$T/lat$2p99.$1"
	}
}
idle() { # TARGET
	p=$(relay_pid $1)
	[ -n "$p" ] || return 0
	# socat's PSS is measured once, as it comes: the buffer size does not
	# change a thousand processes.
	[ "$1" = socatb ] && return 0
	[ "$1" = floor ] && return 0
	rm -f "$T/hold"
	mkfifo "$T/hold"
	"$LOAD" idle "$(addr_of $1)" "$IDLE" < "$T/hold" > "$T/idle.out" &
	ipid=$!
	exec 9> "$T/hold"
	i=0
	until grep -q ready "$T/idle.out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 $ipid 2>/dev/null; then
			echo "bench-bridge: $1: $IDLE idle connections did not come up" >&2
			break
		fi
		sleep 0.1
	done
	if grep -q ready "$T/idle.out" 2>/dev/null; then
		pss_kb "$p" $(pgrep -P "$p") >> "$T/pss.$1"
	fi
	exec 9>&-
	wait $ipid
	# Let socat's children exit before the next test.
	i=0
	while [ -n "$(pgrep -P "$p")" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}

STEAL0=$(steal_ticks)
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	echo "bench-bridge: round $r (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	for t in $TARGETS; do bulk $t; done
	for t in $TARGETS; do conns $t; done
	for t in $TARGETS; do latency $t 1; done
	for t in $TARGETS; do latency $t 64; done
	for t in $TARGETS; do idle $t; done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
check() { # VALUE OP LIMIT
	awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
		if (v == "-") { print "n/a"; exit }
		ok = (op == ">=") ? v >= l : v <= l
		print ok ? "met" : "NOT MET" }'
}

# Time the hypervisor gave to others ("steal") is taken from every relay
# measured, unevenly: a run with much of it is a noisy one.
echo "bench-bridge: the host took $(steal_share "$STEAL0") of this machine's CPU time during the rounds (steal)"
echo
if [ -n "$BASE" ]; then
	printf '%-26s %11s %11s %11s %11s %11s %11s %11s %9s\n' "median of $ROUNDS" direct-tcp direct-unix bridge bridge-base socat socat-256k floor br/base
else
	printf '%-26s %11s %11s %11s %11s %11s %11s\n' "median of $ROUNDS" direct-tcp direct-unix bridge socat socat-256k floor
fi
for m in up down cps lat1p50 lat1p99 lat64p50 lat64p99 pss cpu; do
	case $m in
	up) label="throughput up (MB/s)" ;;
	down) label="throughput down (MB/s)" ;;
	cps) label="connections/s (8 clients)" ;;
	lat1p50) label="latency 1 conn p50 (us)" ;;
	lat1p99) label="latency 1 conn p99 (us)" ;;
	lat64p50) label="latency 64 conn p50 (us)" ;;
	lat64p99) label="latency 64 conn p99 (us)" ;;
	pss) label="PSS, $IDLE idle (kB)" ;;
	cpu) label="CPU s per GiB" ;;
	esac
	printf '%-26s' "$label"
	for t in $TARGETS; do
		v=$(median "$T/$m.$t" 2>/dev/null || echo -)
		[ -s "$T/$m.$t" ] || v=-
		eval "M_${m}_$t=\$v"
		printf ' %11s' "$v"
	done
	[ -n "$BASE" ] && eval "printf ' %9s' \"\$(ratio \"\$M_${m}_bridge\" \"\$M_${m}_base\")\""
	printf '\n'
done

echo
echo "targets (ratios in this run):"
tgt() { printf '  %-44s %8s  %s\n' "$1" "$2" "$3"; }
x=$(ratio "$M_up_bridge" "$M_up_socat");        tgt "throughput up: bridge/socat >= 2.5" "$x" "$(check "$x" '>=' 2.5)"
x=$(ratio "$M_down_bridge" "$M_down_socat");    tgt "throughput down: bridge/socat >= 2.5" "$x" "$(check "$x" '>=' 2.5)"
x=$(ratio "$M_up_bridge" "$M_up_socatb");       tgt "throughput up: bridge/socat-256k >= 1.2" "$x" "$(check "$x" '>=' 1.2)"
x=$(ratio "$M_down_bridge" "$M_down_socatb");   tgt "throughput down: bridge/socat-256k >= 1.2" "$x" "$(check "$x" '>=' 1.2)"
x=$(ratio "$M_up_bridge" "$M_up_tcp");          tgt "throughput up: bridge/direct TCP >= 0.5" "$x" "$(check "$x" '>=' 0.5)"
x=$(ratio "$M_down_bridge" "$M_down_tcp");      tgt "throughput down: bridge/direct TCP >= 0.5" "$x" "$(check "$x" '>=' 0.5)"
x=$(ratio "$M_cps_bridge" "$M_cps_socat");      tgt "connections/s: bridge/socat >= 5" "$x" "$(check "$x" '>=' 5)"
x=$(ratio "$M_lat64p99_bridge" "$M_lat64p99_tcp"); tgt "p99 latency, 64 conns: bridge/direct TCP <= 2" "$x" "$(check "$x" '<=' 2)"
x=$(awk -v v="$M_pss_bridge" 'BEGIN { if (v == "-") print "-"; else printf "%.1f", v / 1024 }')
tgt "PSS with $IDLE idle: bridge MB <= 8" "$x" "$(check "$x" '<=' 8)"
x=$(awk -v v="$M_pss_socat" 'BEGIN { if (v == "-") print "-"; else printf "%.1f", v / 1024 }')
tgt "  (socat's PSS with $IDLE idle, MB)" "$x" ""
x=$(ratio "$M_cpu_bridge" "$M_cpu_socat");      tgt "CPU per GiB: bridge/socat <= 0.5" "$x" "$(check "$x" '<=' 0.5)"
tgt "CPU per GiB: bridge s <= 0.3" "$M_cpu_bridge" "$(check "$M_cpu_bridge" '<=' 0.3)"
# What each relay adds to a direct echo is its p50 less direct TCP's.
x=$(awk -v b="$M_lat1p50_bridge" -v s="$M_lat1p50_socatb" 'BEGIN {
	if (b == "-" || s == "-") print "-"; else printf "%.1f", b - s }')
tgt "p50 added to one echo: bridge - socat-256k <= 0 us" "$x" "$(check "$x" '<=' 0)"

# The same goals met by the floor relay, or not: one it misses is out of
# reach on this machine.
echo
echo "the floor relay against the same goals (ratios in this run):"
floor_tgt() { # LABEL FLOOR-VALUE OP LIMIT BRIDGE-VALUE
	v=$(check "$2" "$3" "$4")
	case $v in
	met) w="the floor meets it" ;;
	n/a) w="not measured" ;;
	*) w="the floor misses it: out of reach on this machine" ;;
	esac
	printf '  %-44s %8s  %s (bridge %s)\n' "$1" "$2" "$w" "$5"
}
floor_tgt "throughput up: floor/socat-256k >= 1.2" "$(ratio "$M_up_floor" "$M_up_socatb")" '>=' 1.2 \
	"$(ratio "$M_up_bridge" "$M_up_socatb")"
floor_tgt "throughput down: floor/socat-256k >= 1.2" "$(ratio "$M_down_floor" "$M_down_socatb")" '>=' 1.2 \
	"$(ratio "$M_down_bridge" "$M_down_socatb")"
floor_tgt "connections/s: floor/socat >= 5" "$(ratio "$M_cps_floor" "$M_cps_socat")" '>=' 5 \
	"$(ratio "$M_cps_bridge" "$M_cps_socat")"
floor_tgt "CPU per GiB: floor s <= 0.3" "$M_cpu_floor" '<=' 0.3 "$M_cpu_bridge"

echo
if [ ! -x "$PROXY" ]; then
	echo "chain: skipped: $PROXY is not built (curl -> relay -> postern-proxy -> upstream needs it)"
	exit 0
fi
# The whole chain: the same client through a relay into postern-proxy's
# UNIX socket, a CONNECT tunnel to the same server (and the proxy's socket
# directly, as the baseline); then curl's plain-HTTP forward path to a small
# HTTP upstream, 200 requests.
command -v curl >/dev/null || { echo "chain: skipped: curl is not installed"; exit 0; }
mkdir -p "$T/www"
head -c 1024 /dev/zero > "$T/www/f"
( cd "$T/www" && exec python3 -m http.server --bind 127.0.0.1 0 ) > "$T/http.out" 2>&1 &
PIDS="$PIDS $!"
i=0
until UP_PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$T/http.out" 2>/dev/null | head -n 1) && [ -n "$UP_PORT" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "chain: skipped: the HTTP upstream did not start"; exit 0; }
	sleep 0.1
done
"$PROXY" --allow "127.0.0.1:$SERVER_PORT private" --allow "127.0.0.1:$UP_PORT private" \
	--listen "unix:$T/proxy.sock" 2>"$T/proxy.log" &
PIDS="$PIDS $!"
i=0
while [ ! -S "$T/proxy.sock" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "chain: skipped: postern-proxy did not start (see its log)"; tail -n 5 "$T/proxy.log"; exit 0; }
	sleep 0.1
done
CB_PORT=$(free_port)
"$BRIDGE" --connect "$T/proxy.sock" --listen "127.0.0.1:$CB_PORT" 2>>"$T/bridge.err" &
PIDS="$PIDS $!"
CS_PORT=$(free_port)
socat -lf "$T/socat2.log" TCP-LISTEN:"$CS_PORT",fork,reuseaddr,bind=127.0.0.1,backlog=4096 \
	UNIX-CONNECT:"$T/proxy.sock" &
PIDS="$PIDS $!"
wait_port "$CB_PORT"
wait_port "$CS_PORT"

chain_addr() {
	case $1 in
	proxy) echo "unix:$T/proxy.sock" ;;
	bridge) echo "tcp:127.0.0.1:$CB_PORT" ;;
	socat) echo "tcp:127.0.0.1:$CS_PORT" ;;
	esac
}
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	echo "chain: round $r (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	for t in proxy bridge socat; do
		a=$(chain_addr $t)
		export BRIDGE_LOAD_CONNECT="127.0.0.1:$SERVER_PORT"
		v=$("$LOAD" up "$a" "$BYTES") && echo "$v" >> "$T/c-up.$t"
		v=$("$LOAD" down "$a" "$BYTES") && echo "$v" >> "$T/c-down.$t"
		v=$("$LOAD" lat "$a" 1 "$SECS") && {
			echo "$v" | awk '{ print $1 }' >> "$T/c-lat1p50.$t"
			echo "$v" | awk '{ print $2 }' >> "$T/c-lat1p99.$t"
		}
		unset BRIDGE_LOAD_CONNECT
		if [ $t != proxy ]; then
			port=$CB_PORT
			[ $t = socat ] && port=$CS_PORT
			v=$(curl -s -o /dev/null -w '%{http_code}\n' -x "http://127.0.0.1:$port" \
				"http://127.0.0.1:$UP_PORT/f?[1-200]" 2>/dev/null | grep -c '^200$')
			if [ "$v" = 200 ]; then
				s0=$(date +%s.%N)
				curl -s -o /dev/null -x "http://127.0.0.1:$port" "http://127.0.0.1:$UP_PORT/f?[1-200]"
				s1=$(date +%s.%N)
				awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.0f\n", 200 / (b - a) }' >> "$T/c-curl.$t"
			else
				echo "chain: $t: only $v of 200 curl requests got 200"
			fi
		fi
	done
done
echo
printf '%-26s %11s %11s %11s %9s\n' "chain, median of $ROUNDS" proxy-direct bridge socat br/socat
for m in up down lat1p50 lat1p99 curl; do
	case $m in
	up) label="tunnel up (MB/s)" ;;
	down) label="tunnel down (MB/s)" ;;
	lat1p50) label="tunnel latency p50 (us)" ;;
	lat1p99) label="tunnel latency p99 (us)" ;;
	curl) label="curl forward req/s" ;;
	esac
	printf '%-26s' "$label"
	for t in proxy bridge socat; do
		v=-
		[ -s "$T/c-$m.$t" ] && v=$(median "$T/c-$m.$t")
		eval "C_${m}_$t=\$v"
		printf ' %11s' "$v"
	done
	eval "printf ' %9s\\n' \"\$(ratio \"\$C_${m}_bridge\" \"\$C_${m}_socat\")\""
done
exit 0
