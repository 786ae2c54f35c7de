#!/bin/sh
# tests/bench/bench-proxy.sh: postern-proxy side by side with tinyproxy and
# squid (each given the same allowlist: CONNECT and plain HTTP to the bench
# server's two ports on 127.0.0.1, nothing else) and a direct TCP baseline,
# against the same server and with the same client (tests/bench/proxy-load,
# wrk for plain HTTP), in one run; BENCH_ROUNDS rounds (3), medians.
#
#   bulk up/down   one tunnel, BENCH_BYTES (1 GiB) each way, MB/s
#   tunnels/s      CONNECT + 64-byte echo + close, 8 clients at once
#   HTTP req/s     wrk, 1 thread, 32 keep-alive connections, absolute-form
#   latency        64-byte ping-pong inside 1 and 64 established tunnels,
#                  p50/p99 in microseconds
#   PSS/tunnel     (Pss of the proxy and its children with BENCH_IDLE (1000)
#                  idle tunnels - Pss just before) / BENCH_IDLE, in kB
#   CPU s/GiB      the proxy's user+system CPU (all threads, reaped
#                  children) during the two bulk streams, per GiB relayed
#   CPU µs/op      the same during tunnels/s, req/s and refusals/s, per
#                  tunnel, request and refusal (rate x seconds)
#   cores busy     the whole machine's busy time (user, system, interrupts,
#                  steal) during each bulk stream, in cores: the client,
#                  the server and the proxy share them, so a stream that
#                  keeps every core busy is at the machine's limit
#   tunnel floor   the same tunnels/s through proxy-load's floor relay (a
#                  CONNECT relay that reads the head, connects, answers
#                  200, relays with read/write and closes, nothing else),
#                  its CPU per tunnel and its 64-tunnel latency: what one
#                  event loop can do on this machine at all, in the direct
#                  column; and the two bulk streams through it (its reads
#                  as large as postern's copy relay's largest, 1 MiB),
#                  their MB/s and its CPU per GiB: what relaying a byte
#                  through two sockets costs at all
#   duty floor     the floor relay with what postern must do on every
#                  tunnel besides, at its least (proxy-load floor ... duty):
#                  the half-close (shutdown(2) on one side's EOF, both
#                  closed at the second) and an audit line each way of
#                  postern's length (the decision line written before
#                  the 200, the close lines of tunnels ended meanwhile in
#                  the same write(2)); its tunnels/s and CPU per tunnel in
#                  the direct column: what the duties cost on this machine,
#                  before any decision is made
#   refusals/s     CONNECT to a host no rule allows, read the 403 head,
#                  close; 8 clients at once.  In the direct column the
#                  refusal floor: the bench server's third port answers
#                  every head with a 403 and closes, doing nothing else
#   half-close     the client shuts down its write side; does the server's
#                  answer still come back through the tunnel?
#   head bytewise  postern only: its CPU for two 27 KB plain-HTTP request
#                  heads and for twenty 2.7 KB ones, each written one byte
#                  per write(2) with TCP_NODELAY on a keep-alive connection
#                  (the same bytes, the same writes), and the ratio of the
#                  two, which is about 1 when a head costs CPU in
#                  proportion to its length and grows with the length when
#                  every read parses the head again from its start
#   past the floor after the table: each goal on tunnels/s, CPU per
#                  tunnel, refusals/s, the 64-tunnel p99 and CPU per GiB
#                  beside the floor's own figure, and whether the floor
#                  meets it (a goal the floor misses is out of any
#                  proxy's reach on this machine), with the kernel's share
#                  of the CPU (stime of utime+stime) of postern and the
#                  floor relay
#
# BENCH_ONLY=head runs only the last case (no tinyproxy, squid or wrk
# needed).
#
# BENCH_BASE=/path/to/an/older/postern-proxy: a before/after in one run.
# That binary runs as one more target, "postern-base", in the same rounds
# and with the same config (its own port and audit log), head bytewise
# included; the table gains its column and a "postern ÷ postern-base"
# ratio (so a change is judged against its base under the same load, not
# against a number from another day).  Build the base from an older commit
# in a clone of its own, e.g. git clone -q . /tmp/base && git -C /tmp/base
# checkout -q REV && (cd /tmp/base && autoreconf -fi && ./configure -q &&
# make postern-proxy), then BENCH_BASE=/tmp/base/postern-proxy make bench.
#
# BENCH_WORKERS=N: postern runs with workers = N (event loops; unset: the
# config's default, 1).  postern-base never gets it, so
# BENCH_WORKERS=2 BENCH_BASE=$top_builddir/postern-proxy compares two
# workers against one of the same build in the same rounds.
#
# Everything runs in a private network namespace (unshare -n) with only
# loopback in it, so no byte can leave the machine, the TIME_WAIT sockets of
# hundreds of thousands of short connections stay out of the host's tables,
# and nothing collides with a system squid or tinyproxy.  Needs root.
# Bounded: every client run by timeout(1), the whole bench by BENCH_LIMIT
# seconds (570).  BENCH_KEEP=1 keeps the temporary directory (configs, logs,
# one raw value per round in METRIC.TARGET).  Not part of "make check":
# "make bench-proxy".
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"

if [ -z "${BENCH_IN_NETNS:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-proxy: needs root (a private network namespace, squid's user switch)" >&2
		exit 1
	fi
	command -v unshare >/dev/null || { echo "bench-proxy: unshare(1) is missing" >&2; exit 1; }
	BENCH_IN_NETNS=1
	export BENCH_IN_NETNS top_builddir top_srcdir
	exec unshare -n -- sh "$0" "$@"
fi

LOAD="$top_builddir/tests/bench/proxy-load"
POSTERN="$top_builddir/postern-proxy"
LUA="$top_srcdir/tests/bench/wrk-proxy.lua"
ROUNDS=${BENCH_ROUNDS:-3}
BYTES=${BENCH_BYTES:-1073741824}
SECS=${BENCH_SECONDS:-2}
IDLE=${BENCH_IDLE:-1000}
LIMIT=${BENCH_LIMIT:-570}
ONLY=${BENCH_ONLY:-}
BASE=${BENCH_BASE:-}
# One more target takes its share of each round.
[ -n "$BASE" ] && [ -z "${BENCH_LIMIT:-}" ] && LIMIT=720
BULK_MAX=15		# seconds a bulk stream may take before it is cut
HZ=$(getconf CLK_TCK)

for x in "$LOAD" "$POSTERN"; do
	[ -x "$x" ] || { echo "bench-proxy: $x is not built" >&2; exit 1; }
done
if [ -n "$BASE" ] && [ ! -x "$BASE" ]; then
	echo "bench-proxy: BENCH_BASE=$BASE is not an executable" >&2
	exit 1
fi
case $ONLY in
'') NEED="squid tinyproxy wrk ip ss timeout" ;;
head) NEED="ip ss timeout" ;;
*) echo "bench-proxy: BENCH_ONLY is empty or head" >&2; exit 1 ;;
esac
for c in $NEED; do
	command -v $c >/dev/null || { echo "bench-proxy: $c is not installed" >&2; exit 1; }
done

# On tmpfs when there is one: tinyproxy fsync()s its log after every line,
# and the bench should compare relays, not the disk under the logs.  Every
# proxy logs one line or more per connection, as it would in service.
TMPBASE=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && TMPBASE=/dev/shm
T=$(mktemp -d "$TMPBASE/postern-bench-proxy.XXXXXX")
chmod 755 "$T"	# squid and tinyproxy drop to proxy and nobody
PIDS=""
WATCHDOG=""
descendants() { # PID: the PID and all its descendants
	echo "$1"
	for c in $(pgrep -P "$1" 2>/dev/null); do descendants "$c"; done
}
cleanup() {
	# The watchdog's sleep too: it holds our stdout, and make would wait.
	[ -n "$WATCHDOG" ] && for d in $(descendants "$WATCHDOG"); do kill "$d" 2>/dev/null; done
	for p in $PIDS; do
		for d in $(descendants "$p"); do kill "$d" 2>/dev/null; done
	done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -f "$T/hold"
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench-proxy: logs and raw values kept in $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'echo "bench-proxy: stopped" >&2; exit 1' INT TERM HUP

# The whole run is bounded; a client is bounded by timeout(1), so the TERM
# trap runs within seconds.
( sleep "$LIMIT"; echo "bench-proxy: over ${LIMIT}s, stopping" >&2; kill -TERM $$ ) &
WATCHDOG=$!

ip link set lo up || { echo "bench-proxy: cannot bring lo up" >&2; exit 1; }
# This namespace's own port range and TIME_WAIT reuse: tunnels/s opens two
# connections per tunnel, far more than the default range holds for 60 s.
sysctl -qw net.ipv4.ip_local_port_range="1024 65000" 2>/dev/null
sysctl -qw net.ipv4.tcp_tw_reuse=1 2>/dev/null
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null

wait_listen() { # PORT NAME PID
	i=0
	until ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$3" 2>/dev/null; then
			echo "bench-proxy: $2 does not listen on $1; its log:" >&2
			cat "$T/$2.err" "$T/$2/"*.log 2>/dev/null | tail -20 >&2
			exit 1
		fi
		sleep 0.1
	done
}

wait_portfile() { # FILE WHAT: wait for proxy-load's port file, 5 s at most
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-proxy: $2 did not start" >&2; exit 1; }
		sleep 0.1
	done
}

# The server: raw protocol, HTTP and refusal-floor ports.
"$LOAD" serve "$T/ports" 2>"$T/server.err" &
SERVER_PID=$!
PIDS=$SERVER_PID
wait_portfile "$T/ports" server
read -r RAW HTTP REFUSE < "$T/ports"
UP_RAW="127.0.0.1:$RAW"
UP_HTTP="127.0.0.1:$HTTP"
REFUSED="refused.invalid:$RAW"	# a name no proxy allows, on an allowed port

# The tunnel floor: proxy-load's least CONNECT relay (head, connect, 200,
# read/write, close; nothing else), to the server's raw port.
"$LOAD" floor "$T/floorport" "$UP_RAW" 2>"$T/floor.err" &
FLOOR_PID=$!
PIDS="$SERVER_PID $FLOOR_PID"
wait_portfile "$T/floorport" "the floor relay"
read -r FLOOR < "$T/floorport"
# The duty floor: the same relay with the half-close and audit lines.
"$LOAD" floor "$T/dutyport" "$UP_RAW" duty "$T/duty-audit.log" 2>"$T/duty.err" &
DUTY_PID=$!
PIDS="$SERVER_PID $FLOOR_PID $DUTY_PID"
wait_portfile "$T/dutyport" "the duty floor"
read -r DUTY < "$T/dutyport"

PX_PORT=18080
TP_PORT=18081
SQ_PORT=18082
PB_PORT=18083

# postern: the two upstreams as IP-literal rules (no DNS, like the peers);
# unprivileged after binding, like the peers.  Its audit log is in a
# directory of its own, as in a deployment (/etc/postern/postern.ini,
# /var/log/postern/audit.log): postern watches its config's directory,
# and every audit line written there would queue an inotify event in the
# writing system call (wrk -c32: 18.6 against 21.9 us CPU a request).
mkdir "$T/log"
cat > "$T/postern.ini" <<EOF
[proxy]
listen = tcp:127.0.0.1:$PX_PORT
user = 65534:65534
log = $T/log/postern-audit.log
max_connections = 10000
${BENCH_WORKERS:+workers = $BENCH_WORKERS}

[defaults]
max_connections = 10000
allow_hosts = 127.0.0.1:$RAW, 127.0.0.1:$HTTP
EOF
# The base: the same config but for its port and its audit log, its
# config in a directory of its own: each postern watches its config's
# directory, and one that saw the other's config directory change would
# spend the other's measurement waking for it.  A key
# newer than the base (its --check names the line) is left out for it,
# and said: [defaults] max_connections, say, only lifts a share the base
# does not have.
if [ -n "$BASE" ]; then
	mkdir "$T/base"
	sed -e "s|^listen = .*|listen = tcp:127.0.0.1:$PB_PORT|" \
		-e "s|^log = .*|log = $T/log/postern-base-audit.log|" -e '/^workers = /d' \
		"$T/postern.ini" > "$T/base/postern-base.ini"
	i=0
	until "$BASE" --check -c "$T/base/postern-base.ini" >/dev/null 2>"$T/postern-base.check"; do
		n=$(sed -n "s|^$T/base/postern-base.ini:\([0-9][0-9]*\):.*|\1|p" "$T/postern-base.check" | head -1)
		i=$((i + 1))
		if [ -z "$n" ] || [ $i -gt 5 ]; then
			echo "bench-proxy: postern-base refuses the config:" >&2
			cat "$T/postern-base.check" >&2
			exit 1
		fi
		echo "bench-proxy: postern-base: left out \"$(sed -n "${n}p" "$T/base/postern-base.ini")\" ($(head -1 "$T/postern-base.check" | sed 's|^[^ ]* ||'))"
		sed -i "${n}d" "$T/base/postern-base.ini"
	done
fi

# tinyproxy: host filter with default deny, CONNECT only to the raw port.
mkdir "$T/tinyproxy"
chown nobody:nogroup "$T/tinyproxy"
printf '^127\\.0\\.0\\.1$\n' > "$T/tinyproxy/filter"
cat > "$T/tinyproxy/tinyproxy.conf" <<EOF
User nobody
Group nogroup
Port $TP_PORT
Listen 127.0.0.1
Timeout 600
MaxClients 4096
LogFile "$T/tinyproxy/tinyproxy.log"
LogLevel Connect
PidFile "$T/tinyproxy/tinyproxy.pid"
Filter "$T/tinyproxy/filter"
FilterType ere
FilterURLs Off
FilterDefaultDeny Yes
ConnectPort $RAW
EOF

# squid: the same two authorities, memory only, no cache of responses.
mkdir "$T/squid"
chown proxy:proxy "$T/squid"
cat > "$T/squid/squid.conf" <<EOF
http_port 127.0.0.1:$SQ_PORT
pid_filename $T/squid/squid.pid
cache_log $T/squid/cache.log
access_log stdio:$T/squid/access.log
cache_store_log none
netdb_filename none
coredump_dir $T/squid
cache_effective_user proxy
cache deny all
pinger_enable off
shutdown_lifetime 0 seconds
max_filedescriptors 16384
dns_nameservers 127.0.0.1
acl bench_dst dstdomain -n 127.0.0.1
acl bench_ports port $RAW $HTTP
http_access deny !bench_ports
http_access allow bench_dst
http_access deny all
EOF

# Each round starts every proxy afresh: the rounds are independent, and the
# idle-tunnel PSS is measured first, before earlier tests have grown (and
# kept) a heap that would hide the cost of the tunnels.
start_proxies() {
	"$POSTERN" -c "$T/postern.ini" 2>>"$T/postern.err" &
	PX_PID=$!
	tinyproxy -d -c "$T/tinyproxy/tinyproxy.conf" >>"$T/tinyproxy.err" 2>&1 &
	TP_PID=$!
	squid -N -f "$T/squid/squid.conf" >>"$T/squid.err" 2>&1 &
	SQ_PID=$!
	PB_PID=
	if [ -n "$BASE" ]; then
		"$BASE" -c "$T/base/postern-base.ini" 2>>"$T/postern-base.err" &
		PB_PID=$!
	fi
	PIDS="$SERVER_PID $FLOOR_PID $DUTY_PID $PX_PID $TP_PID $SQ_PID $PB_PID"
	wait_listen $PX_PORT postern $PX_PID
	wait_listen $TP_PORT tinyproxy $TP_PID
	wait_listen $SQ_PORT squid $SQ_PID
	[ -n "$BASE" ] && wait_listen $PB_PORT postern-base $PB_PID
}
stop_proxies() {
	for p in $PX_PID $TP_PID $SQ_PID $PB_PID; do
		for d in $(descendants "$p"); do kill "$d" 2>/dev/null; done
	done
	for p in $PX_PID $TP_PID $SQ_PID $PB_PID; do wait "$p" 2>/dev/null; done
	PIDS="$SERVER_PID $FLOOR_PID $DUTY_PID"
}

proxy_of() {
	case $1 in
	direct) echo - ;;
	postern) echo "127.0.0.1:$PX_PORT" ;;
	base) echo "127.0.0.1:$PB_PORT" ;;
	tinyproxy) echo "127.0.0.1:$TP_PORT" ;;
	squid) echo "127.0.0.1:$SQ_PORT" ;;
	esac
}
pid_of() {
	case $1 in
	postern) echo $PX_PID ;; base) echo $PB_PID ;; tinyproxy) echo $TP_PID ;; squid) echo $SQ_PID ;;
	esac
}

cpu_ticks() { # PID [sys]: utime+stime+cutime+cstime of PID and its descendants
	# (with "sys": the kernel's part only, stime+cstime)
	for d in $(descendants "$1"); do
		cat "/proc/$d/stat" 2>/dev/null
	done | awk -v sys="${2:-}" '{ sub(/.*\) /, ""); t += sys != "" ? $13 + $15 : $12 + $13 + $14 + $15 }
		END { print t + 0 }'
}
sys_share() { # PID TICKS-BEFORE SYS-TICKS-BEFORE: the kernel's % of PID's CPU since
	awk -v c=$(($(cpu_ticks "$1") - $2)) -v k=$(($(cpu_ticks "$1" sys) - $3)) \
		'BEGIN { if (c <= 0) print "-"; else printf "%.1f\n", 100 * k / c }'
}
machine_ticks() { # the machine's busy and total ticks since boot (steal counts as busy:
	# those cycles were not the bench's to use)
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}
steal_ticks() { # the machine's steal ticks and all its ticks since boot
	awk '/^cpu / { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}
steal_share() { # "STEAL TOTAL" (steal_ticks) at the start: the steal's % since then
	echo "$1 $(steal_ticks)" | awk '{ t = $4 - $2; if (t > 0) printf "%.1f%%\n", 100 * ($3 - $1) / t; else print "-" }'
}
cores_busy() { # BEFORE AFTER (machine_ticks each): cores kept busy in between
	echo "$1 $2" | awk -v n="$(nproc)" '{ t = $4 - $2; if (t > 0) printf "%.2f\n", ($3 - $1) / t * n; else print "-" }'
}
pss_kb() { # PID: summed Pss of PID and its descendants, kB
	for d in $(descendants "$1"); do
		awk '/^Pss:/ { print $2 }' "/proc/$d/smaps_rollup" 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}
# The proxy's CPU per operation of a timed test, in microseconds: less
# sensitive than the rate to whatever else the machine is running.
per_gib() { # PID TICKS-BEFORE UP DOWN (the bulk client's "BYTES SECONDS MB/s" each):
	# PID's CPU seconds since per GiB relayed
	echo "$3 $4" | awk -v c=$(($(cpu_ticks "$1") - $2)) -v hz="$HZ" \
		'{ printf "%.3f\n", c / hz / (($1 + $4) / 1073741824) }'
}
per_op() { # PID TICKS-BEFORE RATE
	awk -v c=$(($(cpu_ticks "$1") - $2)) -v hz="$HZ" -v r="$3" -v s="$SECS" \
		'BEGIN { if (r + 0 == 0) print "-"; else printf "%.1f\n", c / hz * 1e6 / (r * s) }'
}
median() { # FILE
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'
}
run() { # NAME METRIC CMD...: run a client, bounded; log failures
	name=$1 metric=$2
	shift 2
	if ! timeout 60 "$@" 2>>"$T/$name.client.err"; then
		echo "bench-proxy: $name: $metric failed: $(tail -1 "$T/$name.client.err")" >&2
		return 1
	fi
}

idle_pss() { # NAME PROXY PID: Pss per idle tunnel, kB
	t=$1 px=$2 pid=$3
	# Pss just before, and with all of them open.
	rm -f "$T/hold" "$T/idle.out"
	mkfifo "$T/hold"
	p0=$(pss_kb "$pid")
	timeout 120 "$LOAD" idle "$px" "$UP_RAW" "$IDLE" < "$T/hold" > "$T/idle.out" 2>>"$T/$t.client.err" &
	ipid=$!
	exec 9> "$T/hold"
	i=0
	until grep -q ready "$T/idle.out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 $ipid 2>/dev/null; then
			echo "bench-proxy: $t: $IDLE idle tunnels did not come up: $(tail -1 "$T/$t.client.err")" >&2
			break
		fi
		sleep 0.1
	done
	if grep -q ready "$T/idle.out" 2>/dev/null; then
		sleep 0.3	# let the proxy settle (threads, buffers)
		p1=$(pss_kb "$pid")
		awk -v a="$p0" -v b="$p1" -v n="$IDLE" 'BEGIN { printf "%.1f\n", (b - a) / n }' >> "$T/pss.$t"
	fi
	exec 9>&-
	wait $ipid 2>/dev/null
	sleep 0.5	# the proxy closes the other ends before the next test
}

# "base" is BENCH_BASE, shown as postern-base.
TARGETS="direct postern tinyproxy squid"
[ -n "$BASE" ] && TARGETS="direct postern base tinyproxy squid"
echo "bench-proxy: $ROUNDS rounds; bulk $BYTES bytes each way; ${SECS}s per timed test; $IDLE idle tunnels"
echo "bench-proxy: $(nproc) CPUs, kernel $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "${BENCH_WORKERS:-}" ] || echo "bench-proxy: postern runs with workers = $BENCH_WORKERS"
rev=$(git -C "$top_srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -z "$ONLY" ]; then
	echo "bench-proxy: $("$POSTERN" --version 2>&1 | head -1) (tree at $rev); $(tinyproxy -v 2>&1 | head -1); $(squid -v | head -1)"
else
	echo "bench-proxy: $("$POSTERN" --version 2>&1 | head -1) (tree at $rev); only: $ONLY"
fi
if [ -n "$BASE" ]; then
	brev=$(git -C "$(dirname "$BASE")" rev-parse --short HEAD 2>/dev/null || echo unknown)
	echo "bench-proxy: postern-base: $BASE, $("$BASE" --version 2>&1 | head -1) (tree at $brev)"
fi
START=$(date +%s)
STEAL0=$(steal_ticks)

r=0
MAIN_ROUNDS=$ROUNDS
[ -n "$ONLY" ] && MAIN_ROUNDS=0
while [ $r -lt "$MAIN_ROUNDS" ]; do
	r=$((r + 1))
	echo "bench-proxy: round $r ($(($(date +%s) - START))s)"
	start_proxies
	for t in $TARGETS; do
		px=$(proxy_of $t)
		pid=$(pid_of $t)

		[ "$t" = direct ] || idle_pss "$t" "$px" "$pid"

		# Bulk, and the CPU it costs the proxy.
		[ -n "$pid" ] && c0=$(cpu_ticks "$pid") && k0=$(cpu_ticks "$pid" sys)
		m0=$(machine_ticks)
		up=$(run $t "bulk up" "$LOAD" up "$px" "$UP_RAW" "$BYTES" $BULK_MAX) &&
			echo "$up" | awk '{ print $3 }' >> "$T/up.$t"
		m1=$(machine_ticks)
		[ -n "$up" ] && cores_busy "$m0" "$m1" >> "$T/busyup.$t"
		down=$(run $t "bulk down" "$LOAD" down "$px" "$UP_RAW" "$BYTES" $BULK_MAX) &&
			echo "$down" | awk '{ print $3 }' >> "$T/down.$t"
		m2=$(machine_ticks)
		[ -n "$down" ] && cores_busy "$m1" "$m2" >> "$T/busydown.$t"
		if [ -n "$pid" ] && [ -n "$up" ] && [ -n "$down" ]; then
			sleep 0.2	# let the proxy close both tunnels
			per_gib "$pid" "$c0" "$up" "$down" >> "$T/cpu.$t"
			sys_share "$pid" "$c0" "$k0" >> "$T/syscpu.$t"
		fi
		if [ "$t" = direct ]; then
			# The same two streams through the floor relay: a copy
			# relay with postern's largest read, nothing else.
			c0=$(cpu_ticks "$FLOOR_PID") k0=$(cpu_ticks "$FLOOR_PID" sys)
			up=$(run floor "bulk up" "$LOAD" up "127.0.0.1:$FLOOR" "$UP_RAW" "$BYTES" $BULK_MAX) &&
				echo "$up" | awk '{ print $3 }' >> "$T/upfloor.$t"
			down=$(run floor "bulk down" "$LOAD" down "127.0.0.1:$FLOOR" "$UP_RAW" "$BYTES" $BULK_MAX) &&
				echo "$down" | awk '{ print $3 }' >> "$T/downfloor.$t"
			if [ -n "$up" ] && [ -n "$down" ]; then
				sleep 0.2
				per_gib "$FLOOR_PID" "$c0" "$up" "$down" >> "$T/cpufloor.$t"
				sys_share "$FLOOR_PID" "$c0" "$k0" >> "$T/syscpufloor.$t"
			fi
		fi

		[ -n "$pid" ] && c0=$(cpu_ticks "$pid") && k0=$(cpu_ticks "$pid" sys)
		v=$(run $t "tunnels/s" "$LOAD" tps "$px" "$UP_RAW" 8 "$SECS") && {
			echo "$v" >> "$T/tps.$t"
			[ -n "$pid" ] && per_op "$pid" "$c0" "$v" >> "$T/cputps.$t" &&
				sys_share "$pid" "$c0" "$k0" >> "$T/systps.$t"
		}
		if [ "$t" = direct ]; then
			c0=$(cpu_ticks "$FLOOR_PID") k0=$(cpu_ticks "$FLOOR_PID" sys)
			v=$(run floor "tunnels/s" "$LOAD" tps "127.0.0.1:$FLOOR" "$UP_RAW" 8 "$SECS") && {
				echo "$v" >> "$T/tpsfloor.direct"
				per_op "$FLOOR_PID" "$c0" "$v" >> "$T/cputpsfloor.direct"
				sys_share "$FLOOR_PID" "$c0" "$k0" >> "$T/systpsfloor.direct"
			}
			c0=$(cpu_ticks "$DUTY_PID") k0=$(cpu_ticks "$DUTY_PID" sys)
			v=$(run duty "tunnels/s" "$LOAD" tps "127.0.0.1:$DUTY" "$UP_RAW" 8 "$SECS") && {
				echo "$v" >> "$T/tpsduty.direct"
				per_op "$DUTY_PID" "$c0" "$v" >> "$T/cputpsduty.direct"
				sys_share "$DUTY_PID" "$c0" "$k0" >> "$T/systpsduty.direct"
			}
		fi

		if [ "$t" = direct ]; then
			wurl="http://$UP_HTTP/"
			wlua=""
		else
			wurl="http://$px/"
			wlua="-s $LUA"
		fi
		# shellcheck disable=SC2086
		[ -n "$pid" ] && c0=$(cpu_ticks "$pid")
		BENCH_UPSTREAM=$UP_HTTP timeout 60 wrk -t1 -c32 -d"${SECS}s" --timeout 5s $wlua "$wurl" \
			> "$T/wrk.out" 2>&1
		bad=$(awk '/Non-2xx or 3xx responses:/ { print $NF } /Socket errors:/ { print "socket-errors" }' "$T/wrk.out")
		rps=$(awk '/^Requests\/sec:/ { printf "%.0f\n", $2 }' "$T/wrk.out")
		if [ -n "$rps" ]; then
			echo "$rps" >> "$T/rps.$t"
			[ -n "$pid" ] && per_op "$pid" "$c0" "$rps" >> "$T/cpurps.$t"
			[ -n "$bad" ] && echo "bench-proxy: $t: wrk saw errors: $(grep -E 'Non-2xx|Socket errors' "$T/wrk.out" | tr -s ' ' | tr '\n' ' ')" >&2
		else
			echo "bench-proxy: $t: wrk failed: $(tail -2 "$T/wrk.out")" >&2
		fi

		for n in 1 64; do
			v=$(run $t "latency $n" "$LOAD" lat "$px" "$UP_RAW" $n "$SECS") && {
				echo "$v" | awk '{ print $1 }' >> "$T/lat${n}p50.$t"
				echo "$v" | awk '{ print $2 }' >> "$T/lat${n}p99.$t"
			}
		done
		if [ "$t" = direct ]; then
			v=$(run floor "latency 64" "$LOAD" lat "127.0.0.1:$FLOOR" "$UP_RAW" 64 "$SECS") && {
				echo "$v" | awk '{ print $1 }' >> "$T/lat64p50floor.direct"
				echo "$v" | awk '{ print $2 }' >> "$T/lat64p99floor.direct"
			}
		fi

		if [ "$t" = direct ]; then
			# The refusal floor: the bench server's third port answers
			# every head with a 403 and closes, nothing else done.
			v=$(run $t "refusals/s" "$LOAD" refuse "127.0.0.1:$REFUSE" "$REFUSED" 8 "$SECS") &&
				echo "$v" >> "$T/refuse.$t"
			continue
		fi

		c0=$(cpu_ticks "$pid") k0=$(cpu_ticks "$pid" sys)
		v=$(run $t "refusals/s" "$LOAD" refuse "$px" "$REFUSED" 8 "$SECS") && {
			echo "$v" >> "$T/refuse.$t"
			per_op "$pid" "$c0" "$v" >> "$T/cpuref.$t"
			sys_share "$pid" "$c0" "$k0" >> "$T/sysref.$t"
		}

		v=$(timeout 20 "$LOAD" halfclose "$px" "$UP_RAW" 2>>"$T/$t.client.err")
		echo "${v:-no: client failed}" >> "$T/half.$t"
	done
	stop_proxies
done

# Head one byte at a time: postern alone, afresh, ROUNDS rounds.  Two heads
# of 27 KB and twenty of 2.7 KB are the same 55,296 bytes in as many
# writes, so what differs is only how a head's cost grows with its length
# (and twenty requests' fixed costs against two, which favours the big
# heads' side of the ratio).
head_rounds() { # TARGET LABEL BINARY INI PORT
	ht=$1 hl=$2 hbin=$3 hini=$4 hport=$5
	hp=
	[ "$ht" = base ] && hp="postern-base "
	"$hbin" -c "$hini" 2>>"$T/$hl.err" &
	HPID=$!
	PIDS="$SERVER_PID $FLOOR_PID $HPID"
	wait_listen "$hport" "$hl" $HPID
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		echo "bench-proxy: ${hp}head bytewise round $r ($(($(date +%s) - START))s)"
		c0=$(cpu_ticks $HPID)
		run "$ht" "head bytewise 2 x 27 KB" "$LOAD" slowhead "127.0.0.1:$hport" "$UP_HTTP" 2 27648 >/dev/null || continue
		c1=$(cpu_ticks $HPID)
		run "$ht" "head bytewise 20 x 2.7 KB" "$LOAD" slowhead "127.0.0.1:$hport" "$UP_HTTP" 20 2765 >/dev/null || continue
		c2=$(cpu_ticks $HPID)
		awk -v t=$((c1 - c0)) -v hz="$HZ" 'BEGIN { printf "%.0f\n", t / hz * 1000 }' >> "$T/headbig.$ht"
		awk -v t=$((c2 - c1)) -v hz="$HZ" 'BEGIN { printf "%.0f\n", t / hz * 1000 }' >> "$T/headsmall.$ht"
		awk -v a=$((c1 - c0)) -v b=$((c2 - c1)) 'BEGIN { if (b == 0) print "-"; else printf "%.2f\n", a / b }' >> "$T/headratio.$ht"
		echo "bench-proxy: ${hp}head bytewise round $r: $(tail -1 "$T/headbig.$ht") ms, $(tail -1 "$T/headsmall.$ht") ms, ratio $(tail -1 "$T/headratio.$ht")"
	done
	for d in $(descendants "$HPID"); do kill "$d" 2>/dev/null; done
	wait "$HPID" 2>/dev/null
	PIDS="$SERVER_PID $FLOOR_PID $DUTY_PID"
}
head_rounds postern postern "$POSTERN" "$T/postern.ini" $PX_PORT
[ -n "$BASE" ] && head_rounds base postern-base "$BASE" "$T/base/postern-base.ini" $PB_PORT
echo "bench-proxy: done in $(($(date +%s) - START))s, load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
# Time the hypervisor gave to others ("steal") is taken from every program
# measured, unevenly: a run with much of it is a noisy one.
echo "bench-proxy: the host took $(steal_share "$STEAL0") of this machine's CPU time during the run (steal)"

# ---------------------------------------------------------------------------
# The table: medians; ratios are postern / peer (for latency, PSS and CPU,
# lower is better, so a ratio under 1 is postern ahead).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
atleast() { awk -v v="$1" -v l="$2" 'BEGIN { if (v == "-") print "n/a"; else print (v + 0 >= l + 0) ? "met" : "**missed**" }'; }
atmost() { awk -v v="$1" -v l="$2" 'BEGIN { if (v == "-") print "n/a"; else print (v + 0 <= l + 0) ? "met" : "**missed**" }'; }
both() { if [ "$1" = met ] && [ "$2" = met ]; then echo met; elif [ "$1" = n/a ] || [ "$2" = n/a ]; then echo n/a; else echo "**missed**"; fi; }
maxof() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-") print b; else if (b == "-") print a; else print (a + 0 > b + 0) ? a : b }'; }
# The goals, as factors of the peer they name; the table's verdicts
# and the lines past the floor both use them.
GOAL_TPS=2 GOAL_CPUTPS=0.5 GOAL_REFUSE=2 GOAL_P99=1.5 GOAL_CPUGIB=0.4
minof() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-") print b; else if (b == "-") print a; else print (a + 0 < b + 0) ? a : b }'; }

for m in up down upfloor downfloor cpufloor syscpu syscpufloor busyup busydown tps tpsfloor cputpsfloor tpsduty cputpsduty systpsduty rps lat1p50 lat1p99 lat64p50 lat64p99 lat64p50floor lat64p99floor pss cpu refuse cputps cpurps cpuref \
	systps systpsfloor sysref headbig headsmall headratio; do
	for t in $TARGETS; do
		v=-
		[ -s "$T/$m.$t" ] && v=$(median "$T/$m.$t")
		eval "M_${m}_$t=\$v"
	done
done
HALF_TARGETS="postern tinyproxy squid"
[ -n "$BASE" ] && HALF_TARGETS="postern base tinyproxy squid"
for t in $HALF_TARGETS; do
	v=-
	if [ -s "$T/half.$t" ]; then
		if grep -qv '^yes$' "$T/half.$t"; then v=no; else v=yes; fi
	fi
	eval "M_half_$t=\$v"
done

echo
echo "Medians of $ROUNDS rounds; ratios are postern / peer (for latency, PSS and CPU"
echo "lower is better).  tinyproxy answers plain HTTP without keep-alive, so wrk"
echo "reconnects after every response and counts each close as a read error."
# With a base, its column follows postern's and its ratio the others.
BH= BS= BR=
if [ -n "$BASE" ]; then
	echo "postern-base is BENCH_BASE ($BASE, tree at $brev), run in the same rounds;"
	echo "÷postern-base is postern / postern-base."
	BH=" postern-base |" BS="--:|" BR=" ÷postern-base |"
fi
echo
echo "| metric | direct | postern |$BH tinyproxy | squid | ÷direct | ÷tinyproxy | ÷squid |$BR target | |"
echo "|---|--:|--:|$BS--:|--:|--:|--:|--:|$BS---|---|"
ROWS="up down upfloor downfloor busyup busydown tps tpsfloor tpsduty rps lat1p50 lat1p99 lat64p50 lat64p99 lat64p50floor lat64p99floor pss cpu cpufloor refuse half cputps cputpsfloor cputpsduty cpurps cpuref"
[ -n "$ONLY" ] && ROWS=""
for m in $ROWS headbig headsmall headratio; do
	eval "d=\${M_${m}_direct:--} p=\$M_${m}_postern tp=\$M_${m}_tinyproxy sq=\$M_${m}_squid"
	rd=$(ratio "$p" "$d"); rt=$(ratio "$p" "$tp"); rs=$(ratio "$p" "$sq")
	eval "pb=\${M_${m}_base:--}"
	rb=$(ratio "$p" "$pb")
	best=$(maxof "$tp" "$sq")
	case $m in
	up|down)
		label="tunnel bulk $m (MB/s)"
		target="≥1.5× squid, ≥0.5× direct"
		verdict=$(both "$(atleast "$rs" 1.5)" "$(atleast "$rd" 0.5)") ;;
	busyup|busydown)
		label="cores busy (of $(nproc)), bulk ${m#busy}"
		rd=- rt=- rs=- rb=- target="" verdict="" ;;
	upfloor|downfloor|cpufloor|tpsfloor|cputpsfloor|lat64p50floor|lat64p99floor|tpsduty|cputpsduty)
		# The floor relay's (or the duty floor's) value in the direct
		# column; beside it the proxies' own values of the same metric,
		# and postern's share of the floor.
		src=${m%floor} who="the floor relay"
		case $m in *duty) src=${m%duty} who="the duty floor" ;; esac
		case $src in
		up|down) label="tunnel bulk $src (MB/s)" ;;
		cpu) label="CPU s per GiB relayed" ;;
		tps) label="tunnels/s" ;;
		cputps) label="CPU µs per tunnel" ;;
		*) label="latency 64 tunnels ${src#lat64}" ;;
		esac
		label="$label: $who (direct column) and each proxy"
		eval "p=\$M_${src}_postern tp=\$M_${src}_tinyproxy sq=\$M_${src}_squid pb=\${M_${src}_base:--}"
		rd=$(ratio "$p" "$d"); rt=- rs=- rb=-
		target="" verdict="" ;;
	tps)
		label="tunnels/s (8 clients)"
		target="≥${GOAL_TPS}× best peer"
		verdict=$(atleast "$(ratio "$p" "$best")" "$GOAL_TPS") ;;
	rps)
		label="plain-HTTP req/s (wrk, 32 conns)"
		target="≥3× squid"
		verdict=$(atleast "$rs" 3) ;;
	lat1p50) label="latency 1 tunnel p50 (µs)"; target=""; verdict="" ;;
	lat1p99) label="latency 1 tunnel p99 (µs)"; target=""; verdict="" ;;
	lat64p50) label="latency 64 tunnels p50 (µs)"; target=""; verdict="" ;;
	lat64p99)
		label="latency 64 tunnels p99 (µs)"
		target="≤${GOAL_P99}× direct"
		verdict=$(atmost "$rd" "$GOAL_P99") ;;
	pss)
		label="PSS per idle tunnel (kB)"
		target="≤10 kB"
		verdict=$(atmost "$p" 10) ;;
	cpu)
		label="CPU s per GiB relayed"
		target="≤$GOAL_CPUGIB"
		verdict=$(atmost "$p" "$GOAL_CPUGIB") ;;
	cputps)
		label="CPU µs per tunnel"
		target="≤${GOAL_CPUTPS}× best peer"
		verdict=$(atmost "$(ratio "$p" "$(minof "$tp" "$sq")")" "$GOAL_CPUTPS") ;;
	cpurps) label="CPU µs per HTTP request"; target=""; verdict="" ;;
	cpuref) label="CPU µs per refusal"; target=""; verdict="" ;;
	headbig) label="head bytewise: CPU ms for 2 × 27 KB"; target=""; verdict="" ;;
	headsmall) label="head bytewise: CPU ms for 20 × 2.7 KB"; target=""; verdict="" ;;
	headratio)
		label="head bytewise: CPU 2 × 27 KB ÷ 20 × 2.7 KB"
		target="≤1.3 (postern)"
		verdict=$(atmost "$p" 1.3) ;;
	refuse)
		label="refusals/s (8 clients)"
		target="≥${GOAL_REFUSE}× best peer"
		verdict=$(atleast "$(ratio "$p" "$best")" "$GOAL_REFUSE") ;;
	half)
		label="half-close through a tunnel"
		rd=- rt=- rs=- rb=-
		target="postern yes"
		if [ "$p" = yes ]; then verdict=met; else verdict="**missed**"; fi ;;
	esac
	BV= BQ=
	[ -n "$BASE" ] && BV=" $pb |" BQ=" $rb |"
	echo "| $label | $d | $p |$BV $tp | $sq | $rd | $rt | $rs |$BQ $target | $verdict |"
done
echo

# Goals past the floor.  The floor relay does nothing but the system calls
# a tunnel needs (head, connect, 200, relay, close) and the refusal floor
# nothing but a 403 and a close: a goal the floor itself misses cannot be
# met by any proxy on this machine, so each such goal is said with the
# floor's figure beside it, and with how much of the CPU went to the kernel.
floor_line() { # LABEL GOAL-WORD GOAL FLOOR POSTERN HIGHER-IS-BETTER [DECIMALS]
	awk -v l="$1" -v w="$2" -v g="$3" -v f="$4" -v p="$5" -v up="$6" -v d="${7:-1}" 'BEGIN {
		if (g == "-" || f == "-" || p == "-" || f + 0 == 0) { printf "%s: not measured\n", l; exit }
		reach = up ? (f + 0 >= g + 0) : (f + 0 <= g + 0)
		n = "%." d "f"
		printf "%s: goal %s " n "; the floor " n ", %s; postern " n ", %.2f× the floor\n", \
			l, w, g, f, reach ? "which meets it" : "which misses it: out of reach on this machine", p, p / f
	}'
}
# The duty floor against the floor and postern: what the half-close and
# the audit lines cost at their least, and what postern spends past them
# (its decision, its JSON, its event library, its limits and counters).
duty_line() { # LABEL FLOOR DUTY POSTERN DECIMALS
	awk -v l="$1" -v f="$2" -v u="$3" -v p="$4" -v d="$5" 'BEGIN {
		if (f == "-" || u == "-" || p == "-" || f + 0 == 0 || u + 0 == 0) { printf "    %s, the duty floor: not measured\n", l; exit }
		n = "%." d "f"
		printf "    %s, the duty floor (half-close, audit lines): " n ", %.2f× the floor; postern %.2f× the duty floor\n", \
			l, u, u / f, p / u
	}'
}
if [ -z "$ONLY" ]; then
	mul() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-") print "-"; else printf "%.1f", a * b }'; }
	echo "Goals past the floor (medians of $ROUNDS rounds):"
	echo
	floor_line "tunnels/s" "≥" "$(mul "$(maxof "$M_tps_tinyproxy" "$M_tps_squid")" "$GOAL_TPS")" \
		"$M_tpsfloor_direct" "$M_tps_postern" 1
	floor_line "CPU µs per tunnel" "≤" "$(mul "$(minof "$M_cputps_tinyproxy" "$M_cputps_squid")" "$GOAL_CPUTPS")" \
		"$M_cputpsfloor_direct" "$M_cputps_postern" 0
	echo "    the kernel's share of that CPU: the floor ${M_systpsfloor_direct}%, the duty floor ${M_systpsduty_direct}%, postern ${M_systps_postern}%"
	duty_line "tunnels/s" "$M_tpsfloor_direct" "$M_tpsduty_direct" "$M_tps_postern" 1
	duty_line "CPU µs per tunnel" "$M_cputpsfloor_direct" "$M_cputpsduty_direct" "$M_cputps_postern" 0
	floor_line "refusals/s" "≥" "$(mul "$(maxof "$M_refuse_tinyproxy" "$M_refuse_squid")" "$GOAL_REFUSE")" \
		"$M_refuse_direct" "$M_refuse_postern" 1
	echo "    the kernel's share of postern's CPU per refusal: ${M_sysref_postern}%"
	floor_line "latency 64 tunnels p99 (µs)" "≤" "$(mul "$M_lat64p99_direct" "$GOAL_P99")" \
		"$M_lat64p99floor_direct" "$M_lat64p99_postern" 0
	floor_line "CPU s per GiB relayed" "≤" "$GOAL_CPUGIB" "$M_cpufloor_direct" "$M_cpu_postern" 0 3
	echo "    the kernel's share of that CPU: the floor ${M_syscpufloor_direct}%, postern ${M_syscpu_postern}%"
	echo
fi
