#!/bin/sh
# tests/bench/bench-audit.sh: what the audit log's hash chain, its signed
# checkpoints and the OCSF format cost, side by side in one run:
# tunnels/s (CONNECT + 64-byte echo + close) and refusals/s (CONNECT to a
# host no rule allows, read the 403, close), 8 clients at once, through
#
#   base     BENCH_BASE, a postern-proxy built from the commit before the
#            chain (no chain: the audit as it was); left out when unset
#   chain    this postern-proxy, no audit_signing_key: chained lines
#   signed   the same with audit_signing_key and audit_checkpoint = 1s
#   ocsf     signed, with audit_format = ocsf
#
# and the proxy's CPU (user + system, from /proc) per tunnel and per
# refusal, in microseconds: on a machine others share, the rates swing
# with their load and the CPU per operation much less.
#
# BENCH_ROUNDS rounds (3); each round starts every proxy afresh and takes
# them in an order turned by one each round (an A/B of alternating runs);
# the medians, then each against the first column.  Never timed
# assertions: numbers to read.  Runs in a private network namespace
# (unshare -n) with only loopback; needs root.  BENCH_SECONDS (2) a run.
set -u
: "${top_builddir:=.}"

if [ -z "${BENCH_IN_NETNS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "bench-audit: needs root (unshare -n)" >&2; exit 1; }
	BENCH_IN_NETNS=1
	export BENCH_IN_NETNS top_builddir
	exec unshare -n -- sh "$0" "$@"
fi

LOAD="$top_builddir/tests/bench/proxy-load"
POSTERN="$top_builddir/postern-proxy"
ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECONDS:-2}
BASE=${BENCH_BASE:-}
for x in "$LOAD" "$POSTERN"; do
	[ -x "$x" ] || { echo "bench-audit: $x is not built" >&2; exit 1; }
done
ip link set lo up
T=$(mktemp -d /tmp/bench-audit.XXXXXX)
PIDS=
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$PIDS" ] && kill $PIDS 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

"$LOAD" serve "$T/ports" 2>"$T/server.err" &
PIDS=$!
i=0
while [ ! -s "$T/ports" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-audit: the server did not start" >&2; exit 1; }
	sleep 0.1
done
read -r RAW HTTP REFUSE < "$T/ports"

TARGETS="chain signed ocsf"
[ -n "$BASE" ] && TARGETS="base $TARGETS"
port=3300
for t in $TARGETS; do
	port=$((port + 1))
	mkdir "$T/$t"
	{
		echo "[proxy]"
		echo "listen = tcp:127.0.0.1:$port"
		echo "log = $T/$t/audit.log"
		echo "max_connections = 10000"
		case $t in
		signed) echo "audit_signing_key = $T/$t/key.pem"; echo "audit_checkpoint = 1s" ;;
		ocsf) echo "audit_signing_key = $T/$t/key.pem"; echo "audit_checkpoint = 1s"
			echo "audit_format = ocsf" ;;
		esac
		echo "[defaults]"
		echo "max_connections = 10000"
		echo "allow_hosts = 127.0.0.1:$RAW"
	} > "$T/$t/postern.ini"
	echo "$port" > "$T/$t/port"
done

HZ=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
per_op() { # PID TICKS-BEFORE RATE: CPU microseconds an operation
	awk -v c=$(($(ticks "$1") - $2)) -v hz="$HZ" -v r="$3" -v s="$SECS" \
		'BEGIN { if (r + 0 == 0) print "-"; else printf "%.1f\n", c / hz * 1e6 / (r * s) }'
}
bin_of() { if [ "$1" = base ]; then echo "$BASE"; else echo "$POSTERN"; fi; }

round=0
while [ $round -lt "$ROUNDS" ]; do
	round=$((round + 1))
	# The order turned by one each round.
	order=$(echo $TARGETS | tr ' ' '\n' | awk -v r=$round '{ a[NR] = $0 } END {
		for (i = 0; i < NR; i++) print a[(i + r - 1) % NR + 1] }')
	for t in $order; do
		rm -f "$T/$t/audit.log"
		p=$(cat "$T/$t/port")
		"$(bin_of $t)" -c "$T/$t/postern.ini" 2>>"$T/$t/err" &
		pid=$!
		i=0
		until "$LOAD" refuse "127.0.0.1:$p" "refused.invalid:$RAW" 1 1 >/dev/null 2>&1; do
			i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-audit: $t did not start: $(tail -2 "$T/$t/err")" >&2; exit 1; }
			sleep 0.1
		done
		c0=$(ticks $pid)
		v=$(timeout 60 "$LOAD" tps "127.0.0.1:$p" "127.0.0.1:$RAW" 8 "$SECS" 2>>"$T/$t/client.err")
		echo "$v" >> "$T/$t/tps"
		per_op $pid "$c0" "$v" >> "$T/$t/cputps"
		c0=$(ticks $pid)
		v=$(timeout 60 "$LOAD" refuse "127.0.0.1:$p" "refused.invalid:$RAW" 8 "$SECS" 2>>"$T/$t/client.err")
		echo "$v" >> "$T/$t/refuse"
		per_op $pid "$c0" "$v" >> "$T/$t/cpuref"
		kill "$pid"
		wait "$pid" 2>/dev/null
		echo "# round $round $t: tunnels/s $(tail -1 "$T/$t/tps") ($(tail -1 "$T/$t/cputps") us) refusals/s $(tail -1 "$T/$t/refuse") ($(tail -1 "$T/$t/cpuref") us) lines $(wc -l < "$T/$t/audit.log")" >&2
	done
	# The last file of each chained target must verify.
	for t in signed ocsf; do
		"$POSTERN" audit verify -c "$T/$t/postern.ini" "$T/$t/audit.log" >/dev/null 2>&1 ||
			echo "bench-audit: $t: its audit log does not verify" >&2
	done
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
first=$(echo $TARGETS | cut -d' ' -f1)
printf '%-12s' ""
for t in $TARGETS; do printf ' %10s' "$t"; done
for t in $TARGETS; do [ "$t" = "$first" ] || printf ' %14s' "$t/$first"; done
echo
for m in tps refuse cputps cpuref; do
	case $m in
	tps) printf '%-12s' "tunnels/s" ;;
	refuse) printf '%-12s' "refusals/s" ;;
	cputps) printf '%-12s' "CPU us/tun" ;;
	cpuref) printf '%-12s' "CPU us/ref" ;;
	esac
	b=$(median "$T/$first/$m")
	for t in $TARGETS; do printf ' %10s' "$(median "$T/$t/$m")"; done
	for t in $TARGETS; do
		[ "$t" = "$first" ] && continue
		printf ' %14s' "$(awk -v a="$(median "$T/$t/$m")" -v b="$b" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.3f\n", a / b }')"
	done
	echo
done
echo "($ROUNDS rounds of ${SECS}s, medians; 8 clients; $(nproc) CPUs)"
