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
#   TLS request, tunnel      GET /key inside TLS on one keep-alive
#              connection through an opaque tunnel to tls-load's upstream
#              (tun.test, no secret bound: postern relays the records)
#   TLS request, terminated  the same through a terminated host
#              (bench.test, a [secret] bound: postern terminates TLS,
#              decides, injects x-api-key, audits and re-encrypts)
#   TLS MiB down, tunnel / terminated  one GET /bytes/N (BENCH_MIB, 32
#              MiB) on such a connection, per MiB
#   TLS MiB up, tunnel / terminated  one POST /sink of as many bytes on
#              such a connection, per MiB
#
# The TLS rows count only the requests: the client (instr-client.py tls)
# makes its connection, handshakes and sends 50 requests before the
# counters are zeroed.  The upstream's answer is the SHA-256 of the
# x-api-key it received and the client checks it on every request, so the
# terminated row counts only requests that arrived with the credential.
#
# Each target runs under callgrind in this script's private network
# namespace (unshare -n, loopback only); after a warm-up of 50 operations
# the counters are zeroed, BENCH_N operations (1000; 2 x for requests)
# run, and the counters are dumped: instructions / operations.  Needs root
# (for unshare), valgrind, python3 and openssl.  "make bench-instr".
# BENCH_KEEP=1 keeps the directory with each target's callgrind dumps
# (DIR/TARGET/cg.PID.N, one per row, in the row order) for callgrind_annotate.
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
if [ -z "${BENCH_IN_NETNS:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-instr: needs root (a private network namespace)" >&2
		exit 1
	fi
	for t in unshare valgrind callgrind_control python3 openssl; do
		command -v $t >/dev/null || { echo "bench-instr: $t is missing" >&2; exit 1; }
	done
	BENCH_IN_NETNS=1
	export BENCH_IN_NETNS top_builddir top_srcdir
	exec unshare -n -- sh "$0" "$@"
fi
ip link set lo up 2>/dev/null || true

LOAD="$top_builddir/tests/bench/proxy-load"
TLSLOAD="$top_builddir/tests/bench/tls-load"
CLIENT="$top_srcdir/tests/bench/instr-client.py"
N=${BENCH_N:-1000}
MIB=${BENCH_MIB:-32}
T=$(mktemp -d /tmp/postern-bench-instr.XXXXXX)
chmod 755 "$T"
TSRV=
trap 'kill $SRV $TSRV 2>/dev/null; [ -n "${BENCH_KEEP:-}" ] && echo "bench-instr: kept $T" >&2 || rm -rf "$T"' EXIT INT TERM

"$LOAD" serve "$T/ports" 2>"$T/server.err" &
SRV=$!
i=0
while [ ! -s "$T/ports" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-instr: server did not start" >&2; exit 1; }
	sleep 0.1
done
read -r RAW HTTP _ <"$T/ports"

# The TLS upstream: tls-load serve with a test CA's leaf for both names.
cat >"$T/ca.cnf" <<EOT
[req]
distinguished_name = dn
[dn]
[v3]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
EOT
cat >"$T/leaf.cnf" <<EOT
[v3]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:bench.test, DNS:tun.test
EOT
{ openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/upca.key" \
	-out "$T/upca.pem" -days 2 -subj "/CN=bench-instr CA" -extensions v3 -config "$T/ca.cnf" &&
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/up.key" \
	-out "$T/up.csr" -subj "/CN=bench.test" &&
  openssl x509 -req -in "$T/up.csr" -CA "$T/upca.pem" -CAkey "$T/upca.key" -set_serial 7 \
	-days 2 -extensions v3 -extfile "$T/leaf.cnf" -out "$T/up.pem"; } 2>"$T/openssl.err" ||
	{ echo "bench-instr: openssl could not make the certificates" >&2; exit 1; }
cat "$T/up.pem" "$T/upca.pem" >"$T/up-chain.pem"
"$TLSLOAD" serve "$T/tport" "$T/up-chain.pem" "$T/up.key" 2>"$T/tserver.err" &
TSRV=$!
i=0
while [ ! -s "$T/tport" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-instr: TLS server did not start" >&2; exit 1; }
	sleep 0.1
done
read -r TLS <"$T/tport"
KEY="instr-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
INSTR_API_KEY=$KEY
export INSTR_API_KEY
KEYSUM=$(printf %s "$KEY" | openssl dgst -sha256 -r | cut -d' ' -f1)

# sync_run D KIND PORT TARGET N CA [KEY]: a TLS client that handshakes and
# warms up, then the counters of callgrind (pid $pid) zeroed, the N
# operations, the counters dumped; prints the instructions.
sync_run() {
	local d kind port target n ca key f ir
	d=$1 kind=$2 port=$3 target=$4 n=$5 ca=$6 key=${7:-}
	rm -f "$d/go" "$d/ready"
	mkfifo "$d/go"
	INSTR_SYNC=1 INSTR_CA=$ca INSTR_KEY=$key INSTR_EXPECT=$KEYSUM \
		python3 "$CLIENT" "$kind" "$port" "$target" "$n" <"$d/go" >"$d/ready" &
	cpid=$!
	exec 3>"$d/go"
	i=0
	until [ -s "$d/ready" ]; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 $cpid 2>/dev/null; then
			echo "bench-instr: $kind through $target did not get ready" >&2
			exec 3>&-; return 1
		fi
		sleep 0.1
	done
	callgrind_control -z "$pid" >/dev/null 2>&1
	echo go >&3
	exec 3>&-
	wait $cpid || return 1
	callgrind_control -d "$pid" >/dev/null 2>&1
	sleep 0.3
	f=$(ls -t "$d"/cg.* | head -n 1)
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$f" | head -n 1)
	echo "$ir"
}

# measure LABEL BIN PORT: prints "tunnel request refusal tls-tunnel
# tls-terminated mib-tunnel mib-terminated up-tunnel up-terminated"
# instructions each.
measure() {
	local label bin port d pid out a b c
	label=$1 bin=$2 port=$3
	d="$T/$label"
	mkdir -p "$d"
	cat >"$d/p.ini" <<EOT
[proxy]
listen = tcp:127.0.0.1:$port
log = $d/audit.log
state_dir = $d/state
upstream_ca_file = $T/upca.pem
[defaults]
allow_hosts = 127.0.0.1:$RAW, 127.0.0.1:$HTTP, bench.test:$TLS private, tun.test:$TLS private
secrets = bench
[secret bench]
from_env = INSTR_API_KEY
inject = bench.test:$TLS header x-api-key
inject_when = always
[hosts]
bench.test = 127.0.0.1
tun.test = 127.0.0.1
EOT
	# A build from before inject_when refuses it, and injects on every
	# request anyway.
	if ! "$bin" --check -c "$d/p.ini" >/dev/null 2>"$d/check" &&
	    grep -q inject_when "$d/check"; then
		sed -i '/^inject_when/d' "$d/p.ini"
	fi
	mkdir -p -m 700 "$d/state"
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
	i=0
	until ls "$d/state/ca/"*.pem >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 50 ] && { echo "bench-instr: $label made no session CA" >&2; return 1; }
		sleep 0.1
	done
	cat "$d/state/ca/"*.pem >"$d/session-ca.pem"
	ir=$(sync_run "$d" tls "$port" "tun.test:$TLS" "$N" "$T/upca.pem" "$KEY") || return 1
	out="$out $((ir / N))"
	ir=$(sync_run "$d" tls "$port" "bench.test:$TLS" "$N" "$d/session-ca.pem") || return 1
	out="$out $((ir / N))"
	ir=$(sync_run "$d" tlsdown "$port" "tun.test:$TLS" $((MIB << 20)) "$T/upca.pem" "$KEY") || return 1
	out="$out $((ir / MIB))"
	ir=$(sync_run "$d" tlsdown "$port" "bench.test:$TLS" $((MIB << 20)) "$d/session-ca.pem") || return 1
	out="$out $((ir / MIB))"
	ir=$(sync_run "$d" tlsup "$port" "tun.test:$TLS" $((MIB << 20)) "$T/upca.pem" "$KEY") || return 1
	out="$out $((ir / MIB))"
	ir=$(sync_run "$d" tlsup "$port" "bench.test:$TLS" $((MIB << 20)) "$d/session-ca.pem") || return 1
	out="$out $((ir / MIB))"
	kill "$pid"
	wait "$pid" 2>/dev/null
	echo "$out"
}

echo "bench-instr: $N tunnels, $((2 * N)) keep-alive requests, $N refusals, $N TLS requests and $MIB MiB down and up per TLS target"
P=$(measure postern "$top_builddir/postern-proxy" 18090) || exit 1
B=
if [ -n "${BENCH_BASE:-}" ]; then
	B=$(measure postern-base "$BENCH_BASE" 18091) || exit 1
fi
ROWS="tunnel request refusal TLS_request,_tunnel TLS_request,_terminated TLS_MiB_down,_tunnel TLS_MiB_down,_terminated TLS_MiB_up,_tunnel TLS_MiB_up,_terminated"
printf '| instructions per | postern |%s\n' "${B:+ postern-base | postern ÷ base |}"
printf '|---|--:|%s\n' "${B:+--:|--:|}"
i=0
for row in $ROWS; do
	i=$((i + 1))
	p=$(echo $P | cut -d' ' -f$i)
	b=
	[ -n "$B" ] && b=$(echo $B | cut -d' ' -f$i)
	awk -v n="$row" -v p="$p" -v b="$b" 'BEGIN { gsub(/_/, " ", n)
		if (b == "") printf "| %s | %d |\n", n, p
		else printf "| %s | %d | %d | %.3f |\n", n, p, b, (b > 0 ? p / b : 0) }'
done
# The issue's goal is about this ratio (CPU per terminated request at
# most 3x a tunnelled one).
set -- $P
awk -v t="$4" -v x="$5" -v l="postern" 'BEGIN { printf "\n%s: a terminated TLS request costs %.2fx a tunnelled one\n", l, x / t }'
if [ -n "$B" ]; then
	set -- $B
	awk -v t="$4" -v x="$5" -v l="postern-base" 'BEGIN { printf "%s: a terminated TLS request costs %.2fx a tunnelled one\n", l, x / t }'
fi
