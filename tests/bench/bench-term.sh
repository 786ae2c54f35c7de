#!/bin/sh
# tests/bench/bench-term.sh: keep-alive HTTPS through a TLS-terminating
# proxy that injects a credential, side by side in one
# run with the same client (tests/bench/tls-load) against the same TLS
# upstream (tls-load serve, a test CA's certificate for bench.test, pinned
# to 127.0.0.1); BENCH_ROUNDS rounds (3), medians.  Four columns (five with
# BENCH_BEFORE):
#
#   direct      the client straight to the upstream (the baseline)
#   tunnel      CONNECT through postern-proxy, TLS end to end: the host has
#               no secret bound, so postern only relays (and checks SNI)
#   terminated  the same host with a [secret] bound (inject = bench.test
#               header x-api-key): postern terminates TLS with the
#               session's CA (read from its state_dir, DIR/ca/*.pem, and
#               trusted by the client), verifies the upstream against the
#               test CA (upstream_ca_file) and puts the header on every
#               request
#   before      only with BENCH_BEFORE=/path/to/postern-proxy: that
#               binary (an older build) as a second terminated postern,
#               the same config on its own port, state_dir and log (less
#               the inject_when line when it refuses that key: a build
#               without it injects on every request anyway), in the same
#               rounds; term and before take turns going first
#   squid       squid (Debian's squid-openssl) with ssl_bump (peek at step
#               1, then bump) and request_header_add x-api-key, its bump
#               CA trusted by the client, the test CA by squid
#
# The client offers ALPN http/1.1 only, so every column is HTTP/1.1 inside
# TLS 1.3 (OpenSSL's defaults on both ends).  Each proxy logs as it would
# in service: the terminated postern one audit line per request (the
# request with its decision), the tunnel one per connection, squid one
# access.log line per request; all on tmpfs.
#
# In direct and tunnel the client sends the key itself; in terminated and
# squid it sends none and the proxy adds it.  Every answer of the upstream
# is the SHA-256 of the x-api-key it received and the client checks it on
# every request (TLS_LOAD_EXPECT), so a column counts only requests that
# arrived with the credential.  A digest, not the key: a postern that
# overwrites a secret's value in what its host sends back (the reflection
# scan) would otherwise change the answer.
#
#   bulk up/down   one connection, POST /sink or GET /bytes/N of
#                  BENCH_BYTES (512 MiB) inside TLS, MB/s
#   req/s          BENCH_CONNS (32) keep-alive connections at once, GET
#                  /key back to back for BENCH_SECONDS (2), handshakes made
#                  before the clock starts; p50/p99 latency of those
#                  requests in microseconds
#   1 conn         the same on one connection: p50/p99 in microseconds
#   1 conn, split  the same again, the upstream's answer in two TLS records
#                  (head, then body), as a server that streams (server-sent
#                  events) sends it: a relay whose client socket lacks
#                  TCP_NODELAY holds the second record until the client's
#                  delayed ACK, some 40 ms, and it shows here
#   CPU µs/req     the proxy's user+system CPU (all threads, reaped
#                  children, squid's certificate helpers included) during
#                  the req/s and 1-conn runs, per request
#   CPU s/GiB      the same during the two bulk streams, per GiB relayed
#
# Goals: terminated req/s ≥ 2× squid's, terminated bulk ≥ 1.5×
# squid's, CPU per terminated request ≤ 3× a tunnelled one.  The table is
# printed whether or not they are met.
#
# The terminated column runs only when the postern-proxy under test
# terminates: after it starts with the secret bound, one GET through it
# must reach the upstream with the injected header; otherwise the column
# shows "-" and a note says why (a postern-proxy from before termination
# relays the tunnel, and the client refuses the upstream's certificate as
# not from the session CA).  The squid column likewise.
#
# BENCH_POSTERN=/path/to/postern-proxy: the binary under test, for both
# postern columns (default: the one built here), e.g. a build of a branch
# in a clone of its own.  BENCH_BEFORE=/path/to/postern-proxy: add the
# before column, and a ÷before column of terminated over it (the cost of
# what changed between the two builds, measured side by side).
# TLS_LOAD_FILL=C: the bulk-down body is the byte C repeated ('d').
# BENCH_CONNS, BENCH_BYTES, BENCH_SECONDS and BENCH_ROUNDS as above.
# bench-term.sh --can-run says whether the tools are there (exit 0) or
# which is missing (exit 1), for "make bench".
#
# Everything runs in a private network namespace (unshare -n) with only
# loopback in it, so no byte can leave the machine and nothing collides
# with a system squid.  Needs root.  Bounded: every client run by
# timeout(1), the whole bench by BENCH_LIMIT seconds (570).  BENCH_KEEP=1
# keeps the temporary directory (configs, certificates, logs, one raw value
# per round in METRIC.TARGET).  Not part of "make check": "make bench-term".
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"

CERTGEN=/usr/lib/squid/security_file_certgen
can_run() {
	[ "$(id -u)" = 0 ] || { echo "bench-term: needs root (a private network namespace, squid's user switch)" >&2; return 1; }
	for c in unshare ip ss timeout openssl squid; do
		command -v $c >/dev/null || { echo "bench-term: $c is not installed" >&2; return 1; }
	done
	# Debian's plain squid is built with GnuTLS and cannot bump.
	if ! squid -v 2>/dev/null | grep -q -e '--with-openssl' || [ ! -x "$CERTGEN" ]; then
		echo "bench-term: squid cannot bump TLS (install squid-openssl: contrib/install-deps.sh)" >&2
		return 1
	fi
}
if [ "${1:-}" = --can-run ]; then
	can_run
	exit
fi

if [ -z "${BENCH_IN_NETNS:-}" ]; then
	can_run || exit 1
	BENCH_IN_NETNS=1
	export BENCH_IN_NETNS top_builddir top_srcdir
	exec unshare -n -- sh "$0" "$@"
fi

LOAD="$top_builddir/tests/bench/tls-load"
POSTERN=${BENCH_POSTERN:-$top_builddir/postern-proxy}
ROUNDS=${BENCH_ROUNDS:-3}
BYTES=${BENCH_BYTES:-536870912}
SECS=${BENCH_SECONDS:-2}
CONNS=${BENCH_CONNS:-32}
LIMIT=${BENCH_LIMIT:-570}
BULK_MAX=15		# seconds a bulk stream may take before it is cut
HZ=$(getconf CLK_TCK)
HOST=bench.test

BEFORE=${BENCH_BEFORE:-}
for x in "$LOAD" "$POSTERN" ${BEFORE:+"$BEFORE"}; do
	[ -x "$x" ] || { echo "bench-term: $x is not built" >&2; exit 1; }
done

# On tmpfs when there is one, as bench-proxy.sh does: the proxies log a
# line or more per connection, and the bench compares relays, not disks.
TMPBASE=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && TMPBASE=/dev/shm
T=$(mktemp -d "$TMPBASE/postern-bench-term.XXXXXX")
chmod 755 "$T"	# squid drops to proxy, postern to nobody
PIDS=""
WATCHDOG=""
descendants() { # PID: the PID and all its descendants
	echo "$1"
	for c in $(pgrep -P "$1" 2>/dev/null); do descendants "$c"; done
}
cleanup() {
	[ -n "$WATCHDOG" ] && for d in $(descendants "$WATCHDOG"); do kill "$d" 2>/dev/null; done
	for p in $PIDS; do
		for d in $(descendants "$p"); do kill "$d" 2>/dev/null; done
	done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench-term: logs and raw values kept in $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'echo "bench-term: stopped" >&2; exit 1' INT TERM HUP

( sleep "$LIMIT"; echo "bench-term: over ${LIMIT}s, stopping" >&2; kill -TERM $$ ) &
WATCHDOG=$!

ip link set lo up || { echo "bench-term: cannot bring lo up" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null

wait_listen() { # PORT NAME PID
	i=0
	until ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$3" 2>/dev/null; then
			echo "bench-term: $2 does not listen on $1; its log:" >&2
			cat "$T/$2.err" "$T/squid/cache.log" 2>/dev/null | tail -20 >&2
			exit 1
		fi
		sleep 0.1
	done
}

# Certificates: the upstream's test CA and its leaf for bench.test; squid's
# bump CA.  EC P-256 throughout, as postern's session CA and leaves are.
mkcert() { # NAME SUBJECT EXT-FILE [CA-NAME]: NAME.pem and NAME.key in $T
	if [ $# -lt 4 ]; then
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-keyout "$T/$1.key" -out "$T/$1.pem" -days 2 -subj "$2" \
			-extensions v3 -config "$3" 2>>"$T/openssl.err"
	else
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-keyout "$T/$1.key" -out "$T/$1.csr" -subj "$2" 2>>"$T/openssl.err" &&
		openssl x509 -req -in "$T/$1.csr" -CA "$T/$4.pem" -CAkey "$T/$4.key" \
			-set_serial "0x$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" \
			-days 2 -extensions v3 -extfile "$3" -out "$T/$1.pem" 2>>"$T/openssl.err"
	fi
}
cat > "$T/ca.cnf" <<EOF
[req]
distinguished_name = dn
[dn]
[v3]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
cat > "$T/leaf.cnf" <<EOF
[v3]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:$HOST
EOF
{ mkcert upca "/CN=bench-term upstream CA" "$T/ca.cnf" &&
	mkcert up "/CN=$HOST" "$T/leaf.cnf" upca &&
	mkcert bump "/CN=bench-term squid bump CA" "$T/ca.cnf"; } ||
	{ echo "bench-term: openssl could not make the certificates:" >&2; tail -5 "$T/openssl.err" >&2; exit 1; }
cat "$T/up.pem" "$T/upca.pem" > "$T/up-chain.pem"

# The upstream.
"$LOAD" serve "$T/port" "$T/up-chain.pem" "$T/up.key" 2>"$T/server.err" &
SERVER_PID=$!
PIDS=$SERVER_PID
i=0
while [ ! -s "$T/port" ]; do
	i=$((i + 1))
	if [ $i -gt 50 ] || ! kill -0 $SERVER_PID 2>/dev/null; then
		echo "bench-term: the upstream did not start: $(tail -1 "$T/server.err")" >&2
		exit 1
	fi
	sleep 0.1
done
read -r UPPORT < "$T/port"
UP="127.0.0.1:$UPPORT"

# The credential: the upstream must receive exactly this on every request.
KEY="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
BENCH_API_KEY=$KEY
export BENCH_API_KEY
# What the upstream answers for it: its SHA-256, as tls-load serve does.
KEYSUM=$(printf %s "$KEY" | openssl dgst -sha256 -r | cut -d' ' -f1)

PT_PORT=18090	# postern, plain tunnel
PM_PORT=18091	# postern, terminated
SQ_PORT=18092	# squid
PB_PORT=18093	# postern, terminated, the before build

# postern: bench.test pinned to loopback (no DNS, like squid's hosts file),
# unprivileged after binding, like squid.  The two configs differ only in
# the secret (and what termination needs: the state directory for the
# session CA, the upstream's CA) and their ports and logs.  The logs are
# apart from the configs, as in a deployment: each postern watches its
# config's directory (see bench-proxy.sh).
mkdir "$T/log"
postern_ini() { # PORT NAME
	cat <<EOF
[proxy]
listen = tcp:127.0.0.1:$1
user = 65534:65534
log = $T/log/$2-audit.log
max_connections = 10000
EOF
}
{
	postern_ini $PT_PORT tunnel
	cat <<EOF

[defaults]
max_connections = 10000
allow_hosts = $HOST:$UPPORT private

[hosts]
$HOST = 127.0.0.1
EOF
} > "$T/tunnel.ini"
term_ini() { # PORT NAME
	postern_ini $1 $2
	cat <<EOF
state_dir = $T/state-$2
upstream_ca_file = $T/upca.pem

[defaults]
max_connections = 10000
allow_hosts = $HOST:$UPPORT private
secrets = bench

[secret bench]
from_env = BENCH_API_KEY
inject = $HOST:$UPPORT header x-api-key
# The client sends no key: the proxy adds it to every request.
inject_when = always

[hosts]
$HOST = 127.0.0.1
EOF
}
mkdir -m 700 "$T/state-term"
term_ini $PM_PORT term > "$T/term.ini"
for c in tunnel term; do
	if ! "$POSTERN" --check -c "$T/$c.ini" >/dev/null 2>"$T/$c.check"; then
		echo "bench-term: $POSTERN refuses the $c config:" >&2
		cat "$T/$c.check" >&2
		exit 1
	fi
done
if [ -n "$BEFORE" ]; then
	mkdir -m 700 "$T/state-before"
	term_ini $PB_PORT before > "$T/before.ini"
	if ! "$BEFORE" --check -c "$T/before.ini" >/dev/null 2>"$T/before.check" &&
	    grep -q inject_when "$T/before.check"; then
		# A build from before inject_when injects on every request.
		term_ini $PB_PORT before | grep -v -e '^inject_when' -e 'adds it to every' > "$T/before.ini"
		echo "bench-term: before: $BEFORE does not know inject_when; its config has no such line"
	fi
	if ! "$BEFORE" --check -c "$T/before.ini" >/dev/null 2>"$T/before.check"; then
		echo "bench-term: $BEFORE refuses the before config:" >&2
		cat "$T/before.check" >&2
		exit 1
	fi
fi

# squid: the same host and port only, memory only, no cache; bump every
# tunnel (peek at the ClientHello first, for its SNI), certificates made
# by security_file_certgen with the bump CA, the upstream verified against
# the test CA, the header added to every request it sends.
mkdir "$T/squid"
printf '127.0.0.1 %s\n' "$HOST" > "$T/squid/hosts"
cat "$T/bump.pem" "$T/bump.key" > "$T/squid/bump.pem"
"$CERTGEN" -c -s "$T/squid/ssl_db" -M 4MB >"$T/squid/certgen.out" 2>&1 ||
	{ echo "bench-term: $CERTGEN -c failed: $(tail -1 "$T/squid/certgen.out")" >&2; exit 1; }
chown -R proxy:proxy "$T/squid"
chmod 600 "$T/squid/bump.pem"
cat > "$T/squid/squid.conf" <<EOF
http_port 127.0.0.1:$SQ_PORT ssl-bump tls-cert=$T/squid/bump.pem generate-host-certificates=on dynamic_cert_mem_cache_size=4MB
sslcrtd_program $CERTGEN -s $T/squid/ssl_db -M 4MB
sslcrtd_children 4 startup=1 idle=1
tls_outgoing_options cafile=$T/upca.pem min-version=1.2
acl step1 at_step SslBump1
ssl_bump peek step1
ssl_bump bump all
request_header_add x-api-key "$KEY" all
hosts_file $T/squid/hosts
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
acl bench_dst dstdomain $HOST
acl bench_port port $UPPORT
http_access deny !bench_port
http_access allow bench_dst
http_access deny all
EOF
chown proxy:proxy "$T/squid/squid.conf"

# Each round starts every proxy afresh (the rounds are independent; the
# terminated postern makes or reloads its session CA at start).
start_proxies() {
	"$POSTERN" -c "$T/tunnel.ini" 2>>"$T/tunnel.err" &
	PT_PID=$!
	"$POSTERN" -c "$T/term.ini" 2>>"$T/term.err" &
	PM_PID=$!
	squid -N -f "$T/squid/squid.conf" >>"$T/squid.err" 2>&1 &
	SQ_PID=$!
	PB_PID=
	if [ -n "$BEFORE" ]; then
		"$BEFORE" -c "$T/before.ini" 2>>"$T/before.err" &
		PB_PID=$!
	fi
	PIDS="$SERVER_PID $PT_PID $PM_PID $SQ_PID $PB_PID"
	wait_listen $PT_PORT tunnel $PT_PID
	wait_listen $PM_PORT term $PM_PID
	wait_listen $SQ_PORT squid $SQ_PID
	[ -n "$PB_PID" ] && wait_listen $PB_PORT before $PB_PID
}
stop_proxies() {
	for p in $PT_PID $PM_PID $SQ_PID $PB_PID; do
		for d in $(descendants "$p"); do kill "$d" 2>/dev/null; done
	done
	for p in $PT_PID $PM_PID $SQ_PID $PB_PID; do wait "$p" 2>/dev/null; done
	PIDS=$SERVER_PID
}

proxy_of() {
	case $1 in
	direct) echo - ;; tunnel) echo "127.0.0.1:$PT_PORT" ;;
	term) echo "127.0.0.1:$PM_PORT" ;; squid) echo "127.0.0.1:$SQ_PORT" ;;
	before) echo "127.0.0.1:$PB_PORT" ;;
	esac
}
pid_of() {
	case $1 in
	tunnel) echo $PT_PID ;; term) echo $PM_PID ;; squid) echo $SQ_PID ;;
	before) echo $PB_PID ;;
	esac
}
ca_of() {
	case $1 in
	direct|tunnel) echo "$T/upca.pem" ;; term|before) echo "$T/$1-ca.pem" ;;
	squid) echo "$T/bump.pem" ;;
	esac
}
# The key the client sends itself: none where the proxy is to inject it.
key_of() {
	case $1 in direct|tunnel) echo "$KEY" ;; *) echo "" ;; esac
}

cpu_ticks() { # PID: utime+stime+cutime+cstime of PID and its descendants
	for d in $(descendants "$1"); do
		cat "/proc/$d/stat" 2>/dev/null
	done | awk '{ sub(/.*\) /, ""); t += $12 + $13 + $14 + $15 } END { print t + 0 }'
}
median() { # FILE
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'
}
load() { # TARGET ARGS...: tls-load's client against TARGET, bounded
	lt=$1
	shift
	cmd=$1
	shift
	if [ -n "$(key_of $lt)" ]; then
		TLS_LOAD_KEY=$KEY TLS_LOAD_EXPECT=$KEYSUM timeout 60 "$LOAD" "$cmd" \
			"$(proxy_of $lt)" "$UP" "$HOST" "$(ca_of $lt)" "$@"
	else
		TLS_LOAD_EXPECT=$KEYSUM timeout 60 "$LOAD" "$cmd" \
			"$(proxy_of $lt)" "$UP" "$HOST" "$(ca_of $lt)" "$@"
	fi
}
run() { # TARGET METRIC ARGS...: load, logging a failure
	rt=$1 metric=$2
	shift 2
	if ! load "$rt" "$@" 2>>"$T/$rt.client.err"; then
		echo "bench-term: $rt: $metric failed: $(tail -1 "$T/$rt.client.err")" >&2
		return 1
	fi
}

# Does TARGET do what its column is for?  A terminated postern must have
# made a session CA and put the header on a request it carried; squid
# likewise with its bump CA.  Prints why not on standard output.
usable() { # TARGET
	if [ "$1" = term ] || [ "$1" = before ]; then
		i=0
		until ls "$T/state-$1/ca/"*.pem >/dev/null 2>&1; do
			i=$((i + 1))
			if [ $i -gt 20 ]; then
				echo "no session CA in its state_dir ($T/state-$1/ca/*.pem): this postern-proxy does not terminate TLS"
				return 1
			fi
			sleep 0.1
		done
		cat "$T/state-$1/ca/"*.pem > "$T/$1-ca.pem"
	fi
	if ! got=$(TLS_LOAD_KEY=$(key_of $1) timeout 20 "$LOAD" probe "$(proxy_of $1)" "$UP" "$HOST" "$(ca_of $1)" 2>"$T/$1.probe"); then
		echo "a request through it failed ($(tail -1 "$T/$1.probe" | sed 's/^tls-load: //'))"
		case $1 in term|before) echo "  (so this postern-proxy does not terminate TLS for a host with a secret bound)" ;; esac
		return 1
	fi
	if [ "$got" != "$KEYSUM" ]; then
		echo "the upstream received an x-api-key of SHA-256 \"$(printf %.16s "$got")...\", not the key"
		return 1
	fi
}

TARGETS="direct tunnel term squid"
[ -n "$BEFORE" ] && TARGETS="direct tunnel term before squid"
echo "bench-term: $ROUNDS rounds; bulk $BYTES bytes each way; $CONNS keep-alive connections; ${SECS}s per timed test"
echo "bench-term: $(nproc) CPUs, kernel $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
rev=$(git -C "$top_srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)
prev=$(git -C "$(dirname "$POSTERN")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "bench-term: $POSTERN: $("$POSTERN" --version 2>&1 | head -1) (tree at $prev; harness at $rev); $(squid -v | head -1); $(openssl version)"
if [ -n "$BEFORE" ]; then
	bprev=$(git -C "$(dirname "$BEFORE")" rev-parse --short HEAD 2>/dev/null || echo unknown)
	echo "bench-term: before: $BEFORE: $("$BEFORE" --version 2>&1 | head -1) (tree at $bprev)"
fi
START=$(date +%s)
NOTES=""

r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	echo "bench-term: round $r ($(($(date +%s) - START))s)"
	start_proxies
	order=$TARGETS
	# term and before take turns going first: neither always runs
	# on the machine the other has just warmed (or loaded).
	[ $((r % 2)) = 0 ] && order=$(echo "$TARGETS" | sed 's/term before/before term/')
	for t in $order; do
		pid=$(pid_of $t)
		if [ "$t" != direct ] && ! why=$(usable $t); then
			echo "bench-term: $t: skipped: $why" >&2
			case $NOTES in *"$t:"*) ;; *) NOTES="$NOTES$t: $why
" ;; esac
			continue
		fi

		[ -n "$pid" ] && c0=$(cpu_ticks "$pid")
		up=$(run $t "bulk up" up "$BYTES" $BULK_MAX) &&
			echo "$up" | awk '{ print $3 }' >> "$T/up.$t"
		down=$(run $t "bulk down" down "$BYTES" $BULK_MAX) &&
			echo "$down" | awk '{ print $3 }' >> "$T/down.$t"
		if [ -n "$pid" ] && [ -n "$up" ] && [ -n "$down" ]; then
			sleep 0.2	# let the proxy close both connections
			c1=$(cpu_ticks "$pid")
			echo "$up $down" | awk -v c=$((c1 - c0)) -v hz="$HZ" \
				'{ printf "%.3f\n", c / hz / (($1 + $4) / 1073741824) }' >> "$T/cpugib.$t"
		fi

		# Requests, and the CPU they cost (handshakes included: CONNS + 1 of
		# them against tens of thousands of requests).
		[ -n "$pid" ] && c0=$(cpu_ticks "$pid")
		v=$(run $t "req/s" rps "$CONNS" "$SECS") && {
			echo "$v" | awk '{ print $1 }' >> "$T/rps.$t"
			echo "$v" | awk '{ print $2 }' >> "$T/p50.$t"
			echo "$v" | awk '{ print $3 }' >> "$T/p99.$t"
		}
		v1=$(run $t "1 conn" rps 1 "$SECS") && {
			echo "$v1" | awk '{ print $2 }' >> "$T/l1p50.$t"
			echo "$v1" | awk '{ print $3 }' >> "$T/l1p99.$t"
		}
		if [ -n "$pid" ] && [ -n "$v" ] && [ -n "$v1" ]; then
			c1=$(cpu_ticks "$pid")
			echo "$v $v1" | awk -v c=$((c1 - c0)) -v hz="$HZ" \
				'{ printf "%.1f\n", c / hz * 1e6 / ($4 + $8) }' >> "$T/cpureq.$t"
		fi
		v=$(run $t "1 conn, split" rpssplit 1 "$SECS") && {
			echo "$v" | awk '{ print $2 }' >> "$T/s1p50.$t"
			echo "$v" | awk '{ print $3 }' >> "$T/s1p99.$t"
		}
	done
	stop_proxies
done
echo "bench-term: done in $(($(date +%s) - START))s, load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------------------
# The table: medians; the ratios are the terminated column's over each
# other column (for latency and CPU lower is better).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
atleast() { awk -v v="$1" -v l="$2" 'BEGIN { if (v == "-") print "n/a"; else print (v + 0 >= l + 0) ? "met" : "**missed**" }'; }
atmost() { awk -v v="$1" -v l="$2" 'BEGIN { if (v == "-") print "n/a"; else print (v + 0 <= l + 0) ? "met" : "**missed**" }'; }

for m in up down rps p50 p99 l1p50 l1p99 s1p50 s1p99 cpureq cpugib; do
	for t in $TARGETS; do
		v=-
		[ -s "$T/$m.$t" ] && v=$(median "$T/$m.$t")
		eval "M_${m}_$t=\$v"
	done
done

echo
echo "Medians of $ROUNDS rounds; the ratios are terminated / the other column (for"
echo "latency and CPU lower is better).  tunnel: postern relays TLS end to end;"
echo "terminated: postern terminates it and injects x-api-key; squid: ssl_bump"
echo "and request_header_add doing the same."
[ -n "$BEFORE" ] && echo "before: $BEFORE terminating as terminated does; ÷before is the cost of the change."
if [ -n "$NOTES" ]; then
	echo
	printf '%s' "$NOTES" | sed 's/^\([a-z]*\):/Not run: \1:/'
fi
echo
# With a before column: its value after terminated's, and the ratio to it
# first among the ratios.
BH="" BS="" BR="" BRS=""
if [ -n "$BEFORE" ]; then
	BH=" before |" BS="--:|" BR=" ÷before |" BRS="--:|"
fi
echo "| metric | direct | tunnel | terminated |$BH squid |$BR ÷direct | ÷tunnel | ÷squid | target | |"
echo "|---|--:|--:|--:|$BS--:|$BRS--:|--:|--:|---|---|"
for m in up down rps p50 p99 l1p50 l1p99 s1p50 s1p99 cpureq cpugib; do
	eval "d=\$M_${m}_direct p=\$M_${m}_tunnel x=\$M_${m}_term s=\$M_${m}_squid"
	rd=$(ratio "$x" "$d"); rp=$(ratio "$x" "$p"); rs=$(ratio "$x" "$s")
	bv="" br=""
	if [ -n "$BEFORE" ]; then
		eval "b=\$M_${m}_before"
		bv=" $b |" br=" $(ratio "$x" "$b") |"
	fi
	target="" verdict=""
	case $m in
	up|down)
		label="bulk $m inside TLS (MB/s)"
		target="≥1.5× squid"
		verdict=$(atleast "$rs" 1.5) ;;
	rps)
		label="keep-alive req/s ($CONNS conns)"
		target="≥2× squid"
		verdict=$(atleast "$rs" 2) ;;
	p50) label="latency p50, $CONNS conns (µs)" ;;
	p99) label="latency p99, $CONNS conns (µs)" ;;
	l1p50) label="latency p50, 1 conn (µs)" ;;
	l1p99) label="latency p99, 1 conn (µs)" ;;
	s1p50) label="latency p50, 1 conn, answer in 2 records (µs)" ;;
	s1p99) label="latency p99, 1 conn, answer in 2 records (µs)" ;;
	cpureq)
		label="CPU µs per request"
		target="≤3× tunnel"
		verdict=$(atmost "$rp" 3) ;;
	cpugib) label="CPU s per GiB relayed" ;;
	esac
	echo "| $label | $d | $p | $x |$bv $s |$br $rd | $rp | $rs | $target | $verdict |"
done
echo
if [ -n "$BEFORE" ]; then
	printf 'term/before: req/s %s, bulk up %s, bulk down %s, CPU µs/req %s, CPU s/GiB %s\n' \
		"$(ratio "$M_rps_term" "$M_rps_before")" "$(ratio "$M_up_term" "$M_up_before")" \
		"$(ratio "$M_down_term" "$M_down_before")" "$(ratio "$M_cpureq_term" "$M_cpureq_before")" \
		"$(ratio "$M_cpugib_term" "$M_cpugib_before")"
	echo
fi
