#!/bin/sh
# tests/bench/bench-sandbox.sh: the whole sandbox path, postern
# against Anthropic's sandbox-runtime (srt), side by side in one run, with
# the same clients against the same upstream; BENCH_ROUNDS rounds (3),
# medians, ratios.
#
#   postern   client -> postern-bridge's 127.0.0.1:3128 in a sandbox of its
#             own (unshare -n) -> the session's UNIX socket -> postern-proxy
#             -> the upstream
#   srt       client -> srt's socat on 127.0.0.1:3128 in its bwrap sandbox
#             -> a UNIX socket -> srt's socat on the host -> its HTTP/SOCKS
#             proxy in Node (127.0.0.1, a port of its choosing) -> the
#             upstream
#
# Both clients speak HTTP CONNECT (or plain HTTP, for wrk) to the port the
# sandbox offers, as HTTP_PROXY says: srt's proxy wants the credential its
# HTTP_PROXY carries (Proxy-Authorization: Basic), which the clients send.
#
#   tunnels/s    dial + CONNECT + 64-byte echo + close, 8 clients at once
#                (tests/bench/bridge-load tps)
#   bulk         one tunnel, BENCH_BYTES (256 MiB) each way, MB/s; the
#                upload announces its size (bridge-load upc): srt's path
#                does not carry a half-close (below)
#   half-close   a 1 MiB upload ended by shutdown(SHUT_WR), the byte count
#                coming back: carried (1) or not (0), no goal
#   req/s        wrk, 1 thread, 32 keep-alive connections, plain HTTP in
#                absolute form through the proxy (tests/bench/wrk-proxy.lua)
#                to a fixed 200 (tests/bench/proxy-load's HTTP port)
#   PSS          with BENCH_IDLE (1000) idle tunnels open (each with one
#                echo end to end), the summed Pss of every process of the
#                path: postern-proxy + postern-bridge; srt's node, its
#                bwrap, its bash and every socat (one per connection on
#                each side of its UNIX socket)
#   downloads    BENCH_DL (200) tunnels opened, then BENCH_DL_BYTES (4 MiB)
#                downloaded on all at once, every byte checked against the
#                upstream's pattern (bridge-load dl): the ones cut short,
#                wrong or not opened, summed over the rounds
#
# Goals: tunnels/s >= 10x srt's, bulk >= 5x both ways, PSS <=
# a tenth of srt's, no download cut short or wrong.  req/s has no goal.
#
# The upstream is sink.bench, pinned to 127.0.0.1 for both: in postern's
# [hosts], and in an /etc/hosts bind-mounted over the real one in the
# bench's own mount namespace, which srt's proxy reads (getaddrinfo).  srt
# refuses a name that resolves to a loopback address ("resolved to a
# loopback address") unless the literal 127.0.0.1:PORT is allow-listed as
# well, so its allowedDomains names both; "localhost" (and names under
# .localhost) is srt's one exception, allowed by name alone to resolve to
# loopback.  Everything runs in a private network namespace (unshare -n:
# loopback only, no byte leaves the machine) and mount namespace.
#
# Needs root, bwrap, socat, ripgrep (srt refuses to start without rg), wrk,
# node and sandbox-runtime: BENCH_SRT=/path/to/srt, else the copy that
# contrib/install-bench-deps.sh puts in /var/cache/postern-bench/srt, else
# srt on PATH.  Without them it says what is missing and skips (exit 0):
# "make bench" asks --can-run first.  Bounded by BENCH_LIMIT seconds (600).
# BENCH_KEEP=1 keeps the temporary directory.  Not part of "make check":
# "make bench-sandbox".
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
ROUNDS=${BENCH_ROUNDS:-3}
BYTES=${BENCH_BYTES:-268435456}
SECS=${BENCH_SECONDS:-2}
IDLE=${BENCH_IDLE:-1000}
DL=${BENCH_DL:-200}
DL_BYTES=${BENCH_DL_BYTES:-4194304}
LIMIT=${BENCH_LIMIT:-600}
SRT_CACHE=${POSTERN_BENCH_CACHE:-/var/cache/postern-bench}/srt
NAME=sink.bench
ME=bench-sandbox

find_srt() {
	if [ -n "${BENCH_SRT:-}" ]; then
		echo "$BENCH_SRT"
	elif [ -x "$SRT_CACHE/node_modules/.bin/srt" ]; then
		echo "$SRT_CACHE/node_modules/.bin/srt"
	else
		command -v srt
	fi
}

# Why this bench cannot run here, or nothing.
why_not() {
	[ "$(id -u)" = 0 ] || { echo "needs root (network and mount namespaces)"; return; }
	for c in unshare bwrap socat wrk node mount; do
		command -v $c >/dev/null || { echo "$c is not installed"; return; }
	done
	command -v rg >/dev/null || {
		echo "ripgrep (rg) is not installed (sandbox-runtime needs it; apt-get install ripgrep)"
		return
	}
	s=$(find_srt)
	[ -n "$s" ] && [ -x "$s" ] || {
		echo "sandbox-runtime is not installed (contrib/install-bench-deps.sh, or BENCH_SRT=/path/to/srt)"
		return
	}
}

if [ "${1:-}" = --can-run ]; then
	w=$(why_not)
	[ -z "$w" ] && exit 0
	echo "$ME: $w" >&2
	exit 1
fi

# --- inside a sandbox: the agent that runs the clients on request ---
#
# The driver (outside both sandboxes) writes one command a line to
# $T/SIDE.in and reads the answer from $T/SIDE.out (FIFOs), so that the
# two paths are measured seconds apart, test by test.
if [ "${1:-}" = --agent ]; then
	SIDE=$2
	T=$3
	. "$T/params"
	AUTH=
	if [ "$SIDE" = srt ]; then
		# http://USER:TOKEN@localhost:3128: the proxy checks the token.
		u=${HTTP_PROXY#*://}
		u=${u%@*}
		AUTH="Basic $(printf 'srt:%s' "${u#*:}" | base64 -w0)"
	fi
	export BRIDGE_LOAD_AUTH="$AUTH" BENCH_PROXY_AUTH="$AUTH"
	ERR="$T/err.$SIDE"
	echo "$SIDE agent up, HTTP_PROXY=${HTTP_PROXY:-unset}" > "$T/$SIDE.ready"
	while :; do
		read -r cmd a1 a2 < "$T/$SIDE.in" || exit 1
		v=-
		case $cmd in
		quit)
			echo bye > "$T/$SIDE.out"
			exit 0 ;;
		tps|upc|up|down|dl)
			v=$(BRIDGE_LOAD_CONNECT="$NAME:$RAW" timeout 120 "$LOAD" $cmd \
				tcp:127.0.0.1:3128 $a1 $a2 2>"$T/e.$SIDE") || v=-
			sed "s/^/$cmd: /" "$T/e.$SIDE" >> "$ERR" ;;
		wrk)
			BENCH_UPSTREAM="$NAME:$HTTP" timeout 60 wrk -t1 -c32 -d"${a1}s" \
				--timeout 5s -s "$LUA" http://127.0.0.1:3128/ > "$T/wrk.$SIDE" 2>&1
			bad=$(awk '/Non-2xx or 3xx responses:/ { print $NF } /Socket errors:/ { print "socket-errors" }' "$T/wrk.$SIDE")
			v=$(awk '/^Requests\/sec:/ { printf "%.0f\n", $2 }' "$T/wrk.$SIDE")
			if [ -n "$bad" ] || [ -z "$v" ]; then
				echo "wrk: $(grep -E 'Non-2xx|Socket errors|rror' "$T/wrk.$SIDE" | tr -s ' ' | tr '\n' ' ')" >> "$ERR"
				v=-
			fi ;;
		idle)
			rm -f "$T/hold.$SIDE" "$T/idle.$SIDE"
			mkfifo "$T/hold.$SIDE"
			BRIDGE_LOAD_CONNECT="$NAME:$RAW" timeout 300 "$LOAD" idle tcp:127.0.0.1:3128 \
				"$a1" < "$T/hold.$SIDE" > "$T/idle.$SIDE" 2>>"$ERR" &
			ipid=$!
			exec 9> "$T/hold.$SIDE"
			i=0
			until grep -q ready "$T/idle.$SIDE" 2>/dev/null; do
				i=$((i + 1))
				if [ $i -gt 1200 ] || ! kill -0 $ipid 2>/dev/null; then
					echo "idle: $a1 tunnels did not come up" >> "$ERR"
					break
				fi
				sleep 0.1
			done
			grep -q ready "$T/idle.$SIDE" 2>/dev/null && v=ready ;;
		release)
			exec 9>&-
			wait 2>/dev/null
			v=released ;;
		esac
		[ -n "$v" ] || v=-
		echo "$v" > "$T/$SIDE.out"
	done
fi

# --- the bench's own namespaces ---
if [ -z "${BENCH_IN_NETNS:-}" ]; then
	w=$(why_not)
	if [ -n "$w" ]; then
		echo "$ME: skipped: $w"
		exit 0
	fi
	BENCH_IN_NETNS=1
	export BENCH_IN_NETNS top_builddir top_srcdir
	exec unshare -n -m --propagation private -- sh "$0" "$@"
fi

top_builddir=$(cd "$top_builddir" && pwd)
top_srcdir=$(cd "$top_srcdir" && pwd)
LOAD="$top_builddir/tests/bench/bridge-load"
HLOAD="$top_builddir/tests/bench/proxy-load"
BRIDGE="$top_builddir/postern-bridge"
PROXY="$top_builddir/postern-proxy"
LUA="$top_srcdir/tests/bench/wrk-proxy.lua"
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
SRT=$(find_srt)
for x in "$LOAD" "$HLOAD" "$BRIDGE" "$PROXY"; do
	[ -x "$x" ] || { echo "$ME: $x is not built" >&2; exit 1; }
done

descendants() { # PID: PID and every process below it
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ kid[$2] = kid[$2] " " $1 }
		END {
			q[1] = root; n = 1
			for (i = 1; i <= n; i++) {
				print q[i]
				m = split(kid[q[i]], k, " ")
				for (j = 1; j <= m; j++) q[++n] = k[j]
			}
		}'
}
T=$(mktemp -d /tmp/postern-bench-sandbox.XXXXXX)
chmod 755 "$T"
PIDS=""
# Every process below the ones started here (srt's socats, the sandboxes'
# agents and clients, the watchdog's sleep), then those: by their ids.
cleanup() {
	kids=$(for p in $PIDS; do descendants "$p"; done | sort -u)
	for p in $PIDS $kids; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	umount /etc/hosts 2>/dev/null
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "$ME: kept $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'echo "$ME: stopped" >&2; exit 1' INT TERM HUP
( sleep "$LIMIT" </dev/null >/dev/null 2>&1; echo "$ME: over ${LIMIT}s, stopping" >&2; kill -TERM $$ ) &
WATCHDOG=$!
PIDS="$PIDS $WATCHDOG"

ip link set lo up || { echo "$ME: cannot bring lo up" >&2; exit 1; }
sysctl -qw net.ipv4.ip_local_port_range="1024 65000" 2>/dev/null
sysctl -qw net.ipv4.tcp_tw_reuse=1 2>/dev/null
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null

# The name, for srt's getaddrinfo, in this mount namespace only.
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n127.0.0.1 %s\n' "$NAME" > "$T/hosts"
mount --bind "$T/hosts" /etc/hosts || { echo "$ME: cannot bind-mount $T/hosts on /etc/hosts" >&2; exit 1; }

"$LOAD" serve "$T/sink.sock" "$T/sink.port" 2>"$T/sink.err" &
PIDS="$PIDS $!"
"$HLOAD" serve "$T/http.ports" 2>"$T/http.err" &
PIDS="$PIDS $!"
i=0
while [ ! -s "$T/sink.port" ] || [ ! -s "$T/http.ports" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "$ME: the upstreams did not start" >&2; exit 1; }
	sleep 0.1
done
RAW=$(cat "$T/sink.port")
HTTP=$(awk '{ print $2 }' "$T/http.ports")

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
allow_hosts = $NAME:$RAW private, $NAME:$HTTP private
EOF
"$PROXY" -c "$T/postern.ini" 2>"$T/proxy.err" &
PROXY_PID=$!
PIDS="$PIDS $PROXY_PID"
i=0
while [ ! -S "$T/proxy.sock" ]; do
	i=$((i + 1))
	if [ $i -gt 50 ] || ! kill -0 $PROXY_PID 2>/dev/null; then
		echo "$ME: postern-proxy did not start:" >&2
		tail -n 5 "$T/proxy.err" >&2
		exit 1
	fi
	sleep 0.1
done

# srt's allowlist: the name, and the literals its resolved-address check
# wants for a name that resolves to loopback.  Writes only to $T.
cat > "$T/srt.json" <<EOF
{
  "network": {
    "allowedDomains": ["$NAME:$RAW", "$NAME:$HTTP", "127.0.0.1:$RAW", "127.0.0.1:$HTTP"],
    "deniedDomains": []
  },
  "filesystem": { "denyRead": [], "allowWrite": ["$T"], "denyWrite": [] }
}
EOF
cat > "$T/params" <<EOF
LOAD='$LOAD'
LUA='$LUA'
NAME='$NAME'
RAW=$RAW
HTTP=$HTTP
EOF
for s in postern srt; do
	mkfifo "$T/$s.in" "$T/$s.out"
done

SRT_VERSION=$(node -e 'try { const p = require(process.argv[1]); console.log(p.version) } catch (e) { console.log("?") }' \
	"$(dirname "$(readlink -f "$SRT")")/../package.json" 2>/dev/null)
echo "$ME: $ROUNDS rounds, $BYTES bytes per stream, ${SECS}s per timed test, $IDLE idle tunnels, $DL downloads of $DL_BYTES bytes"
echo "$ME: $(nproc) CPUs, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$ME: sandbox-runtime $SRT_VERSION ($SRT), node $(node --version), $(socat -V 2>/dev/null | awk '/socat version/ { print "socat " $3; exit }'), bwrap $(bwrap --version | awk '{ print $2 }')"

root=
[ "$(id -u)" = 0 ] && root=--allow-root
unshare -n -- "$BRIDGE" $root --connect "$T/proxy.sock" --listen 127.0.0.1:3128 -- \
	sh "$SELF" --agent postern "$T" 2>"$T/bridge.err" &
BR_PID=$!
PIDS="$PIDS $BR_PID"
"$SRT" --settings "$T/srt.json" -- sh "$SELF" --agent srt "$T" > "$T/srt.log" 2>&1 &
SRT_PID=$!
PIDS="$PIDS $SRT_PID"
i=0
while [ ! -s "$T/postern.ready" ] || [ ! -s "$T/srt.ready" ]; do
	i=$((i + 1))
	if ! kill -0 $SRT_PID 2>/dev/null; then
		echo "$ME: sandbox-runtime did not start: $(tr '\n' ' ' < "$T/srt.log")" >&2
		exit 1
	fi
	if ! kill -0 $BR_PID 2>/dev/null; then
		echo "$ME: postern-bridge did not start: $(tail -n 5 "$T/bridge.err" | tr '\n' ' ')" >&2
		exit 1
	fi
	[ $i -gt 300 ] && { echo "$ME: the sandboxes did not come up" >&2; exit 1; }
	sleep 0.1
done
echo "$ME: $(cat "$T/srt.ready")"

ask() { # SIDE CMD [ARG...]: one answer line from SIDE's agent
	s=$1
	shift
	echo "$*" > "$T/$s.in"
	read -r ans < "$T/$s.out"
	echo "$ans"
}

# The path's own processes, by name: not the clients the agents run.
path_pids() { # SIDE
	case $1 in
	postern) ps -o pid=,comm= -p "$PROXY_PID,$(descendants $BR_PID | paste -sd, -)" ;;
	srt) ps -o pid=,comm= -p "$(descendants $SRT_PID | paste -sd, -)" ;;
	esac | awk '$2 ~ /^(postern-proxy|postern-bridge|node|socat|bwrap|bash)$/ { print $1 }'
}
pss_kb() { # PID...: summed Pss in kB
	for p in "$@"; do
		awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}

r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	echo "$ME: round $r (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	# Each round starts with the other path, so that neither always
	# meets the machine's leftovers first.
	if [ $((r % 2)) = 1 ]; then order="postern srt"; else order="srt postern"; fi
	# Idle first: before the round's bulk has grown any buffer.
	for s in $order; do
		if [ "$(ask $s idle "$IDLE")" = ready ]; then
			sleep 0.5	# let the relays settle (forks, buffers)
			pids=$(path_pids $s)
			kb=$(pss_kb $pids)
			echo "$kb $(echo $pids | wc -w)" >> "$T/pss.$s.raw"
			echo "$kb" | awk '{ printf "%.1f\n", $1 / 1024 }' >> "$T/pss.$s"
		fi
		ask $s release > /dev/null
		sleep 1	# the far ends close before the next test
	done
	for s in $order; do
		v=$(ask $s tps 8 "$SECS"); [ "$v" != - ] && echo "$v" >> "$T/tps.$s"
	done
	for s in $order; do
		v=$(ask $s upc "$BYTES"); [ "$v" != - ] && echo "$v" >> "$T/up.$s"
	done
	# An upload that ends with a half-close, the count coming back the
	# other way: carried or not.
	for s in $order; do
		v=$(ask $s up 1048576); [ "$v" != - ] && echo 1 >> "$T/hc.$s" || echo 0 >> "$T/hc.$s"
	done
	for s in $order; do
		v=$(ask $s down "$BYTES"); [ "$v" != - ] && echo "$v" >> "$T/down.$s"
	done
	for s in $order; do
		v=$(ask $s wrk "$SECS"); [ "$v" != - ] && echo "$v" >> "$T/rps.$s"
	done
	for s in $order; do
		v=$(ask $s dl "$DL" "$DL_BYTES" 60)
		if [ "$v" != - ]; then
			echo "$v" >> "$T/dl.$s.raw"
			echo "$v" | awk '{ print $2 + $3 + $4 }' >> "$T/dl.$s"
		fi
	done
done
for s in postern srt; do ask $s quit > /dev/null; done
wait $SRT_PID 2>/dev/null
wait $BR_PID 2>/dev/null
PIDS=$(echo "$PIDS" | sed "s/ $SRT_PID//; s/ $BR_PID//")
for s in postern srt; do
	[ -s "$T/err.$s" ] && echo "$ME: $s: $(sort "$T/err.$s" | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' ';')"
	[ -s "$T/pss.$s.raw" ] && echo "$ME: $s: PSS kB and processes with $IDLE idle, each round: $(tr '\n' ';' < "$T/pss.$s.raw")"
	[ -s "$T/dl.$s.raw" ] && echo "$ME: $s: downloads ok/short/wrong/not-opened, each round: $(tr '\n' ';' < "$T/dl.$s.raw")"
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
sum() { [ -s "$1" ] && awk '{ s += $1 } END { print s }' "$1" || echo -; }

echo
echo "| median of $ROUNDS | postern | sandbox-runtime $SRT_VERSION | postern ÷ srt | goal |"
echo "|---|---:|---:|---:|---|"
for m in tps up down rps pss dl hc; do
	p=$(val "$T/$m.postern")
	s=$(val "$T/$m.srt")
	x=$(ratio "$p" "$s")
	case $m in
	tps) label="tunnels/s (8 clients)"; g="≥ 10×: $(check "$x" '>=' 10)" ;;
	up) label="bulk up, one tunnel (MB/s)"; g="≥ 5×: $(check "$x" '>=' 5)" ;;
	down) label="bulk down, one tunnel (MB/s)"; g="≥ 5×: $(check "$x" '>=' 5)" ;;
	rps) label="keep-alive req/s (wrk, 32 conns)"; g="(none)" ;;
	pss) label="PSS with $IDLE idle tunnels (MB)"; g="≤ 0.1×: $(check "$x" '<=' 0.1)" ;;
	dl) # A broken download is a wrong answer, not a slow one: every
		# round counts, not the median's.
		p=$(sum "$T/dl.postern")
		s=$(sum "$T/dl.srt")
		label="downloads cut short or wrong, all rounds (of $ROUNDS × $DL × $DL_BYTES B)"; x=""
		g="0: $(check "$p" '<=' 0)" ;;
	hc) label="half-close carried (1 yes, 0 no)"; x=""; g="(none)" ;;
	esac
	echo "| $label | $p | $s | $x | $g |"
done
echo
echo "$ME: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
