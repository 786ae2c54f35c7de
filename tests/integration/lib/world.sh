# world.sh: the integration-test world for postern, in real network namespaces.
#
# Sourced (POSIX sh: dash and bash) by each scenario in tests/integration/:
#
#     . "$top_srcdir/tests/integration/lib/world.sh"
#     world_up                 # namespaces, DNS, certificates, servers; traps
#     ... client actions, expect_* assertions ...
#     (no world_down needed: the EXIT trap that world_up installs runs it)
#
# Layout (see tests/integration/README.md for the full picture):
#
#     px namespace                          up namespace
#     lo 127.0.0.1 (proxy :3128, clients)   lo
#     veth-up 10.200.1.1/24  <---- veth ---->  veth-px 10.200.1.2/24 (+ .3 .4 .53)
#             fd00:200:1::1/64                       fd00:200:1::2/64 (+ ::53)
#     10.200.2.0/24, fd00:200:2::/64 routed from px to up: black holes
#
# Nothing is created in the root network namespace: the veth pair is created
# inside px with its peer placed straight into up, so the only addresses a
# test can ever reach are inside namespaces the test made itself.
#
# Every public function is documented where it is defined.  Names starting
# with world__ are private.  Functions keep their variables "local" (dash
# and bash both have it) so that they never clobber a scenario's own.

# ---------------------------------------------------------------- settings

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
WORLD_LIB="$top_srcdir/tests/integration/lib"

# The system interpreter starts in a fraction of the time a version-manager
# shim takes, and ip netns exec keeps the environment either way.
if [ -z "${WORLD_PYTHON:-}" ]; then
	if [ -x /usr/bin/python3 ]; then
		WORLD_PYTHON=/usr/bin/python3
	else
		WORLD_PYTHON=$(command -v python3 || echo python3)
	fi
fi

# Fixed addresses (all inside the test's own namespaces).
WORLD_PX4=10.200.1.1            # px end of the veth
WORLD_PX6=fd00:200:1::1
WORLD_UP4=10.200.1.2            # the upstream host: HTTP, HTTPS, echo
WORLD_UP6=fd00:200:1::2
WORLD_PRIV4=10.200.1.3          # the "private" host: HTTP, HTTPS, echo
WORLD_DEAD4=10.200.1.4          # assigned in up, nothing listens: RST on any port
WORLD_DNS=10.200.1.53           # dnsmasq
WORLD_DNS6=fd00:200:1::53       # the same dnsmasq over IPv6
WORLD_BLACKHOLE4=10.200.2.1     # routed from px into up, silently dropped there:
WORLD_BLACKHOLE6=fd00:200:2::1  #   connects and DNS queries time out
: "${WORLD_DNS_EXTRA:=}"        # "name=addr[,addr] ..." added before world_up
: "${WORLD_WAIT:=3}"            # seconds expect_audit/expect_upstream poll
: "${WORLD_TIMEOUT:=300}"       # a scenario still running then is stopped (0: never)

WORLD_NTEST=0
WORLD_NFAIL=0
WORLD_IS_UP=
WORLD_PROXY_PID=
WORLD_WATCHDOG_PID=

# The names dnsmasq answers and the server certificate covers.  One line
# each: NAME ADDRESS[,ADDRESS] [TTL].  Built-in names carry a 60 s TTL;
# names added at run time (world_dns_set) carry TTL 0.
WORLD_NAMES='allowed.test 10.200.1.2 60
other.test 10.200.1.2 60
deny.test 10.200.1.2 60
api.example.test 10.200.1.2 60
wild.test 10.200.1.2 60
a.wild.test 10.200.1.2 60
b.c.wild.test 10.200.1.2 60
v6only.test fd00:200:1::2 60
dual.test 10.200.1.2,fd00:200:1::2 60
loop.test 127.0.0.1 60
meta.test 169.254.169.254 60
priv.test 10.200.1.3 60
mapped.test ::ffff:127.0.0.1 60
zero-ttl.test 10.200.1.2 0
dead.test 10.200.1.4 60
blackhole.test 10.200.2.1 60
he.test 10.200.1.2,fd00:200:2::1 60'

# ---------------------------------------------------------------- output

# ok MESSAGE: record and print one passed check ("ok N - MESSAGE").
ok() {
	WORLD_NTEST=$((WORLD_NTEST + 1))
	echo "ok $WORLD_NTEST - $*"
	return 0
}

# fail MESSAGE: record and print one failed check; the scenario goes on, and
# exits 1 at the end (the EXIT trap turns any failure into exit status 1).
# Returns 1 so that "expect_... || die ..." can stop early.  Do not call it
# inside $(...) or a pipeline: the count would be lost with the subshell.
fail() {
	WORLD_NTEST=$((WORLD_NTEST + 1))
	WORLD_NFAIL=$((WORLD_NFAIL + 1))
	echo "not ok $WORLD_NTEST - $*"
	return 1
}

# die MESSAGE: stop the scenario now with exit status 1 (cleanup still runs).
die() {
	echo "FATAL: $*"
	WORLD_NFAIL=$((WORLD_NFAIL + 1))
	exit 1
}

# skip REASON: stop the scenario with exit status 77 (automake's "skipped"),
# saying why.
skip() {
	echo "SKIP: $*"
	exit 77
}

# diag TEXT...: print lines prefixed with "# ", for context in the test log.
diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

world__show() {
	printf '%s\n' "$1" | tr -d '\r' | head -n 40 | sed 's/^/#   | /'
}

# expect_eq EXPECTED ACTUAL MESSAGE: ok when the two strings are equal.
expect_eq() {
	if [ "x$1" = "x$2" ]; then
		ok "$3"
	else
		fail "$3: expected '$1', got '$2'"
	fi
}

# expect_ne UNEXPECTED ACTUAL MESSAGE: ok when the two strings differ.
expect_ne() {
	if [ "x$1" != "x$2" ]; then
		ok "$3"
	else
		fail "$3: got '$2', which it must not be"
	fi
}

# expect_match ERE TEXT MESSAGE: ok when some line of TEXT matches the
# extended regular expression.  Carriage returns are removed first, so
# "^Host: allowed\.test$" matches a raw CRLF header line.
expect_match() {
	if printf '%s\n' "$2" | tr -d '\r' | grep -Eq -- "$1"; then
		ok "$3"
	else
		fail "$3: /$1/ not found in:"
		world__show "$2"
	fi
}

# expect_no_match ERE TEXT MESSAGE: ok when no line of TEXT matches.
expect_no_match() {
	if printf '%s\n' "$2" | tr -d '\r' | grep -Eq -- "$1"; then
		fail "$3: /$1/ unexpectedly found in:"
		world__show "$2"
	else
		ok "$3"
	fi
}

# ---------------------------------------------------------------- namespaces

# world_bins_for UID BIN...: print a directory holding every BIN (give
# their full paths) from which UID may run them: the BINs' own when UID can
# reach them all, else a copy in the world's directory.  A checkout under
# /root (mode 0700) is out of an ordinary uid's reach.  The BINs are copied
# together, so a program that finds a sibling next to itself (run finds
# postern-bridge so) still does.
world_bins_for() {
	local u b ok dir
	u=$1
	shift
	ok=1
	for b in "$@"; do
		setpriv --reuid "$u" --regid "$u" --clear-groups test -x "$b" || ok=
	done
	if [ -n "$ok" ]; then
		dirname "$1"
		return 0
	fi
	dir="$WORLD_DIR/bin-$u"
	mkdir -p "$dir" && chmod 0755 "$dir" && cp "$@" "$dir/" || return 1
	echo "$dir"
}

# world_userns_ok UID: true when UID may create a user namespace here.  The
# sysctls do not tell the whole story: the kernel refuses one to any
# chrooted process (a fresh build root), and an LSM may refuse it too, so
# this tries.
world_userns_ok() {
	setpriv --reuid "$1" --regid "$1" --clear-groups unshare -U true 2>/dev/null
}


# in_px CMD...: run CMD inside the px namespace (the proxy's and clients').
in_px() { ip netns exec "$WORLD_NS_PX" "$@"; }

# in_up CMD...: run CMD inside the up namespace (the upstream hosts').
in_up() { ip netns exec "$WORLD_NS_UP" "$@"; }

# in_agent CMD...: run CMD inside the agent namespace (only lo; world_up
# --agent creates it).
in_agent() {
	[ -n "${WORLD_NS_AGENT:-}" ] || die "in_agent: world_up was called without --agent"
	ip netns exec "$WORLD_NS_AGENT" "$@"
}

# world_wait_tcp ADDR:PORT...: from px, until each ADDR:PORT takes a
# connection (a server a test started; 10 s at most).
world_wait_tcp() {
	local a args=
	for a in "$@"; do args="$args --connect $a"; done
	# shellcheck disable=SC2086
	in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 10 $args >/dev/null
}

world__py() { "$WORLD_PYTHON" "$WORLD_LIB/world.py" "$@"; }

# Remove namespaces and temp dirs that an earlier run left behind when it
# was killed with SIGKILL (no trap can run then).  Only our own prefixes,
# and only when the shell whose pid is in the name is gone, so parallel
# scenarios are safe.
world__sweep() {
	local ns pid d
	ip netns list 2>/dev/null | sed -n 's/^\(pw-[A-Za-z0-9-]*-[0-9][0-9]*-\(px\|up\|agent\)\)\( .*\)\{0,1\}$/\1/p' |
	while read -r ns; do
		pid=$(printf '%s\n' "$ns" | sed 's/^.*-\([0-9][0-9]*\)-[a-z]*$/\1/')
		[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && continue
		world__kill_ns "$ns"
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	for d in "${TMPDIR:-/tmp}"/postern-world.*.*; do
		[ -d "$d" ] || continue
		pid=${d##*/postern-world.}
		pid=${pid%%.*}
		case $pid in '' | *[!0-9]*) continue ;; esac
		kill -0 "$pid" 2>/dev/null || rm -rf "$d"
	done
}

# Kill every process inside namespace $1: TERM, up to one second's grace,
# then KILL.  Our own background children are reaped so no zombie remains.
world__kill_ns() {
	local pids left i p
	pids=$(ip netns pids "$1" 2>/dev/null)
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	i=0
	while [ $i -lt 50 ]; do
		left=$(ip netns pids "$1" 2>/dev/null)
		[ -z "$left" ] && break
		sleep 0.02
		i=$((i + 1))
	done
	left=$(ip netns pids "$1" 2>/dev/null)
	# shellcheck disable=SC2086
	[ -n "$left" ] && kill -KILL $left 2>/dev/null
	# Our own children are reaped here.  The detached ones (world__spawn)
	# have exited once ip netns pids no longer lists them; init reaps them
	# (on this kind of machine within a second or two), and waiting for
	# that would only slow every scenario down.
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	return 0
}

# ---------------------------------------------------------------- world_up

# world_up [--agent]: build this scenario's world and return when every
# server answers.  Creates the namespaces $WORLD_NS_PX and $WORLD_NS_UP (and
# $WORLD_NS_AGENT with --agent), the veth between px and up with the
# addresses above, dnsmasq on $WORLD_DNS, the test CA ($WORLD_CA) and server
# certificate, and the upstream servers.  Sets WORLD_DIR (a private temp dir
# that also holds the logs: $WORLD_UPSTREAM_LOG, $WORLD_DNS_LOG) and
# PROXY_LOG (default audit log path, $WORLD_DIR/audit.log).  Installs an
# EXIT trap (and INT/TERM/HUP traps) that runs world_down, so a scenario
# that fails or is interrupted still leaves nothing behind; a scenario that
# needs its own cleanup defines world_cleanup_hook, which world_down calls
# first.  Exits 77 when not root or when namespaces cannot be made, and 1
# when the world cannot be built.
world_up() {
	local want_agent a c err base
	[ -z "$WORLD_IS_UP" ] || die "world_up: the world is already up"
	want_agent=
	for a in "$@"; do
		case $a in
		--agent) want_agent=1 ;;
		*) die "world_up: unknown option $a" ;;
		esac
	done
	[ "$(id -u)" = 0 ] || skip "network namespaces need root (uid is $(id -u))"
	for c in ip dnsmasq openssl "$WORLD_PYTHON"; do
		command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
	done

	base=$(basename "$0" .sh | tr -c 'A-Za-z0-9\n' '-' | cut -c1-20)
	WORLD_ID="pw-$base-$$"
	WORLD_NS_PX="$WORLD_ID-px"
	WORLD_NS_UP="$WORLD_ID-up"
	WORLD_NS_AGENT=
	[ -n "$want_agent" ] && WORLD_NS_AGENT="$WORLD_ID-agent"

	# The traps go in before anything is created, so a failure half-way
	# through world_up cleans up what exists so far.
	WORLD_IS_UP=1
	trap 'world__on_exit' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP

	# A hung scenario would hold "make check" (and CI) until its own limit;
	# the watchdog stops it instead, and the trap still cleans up.
	# Detached like the servers (see world__spawn), with stderr left on the
	# test's log for its message.  A simple command, not world__py: dash
	# keeps a copy of the substitution's pipe open across a function's
	# redirection, and the substitution would wait for the watchdog.
	if [ "$WORLD_TIMEOUT" != 0 ]; then
		WORLD_WATCHDOG_PID=$( ("$WORLD_PYTHON" "$WORLD_LIB/world.py" watchdog --pid $$ \
			--timeout "$WORLD_TIMEOUT" </dev/null >/dev/null & echo $!) )
	fi

	world__sweep
	# The configs scenarios write must pass the proxy's StrictModes check
	# (postern.ini(5)): never group- or world-writable, whatever the
	# caller's umask.
	umask 022
	# The shell's pid in the name lets world__sweep tell a dead run's dir.
	WORLD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/postern-world.$$.XXXXXX") || die "mktemp failed"
	# Traversable by everyone: a proxy that drops to an unprivileged uid must
	# still reach its socket and log paths in here.
	chmod 755 "$WORLD_DIR"
	WORLD_UPSTREAM_LOG="$WORLD_DIR/upstream.log"
	WORLD_DNS_LOG="$WORLD_DIR/dns.log"
	WORLD_CA="$WORLD_DIR/ca.pem"
	: "${PROXY_LOG:=$WORLD_DIR/audit.log}"
	export WORLD_DIR WORLD_CA WORLD_NS_PX WORLD_NS_UP WORLD_NS_AGENT PROXY_LOG

	if ! err=$(ip netns add "$WORLD_NS_PX" 2>&1); then
		WORLD_NS_PX=
		skip "cannot create a network namespace: $err"
	fi
	ip netns add "$WORLD_NS_UP" || die "ip netns add $WORLD_NS_UP failed"
	if [ -n "$WORLD_NS_AGENT" ]; then
		ip netns add "$WORLD_NS_AGENT" || die "ip netns add $WORLD_NS_AGENT failed"
		ip -n "$WORLD_NS_AGENT" link set lo up || die "agent: lo up failed"
	fi

	# The client side resolves through the world's dnsmasq: ip netns exec
	# bind-mounts /etc/netns/NAME/resolv.conf over /etc/resolv.conf.
	# Without it (a read-only /etc) only clients that resolve by themselves
	# or take --resolve work, so it is worth a note, not a failure.
	if ! { mkdir -p "/etc/netns/$WORLD_NS_PX" &&
	       printf 'nameserver %s\noptions timeout:2 attempts:3\n' "$WORLD_DNS" \
		>"/etc/netns/$WORLD_NS_PX/resolv.conf"; } 2>/dev/null; then
		diag "cannot write /etc/netns/$WORLD_NS_PX/resolv.conf: px resolves with the host's resolv.conf"
	fi

	world__net || die "network setup failed"
	world__certs || die "certificate generation failed"
	world__dnsmasq || die "dnsmasq did not start"
	world__servers || die "upstream servers did not start"
	if ! world__py wait --timeout 5 --file "$WORLD_DIR/servers.ready" \
		--pid "$WORLD_SERVERS_PID" --pid "$WORLD_DNSMASQ_PID" >"$WORLD_DIR/wait.out" 2>&1 ||
	   ! in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 \
		--dns "$WORLD_DNS" --pid "$WORLD_DNSMASQ_PID" >>"$WORLD_DIR/wait.out" 2>&1; then
		cat "$WORLD_DIR/wait.out"
		die "the world did not come up"
	fi
	# The readiness probe above asked dnsmasq once; start the query log
	# empty so that "no DNS query was made" means what it says.
	dns_log_reset
	return 0
}

world__net() {
	local ns
	for ns in "$WORLD_NS_PX" "$WORLD_NS_UP"; do
		ip -n "$ns" link set lo up || return 1
	done
	ip -n "$WORLD_NS_PX" link add veth-up type veth peer name veth-px netns "$WORLD_NS_UP" ||
		return 1
	# nodad: an address still in duplicate address detection cannot be bound
	# or used, which would make the first second of every test flaky.
	ip -n "$WORLD_NS_PX" addr add "$WORLD_PX4/24" dev veth-up &&
	ip -n "$WORLD_NS_PX" addr add "$WORLD_PX6/64" dev veth-up nodad &&
	ip -n "$WORLD_NS_UP" addr add "$WORLD_UP4/24" dev veth-px &&
	ip -n "$WORLD_NS_UP" addr add "$WORLD_PRIV4/24" dev veth-px &&
	ip -n "$WORLD_NS_UP" addr add "$WORLD_DEAD4/24" dev veth-px &&
	ip -n "$WORLD_NS_UP" addr add "$WORLD_DNS/24" dev veth-px &&
	ip -n "$WORLD_NS_UP" addr add "$WORLD_UP6/64" dev veth-px nodad &&
	ip -n "$WORLD_NS_UP" addr add "$WORLD_DNS6/64" dev veth-px nodad &&
	ip -n "$WORLD_NS_PX" link set veth-up up &&
	ip -n "$WORLD_NS_UP" link set veth-px up || return 1
	# The black holes: px routes them to up, which neither owns nor
	# forwards them and discards them without an ICMP error, so a connect
	# or a DNS query there waits for its timeout (504 and DNS-timeout
	# scenarios), unlike 10.200.1.4 which refuses at once.
	ip -n "$WORLD_NS_PX" route add 10.200.2.0/24 via "$WORLD_UP4" &&
	ip -n "$WORLD_NS_PX" route add fd00:200:2::/64 via "$WORLD_UP6" &&
	ip -n "$WORLD_NS_UP" route add blackhole 10.200.2.0/24 &&
	ip -n "$WORLD_NS_UP" route add blackhole fd00:200:2::/64
}

# Every name in WORLD_NAMES and WORLD_DNS_EXTRA, one per line.
world__all_names() {
	local n e
	printf '%s\n' "$WORLD_NAMES" | while read -r n _; do echo "$n"; done
	for e in $WORLD_DNS_EXTRA; do echo "${e%%=*}"; done
}

world__certs() {
	local d sans n
	d=$WORLD_DIR
	sans=
	for n in $(world__all_names); do
		sans="${sans:+$sans,}DNS:$n"
	done
	sans="$sans,DNS:*.wild.test,IP:$WORLD_UP4,IP:$WORLD_PRIV4,IP:$WORLD_UP6"
	cat >"$d/server.ext" <<-EOF
		basicConstraints = critical,CA:FALSE
		keyUsage = critical,digitalSignature
		extendedKeyUsage = serverAuth
		subjectAltName = $sans
	EOF
	# EC P-256 keys: generating them takes milliseconds, RSA would not.
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/ca.key" -out "$d/ca.pem" -days 2 -sha256 \
		-subj "/CN=postern test CA $WORLD_ID" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" >"$d/openssl.out" 2>&1 &&
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/server.key" -out "$d/server.csr" \
		-subj "/CN=allowed.test" >>"$d/openssl.out" 2>&1 &&
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-set_serial "0x$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" \
		-days 2 -sha256 -extfile "$d/server.ext" -out "$d/server.pem" \
		>>"$d/openssl.out" 2>&1 || { cat "$d/openssl.out"; return 1; }
	WORLD_CERT="$d/server.pem"
	WORLD_KEY="$d/server.key"
	return 0
}

world__dnsmasq() {
	local conf n addrs ttl e
	conf="$WORLD_DIR/dnsmasq.conf"
	: >"$WORLD_DIR/hosts.runtime"
	{
		echo "listen-address=$WORLD_DNS"
		echo "listen-address=$WORLD_DNS6"
		echo "bind-interfaces"
		echo "port=53"
		echo "no-resolv"
		echo "no-hosts"
		echo "no-poll"
		echo "user=root"
		# Names in .test that we do not define get NXDOMAIN from us rather
		# than REFUSED for lack of an upstream server.
		echo "local=/test/"
		# Run-time names (world_dns_set) live in this file, re-read on
		# SIGHUP; they answer with TTL 0 so that a re-resolution sees a
		# change at once.
		echo "addn-hosts=$WORLD_DIR/hosts.runtime"
		echo "local-ttl=0"
		echo "log-queries"
		echo "log-facility=$WORLD_DNS_LOG"
		printf '%s\n' "$WORLD_NAMES" | while read -r n addrs ttl; do
			echo "host-record=$n,$addrs,$ttl"
		done
		for e in $WORLD_DNS_EXTRA; do
			echo "host-record=${e%%=*},${e#*=},60"
		done
	} >"$conf"
	WORLD_DNSMASQ_PID=$(world__spawn "$WORLD_DIR/dnsmasq.out" \
		ip netns exec "$WORLD_NS_UP" dnsmasq --keep-in-foreground --conf-file="$conf" \
		--pid-file="$WORLD_DIR/dnsmasq.pid")
	return 0
}

# world__spawn OUTFILE CMD...: start CMD detached from the scenario shell
# (not one of its jobs, so a scenario's own bare "wait" never waits for the
# world's servers), output appended to OUTFILE, and print its pid.  CMD
# should be "ip netns exec NS PROG ...": ip execs PROG without forking, so
# the pid is PROG's.  world_down finds such processes by namespace.
world__spawn() {
	local out
	out=$1
	shift
	("$@" </dev/null >>"$out" 2>&1 & echo $!)
}

world__servers() {
	WORLD_SERVERS_PID=$(world__spawn "$WORLD_DIR/servers.out" \
		ip netns exec "$WORLD_NS_UP" "$WORLD_PYTHON" "$WORLD_LIB/world.py" serve \
		--log "$WORLD_UPSTREAM_LOG" --ready "$WORLD_DIR/servers.ready" \
		--cert "$WORLD_CERT" --key "$WORLD_KEY" \
		--http "$WORLD_UP4:80" --http "$WORLD_UP4:8080" \
		--http "[$WORLD_UP6]:80" --http "[$WORLD_UP6]:8080" \
		--http "$WORLD_PRIV4:80" --http "$WORLD_PRIV4:8080" \
		--https "$WORLD_UP4:443" --https "[$WORLD_UP6]:443" --https "$WORLD_PRIV4:443" \
		--echo "$WORLD_UP4:7" --echo "[$WORLD_UP6]:7" --echo "$WORLD_PRIV4:7")
	return 0
}

# ---------------------------------------------------------------- world_down

# world_down: stop the proxy, kill every process in the world's namespaces
# and the scenario's own remaining background jobs, delete the namespaces
# and the temp dir.  Idempotent; world_up's EXIT trap
# calls it, so scenarios rarely need to.  When the scenario failed the tails
# of every log are printed first (they end up in the test's .log file), and
# WORLD_KEEP=1 keeps the temp dir for a closer look.
world_down() {
	local ns
	[ -n "$WORLD_IS_UP" ] || return 0
	WORLD_IS_UP=
	[ -n "$WORLD_WATCHDOG_PID" ] && kill "$WORLD_WATCHDOG_PID" 2>/dev/null
	if command -v world_cleanup_hook >/dev/null 2>&1; then
		world_cleanup_hook || :
	fi
	if { [ "${1:-0}" != 0 ] && [ "${1:-0}" != 77 ]; } || [ "$WORLD_NFAIL" -gt 0 ]; then
		world__dump_logs
	fi
	[ -n "$WORLD_PROXY_PID" ] && proxy_stop >/dev/null 2>&1
	for ns in "${WORLD_NS_AGENT:-}" "${WORLD_NS_PX:-}" "${WORLD_NS_UP:-}"; do
		[ -n "$ns" ] || continue
		world__kill_ns "$ns"
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	world__kill_jobs
	if [ -n "${WORLD_DIR:-}" ] && [ -d "$WORLD_DIR" ]; then
		if [ "${WORLD_KEEP:-0}" = 1 ]; then
			echo "# world kept in $WORLD_DIR"
		else
			rm -rf "$WORLD_DIR"
		fi
	fi
	return 0
}

# Background jobs the scenario started outside the namespaces (a client
# loop, a sleep) would outlive it: end them too.  "jobs -p" is written to a
# file because in a command substitution dash forgets its job table.
world__kill_jobs() {
	local f p pids
	f="${WORLD_DIR:-/tmp}/.jobs.$$"
	jobs -p >"$f" 2>/dev/null || return 0
	pids=$(cat "$f")
	rm -f "$f"
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	return 0
}

world__dump_logs() {
	local f
	[ -n "${WORLD_DIR:-}" ] && [ -d "$WORLD_DIR" ] || return 0
	echo "# ---- the world's logs, from $WORLD_DIR"
	for f in "$PROXY_LOG" "$WORLD_DIR/proxy.out" "$WORLD_UPSTREAM_LOG" \
		 "$WORLD_DNS_LOG" "$WORLD_DIR/servers.out" "$WORLD_DIR/dnsmasq.out"; do
		[ -s "$f" ] || continue
		echo "# ---- last lines of $f"
		tail -n 30 "$f" | cut -c1-400 | sed 's/^/#   /'
	done
}

world__on_exit() {
	rc=$?
	# Ignore further signals until the world is gone: a second Ctrl-C or
	# the watchdog must not cut the cleanup short.
	trap - EXIT
	trap '' INT TERM HUP
	world_down "$rc"
	if [ "$rc" = 0 ] && [ "$WORLD_NFAIL" -gt 0 ]; then
		rc=1
	fi
	case $rc in
	0) echo "# PASS: $WORLD_NTEST checks" ;;
	77) ;;
	*) echo "# FAIL: $WORLD_NFAIL of $WORLD_NTEST checks failed (exit $rc)" ;;
	esac
	exit "$rc"
}

# ---------------------------------------------------------------- DNS

# dns_query NAME [TYPE] [--ttl|--all|--rcode]: ask the world's dnsmasq from
# px.  Prints the answer addresses one per line ("ADDR TTL" with --ttl,
# "TYPE ADDR TTL" with --all, only NOERROR/NXDOMAIN/... with --rcode).
# Returns 0 for NOERROR, 2 for another rcode, 4 for no answer at all.
# "dns_query -" reads "NAME TYPE" lines on stdin and prints one
# "NAME TYPE RCODE ADDR,ADDR" line (sorted, "-" for none) for each.
dns_query() {
	in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" dns --server "$WORLD_DNS" "$@"
}

# dns_queries [NAME]: the queries dnsmasq has logged (since the last
# dns_log_reset), as "TYPE NAME" lines, optionally only those for NAME.
dns_queries() {
	sed -n 's/^.*query\[\([A-Za-z0-9]*\)\] \([^ ]*\) from .*$/\1 \2/p' "$WORLD_DNS_LOG" |
	if [ -n "${1:-}" ]; then awk -v n="$1" '$2 == n'; else cat; fi
}

# dns_query_count [NAME]: how many queries dnsmasq has logged (for NAME).
dns_query_count() {
	dns_queries "$@" | wc -l | tr -d ' '
}

# dns_log_reset: forget the queries logged so far (dnsmasq appends, so
# truncating the file is safe while it runs).
dns_log_reset() {
	: >"$WORLD_DNS_LOG"
}

# world_dns_set NAME [ADDR...]: make NAME resolve to ADDRs (v4 and/or v6)
# with TTL 0 from now on, replacing what an earlier world_dns_set gave it;
# with no ADDR the name is removed again (NXDOMAIN).  For names outside the
# built-in table (those answer from host-record lines, which win).  Returns
# when dnsmasq answers the new set, or fails after 3 s.
world_dns_set() {
	local n f a want want4 got4 got6 i
	n=$1
	shift
	f="$WORLD_DIR/hosts.runtime"
	awk -v n="$n" '$2 != n' "$f" >"$f.new" && mv "$f.new" "$f"
	for a in "$@"; do
		printf '%s %s\n' "$a" "$n" >>"$f"
	done
	kill -HUP "$WORLD_DNSMASQ_PID"
	want=$(printf '%s\n' "$@" | grep ':' | sort)
	want4=$(printf '%s\n' "$@" | grep -v ':' | sed '/^$/d' | sort)
	i=0
	while [ $i -lt 150 ]; do
		got4=$(dns_query "$n" A 2>/dev/null | sort)
		got6=$(dns_query "$n" AAAA 2>/dev/null | sort)
		[ "x$got4" = "x$want4" ] && [ "x$got6" = "x$want" ] && return 0
		sleep 0.02
		i=$((i + 1))
	done
	fail "world_dns_set $n: dnsmasq answers '$got4 $got6', not '$*'"
}

# ---------------------------------------------------------------- logs

# upstream_requests [COND...]: the requests the upstream servers received,
# one JSON object per line (fields: kind http|https, conn, req, listen,
# peer, sni, request_line, method, target, version, host, headers
# [[name, value]...], head (raw), body_length, body_sha256, body_mode,
# continued).
# COND is KEY=VALUE, KEY!=VALUE or KEY~ERE on a (dotted) field, e.g.
# upstream_requests kind=https sni=allowed.test.
upstream_requests() {
	world__py jq "$WORLD_UPSTREAM_LOG" event=request "$@"
}

# upstream_log_reset: forget what the upstream servers logged so far (they
# append, so truncating the file is safe while they run).
upstream_log_reset() {
	: >"$WORLD_UPSTREAM_LOG"
}

# upstream_events [COND...]: every upstream log line (event accept, tls,
# request, close, error) matching COND.
upstream_events() {
	world__py jq "$WORLD_UPSTREAM_LOG" "$@"
}

# upstream_get FIELD [COND...]: FIELD of each matching request, one a line.
upstream_get() {
	local f
	f=$1
	shift
	world__py jq --get "$f" "$WORLD_UPSTREAM_LOG" event=request "$@"
}

# upstream_count [COND...]: how many requests matched.
upstream_count() {
	world__py jq --count "$WORLD_UPSTREAM_LOG" event=request "$@"
}

# audit_lines [COND...]: the proxy's audit log lines ($PROXY_LOG) matching
# every COND (KEY=VALUE, KEY!=VALUE, KEY~ERE; KEY may be dotted).  Values
# are compared as text: strings as they are, numbers as JSON writes them,
# true/false/null.
audit_lines() {
	world__py jq "$PROXY_LOG" "$@"
}

# audit_get FIELD [COND...]: FIELD of each matching audit line, one a line.
audit_get() {
	local f
	f=$1
	shift
	world__py jq --get "$f" "$PROXY_LOG" "$@"
}

# audit_count [COND...]: how many audit lines matched.
audit_count() {
	world__py jq --count "$PROXY_LOG" "$@"
}

# expect_audit MESSAGE COND...: ok when some audit line matches every COND,
# polling up to $WORLD_WAIT seconds because the proxy writes the line for a
# closed connection only after the close.
expect_audit() {
	local m
	m=$1
	shift
	world__poll audit_count "$@" && { ok "$m"; return 0; }
	fail "$m: no audit line with $*"
	[ -s "$PROXY_LOG" ] && world__show "$(tail -n 10 "$PROXY_LOG")"
	return 1
}

# expect_no_audit MESSAGE COND...: ok when no audit line matches.
expect_no_audit() {
	local m c
	m=$1
	shift
	c=$(audit_count "$@")
	[ "$c" = 0 ] && { ok "$m"; return 0; }
	fail "$m: $c audit line(s) with $*"
}

# expect_upstream MESSAGE COND...: ok when the upstream received a request
# matching every COND (polling up to $WORLD_WAIT seconds).
expect_upstream() {
	local m
	m=$1
	shift
	world__poll upstream_count "$@" && { ok "$m"; return 0; }
	fail "$m: no upstream request with $*"
}

world__poll() {
	local i n c
	i=0
	n=$((WORLD_WAIT * 20))
	while :; do
		c=$("$@")
		[ "${c:-0}" -gt 0 ] && return 0
		[ $i -ge $n ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}

# pattern_sha256 N: the sha256 of the N bytes that /bytes/N and
# /chunked/N serve, to compare with what a client received.
pattern_sha256() {
	world__py pattern --sha256 "$1"
}

# ---------------------------------------------------------------- clients

# curl_px ARGS...: curl inside px with the world's CA, a 10 s limit and
# errors shown: curl_px -x http://127.0.0.1:3128 https://allowed.test/
curl_px() {
	in_px curl -sS --max-time 10 --cacert "$WORLD_CA" "$@"
}

# curl_status ARGS...: the status a client got, as one number: the proxy's
# answer to CONNECT when it refused the tunnel (curl reports such a refusal
# as http_code 000), otherwise the HTTP response's status; 000 when there
# was no answer at all.  curl_status -x http://127.0.0.1:3128 https://deny.test/
curl_status() {
	local out
	out=$(curl_px -o /dev/null -w '%{http_connect} %{http_code}' "$@" 2>"$WORLD_DIR/curl_status.err")
	case $out in
	"000 000" | "")
		# No answer at all is rarely what a scenario expects: say why, on
		# stderr (the test's log), without changing what is printed.
		sed 's/^/# curl_status: /' "$WORLD_DIR/curl_status.err" >&2
		echo 000 ;;
	"000 "* | "200 "*) echo "${out#* }" ;;
	*) echo "${out%% *}" ;;
	esac
}

# ---------------------------------------------------------------- proxy

# proxy_start CONFFILE [ARGS...]: run "$top_builddir/postern-proxy -c
# CONFFILE ARGS" in px in the background, its stdout and stderr in
# $WORLD_DIR/proxy.out, and return when every listen = and admin = line of
# CONFFILE (tcp:HOST:PORT, unix:PATH) listens, or fail after 5 s (or as soon as the
# proxy exits).  Listening is read from /proc/net in px, not probed with a
# connection, so the audit log holds only the scenario's own connections.
# Sets WORLD_PROXY_PID.
proxy_start() {
	local conf bin waits l
	conf=$1
	shift
	bin="${POSTERN_PROXY:-$top_builddir/postern-proxy}"
	[ -x "$bin" ] || { fail "proxy_start: $bin is not built"; return 1; }
	[ -z "$WORLD_PROXY_PID" ] || proxy_stop >/dev/null
	waits=
	for l in $(sed -n 's/[;#].*$//; s/^[[:space:]]*\(listen\|admin\)[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*$/\2/p' "$conf"); do
		case $l in
		tcp:*) waits="$waits --tcp ${l#tcp:}" ;;
		unix:*) waits="$waits --unix ${l#unix:}" ;;
		esac
	done
	# Not through in_px: $! must be the proxy itself (see world__dnsmasq).
	ip netns exec "$WORLD_NS_PX" "$bin" -c "$conf" "$@" >>"$WORLD_DIR/proxy.out" 2>&1 &
	WORLD_PROXY_PID=$!
	# shellcheck disable=SC2086
	if ! in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 \
		--pid "$WORLD_PROXY_PID" $waits; then
		fail "proxy_start: postern-proxy -c $conf is not listening"
		world__show "$(tail -n 20 "$WORLD_DIR/proxy.out")"
		return 1
	fi
	return 0
}

# px_relay SOCK PORT: forward 127.0.0.1:PORT in px to the UNIX socket SOCK,
# one new UNIX connection per TCP connection (socat), so that clients that
# cannot speak to a UNIX-socket proxy (curl 7.88) reach a unix: listener as
# "-x http://127.0.0.1:PORT".  Returns once it listens; world_down ends it.
px_relay() {
	command -v socat >/dev/null 2>&1 || skip "socat is not installed"
	ip netns exec "$WORLD_NS_PX" socat "TCP-LISTEN:$2,bind=127.0.0.1,reuseaddr,fork" \
		"UNIX-CONNECT:$1" >>"$WORLD_DIR/relay.out" 2>&1 &
	in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 --pid $! \
		--tcp "127.0.0.1:$2" || fail "px_relay: socat is not listening on 127.0.0.1:$2"
}

# proxy_fds, proxy_rss_kb: how many descriptors the running proxy holds,
# and its resident memory in kB.
proxy_fds() { ls "/proc/$WORLD_PROXY_PID/fd" | wc -l; }
proxy_rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$WORLD_PROXY_PID/status"; }

# proxy_stop: SIGTERM the proxy, wait up to 5 s (then SIGKILL), and return
# its exit status (also printed), so a scenario can check a clean exit:
# proxy_stop; expect_eq 0 $? "proxy exits cleanly".
proxy_stop() {
	local p i rc
	p=$WORLD_PROXY_PID
	[ -n "$p" ] || return 0
	WORLD_PROXY_PID=
	kill -TERM "$p" 2>/dev/null
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 250 ]; do
		# A zombie answers kill -0: it has exited and only waits for us.
		[ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = Z ] && break
		sleep 0.02
		i=$((i + 1))
	done
	kill -KILL "$p" 2>/dev/null
	wait "$p"
	rc=$?
	echo "# postern-proxy exited with status $rc"
	return $rc
}

# proxy_reload: SIGHUP the running proxy.
proxy_reload() {
	[ -n "$WORLD_PROXY_PID" ] || { fail "proxy_reload: no proxy running"; return 1; }
	kill -HUP "$WORLD_PROXY_PID"
}
