# lib-admin/admin.sh: helpers for the admin and reload scenarios, sourced
# after lib/world.sh (POSIX sh, set -u safe).
#
#     . "$top_srcdir/tests/integration/lib/world.sh"
#     . "$top_srcdir/tests/integration/lib-admin/admin.sh"
#
# The admin socket is a UNIX socket in $WORLD_DIR: path sockets do not
# belong to a network namespace, so these helpers reach it from anywhere.

ADMIN_LIB="$top_srcdir/tests/integration/lib-admin"
ADMIN_SOCK="$WORLD_DIR/admin.sock"
: "${POSTERN_PROXY:=$top_builddir/postern-proxy}"

# admin_proxy_section [LINE...]: print the [proxy] section every admin
# scenario starts from (TCP listener on 127.0.0.1:3128, the admin socket,
# the audit log, the world's DNS), then each LINE.
admin_proxy_section() {
	local l
	echo "[proxy]"
	echo "listen = tcp:127.0.0.1:3128"
	echo "admin = unix:$ADMIN_SOCK"
	echo "log = $PROXY_LOG"
	echo "dns_servers = $WORLD_DNS"
	[ -z "$POSTERN_TEST_WORKERS" ] || echo "workers = $POSTERN_TEST_WORKERS"
	for l in "$@"; do echo "$l"; done
}

# admin_curl ARGS...: curl over the admin socket, 5 s limit.
admin_curl() {
	curl -sS --max-time 5 --unix-socket "$ADMIN_SOCK" "$@"
}

# admin_get PATH: the body of GET PATH.
admin_get() {
	admin_curl "http://postern$1"
}

# admin_wait: return once the admin socket answers /status (5 s at most).
admin_wait() {
	local i
	i=0
	while [ $i -lt 100 ]; do
		admin_get /status >/dev/null 2>&1 && return 0
		sleep 0.05
		i=$((i + 1))
	done
	fail "the admin socket $ADMIN_SOCK does not answer"
	return 1
}

# status_get EXPR: evaluate the python expression EXPR with s bound to
# GET /status's JSON, e.g. status_get 's["config"]["generation"]'.
status_get() {
	admin_get /status | "$WORLD_PYTHON" -c '
import json, sys
s = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1"
}

# generation: the generation in force, from /status.
generation() {
	status_get 's["config"]["generation"]'
}

# wait_generation N [SECONDS]: wait until the generation in force is at
# least N; prints the milliseconds it took; returns 1 on timeout (default
# 1 s: a change must be in force within one second).
wait_generation() {
	local want limit t0 now g
	want=$1
	limit=${2:-1}
	t0=$(date +%s%N)
	while :; do
		g=$(generation 2>/dev/null)
		now=$(date +%s%N)
		if [ -n "$g" ] && [ "$g" -ge "$want" ]; then
			echo $(((now - t0) / 1000000))
			return 0
		fi
		if [ $(((now - t0) / 1000000)) -gt $((limit * 1000)) ]; then
			echo $(((now - t0) / 1000000))
			return 1
		fi
		sleep 0.02
	done
}

# metrics_get NAME [LABEL=VALUE]...: one sample's value from GET /metrics,
# parsed strictly as Prometheus text (lib-admin/prom.py).
metrics_get() {
	local f
	f="$WORLD_DIR/metrics.$$"
	admin_get /metrics >"$f" || { rm -f "$f"; return 1; }
	"$WORLD_PYTHON" "$ADMIN_LIB/prom.py" get "$f" "$@"
	local rc=$?
	rm -f "$f"
	return $rc
}

# workers_spread [PORT]: with POSTERN_TEST_WORKERS=N (a scenario's second
# run over N event loops), check that every worker accepted connections
# (/metrics' postern_worker_connections).  A TCP listener's connections are
# spread by the kernel's hash of their addresses (SO_REUSEPORT), so a
# scenario of a handful can land on one worker by chance (1 in 2^5 for
# six): a worker that has none yet is offered 40 more connections, opened
# and closed on 127.0.0.1:PORT (3128), before it counts as not accepting.
workers_spread() {
	local i n more
	[ "${POSTERN_TEST_WORKERS:-1}" -gt 1 ] || return 0
	i=0
	while [ $i -lt "$POSTERN_TEST_WORKERS" ]; do
		n=$(metrics_get postern_worker_connections worker="$i")
		more=""
		if [ "${n:-0}" -eq 0 ] 2>/dev/null; then
			in_px "$WORLD_PYTHON" -c '
import socket, sys
for _ in range(40):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    except OSError:
        pass
' "${1:-3128}"
			sleep 0.2
			n=$(metrics_get postern_worker_connections worker="$i")
			more=" (after 40 more connections)"
		fi
		[ "${n:-0}" -gt 0 ] && ok "worker $i accepted $n connections$more" ||
			fail "worker $i accepted no connection (${n:-no metric})$more"
		i=$((i + 1))
	done
}

# ctl ARGS...: postern-proxy ctl ARGS.
ctl() {
	"$POSTERN_PROXY" ctl "$@"
}

# write_by_rename SRC DEST: an editor's save: a temporary in DEST's
# directory, renamed over DEST.
write_by_rename() {
	cp "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}

# write_in_place SRC DEST: truncate DEST and write SRC's bytes into the same
# inode.
write_in_place() {
	cat "$1" >"$2"
}

# sha12 FILE: the first 12 hex digits of FILE's SHA-256, as the proxy
# reports a config's hash.
sha12() {
	sha256sum "$1" | cut -c1-12
}

# reload_pair_up: write two allowlists, $WORLD_DIR/a.ini and b.ini, that
# both permit allowed.test (echo port 7 and HTTP 80) and differ in one
# host each (A: other.test, B: api.example.test); start the proxy on
# $conf = $WORLD_DIR/conf.d/postern.ini holding A, wait for its admin
# socket.  The load generator (load.py load)
# alternates between the two.
reload_pair_up() {
	conf="$WORLD_DIR/conf.d/postern.ini"
	mkdir -p "$WORLD_DIR/conf.d"
	{ reload__common; echo "allow_hosts = other.test:7 private, other.test:80 private"; } >"$WORLD_DIR/a.ini"
	{ reload__common; echo "allow_hosts = api.example.test:7 private, api.example.test:80 private"; } >"$WORLD_DIR/b.ini"
	cp "$WORLD_DIR/a.ini" "$conf"
	proxy_start "$conf" || die "no proxy"
	admin_wait || die "no admin socket"
}

reload__common() {
	admin_proxy_section "max_connections = 2000"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test:7 private, allowed.test:80 private
	EOF
}
