#!/bin/sh
# proxy-workers: with workers = 2 the connections really land on both event
# loops, over a TCP listener (one SO_REUSEPORT socket per worker) and over
# a UNIX one (every worker watches the one socket), as /metrics'
# postern_worker_connections counts them; and a session's share of
# max_connections is the proxy's, not a worker's: spread over both
# workers, the connection after the share is refused 503
# session_connection_limit, on either kind of listener.  A reload reaches
# both workers: every tunnel held across it still carries bytes, and the
# decisions after it name the new generation whichever worker made them.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

H="$top_srcdir/tests/integration/lib-proxy/hold.py"
conf="$WORLD_DIR/conf.d/postern.ini"
mkdir -p "$WORLD_DIR/conf.d"
N=24

# write_conf [EXTRA [defaults] LINE]: two workers; each session may hold N.
write_conf() {
	{
		admin_proxy_section "max_connections = 1000" "workers = 2"
		echo "[defaults]"
		echo "allow_hosts = allowed.test:7 private"
		echo "max_connections = $N"
		[ -z "$1" ] || echo "$1"
		echo "[session u]"
		echo "listen = unix:$WORLD_DIR/u.sock mode=0666"
		echo "max_connections = $N"
		echo "max_connections_per_uid = $N"
	} >"$WORLD_DIR/next.ini"
	write_by_rename "$WORLD_DIR/next.ini" "$conf"
}

# worker I: how many connections worker I has accepted so far.
worker() {
	metrics_get postern_worker_connections worker="$1"
}

write_conf
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_match "2 workers" "$(cat "$WORLD_DIR/proxy.out")" "the proxy runs two event loops"

# TCP: N + 1 tunnels of session default at once.
in_px "$WORLD_PYTHON" "$H" 127.0.0.1:3128 allowed.test:7 $((N + 1)) "$WORLD_DIR/t.out" "$WORLD_DIR/go-t" \
	--timeout 30 &
ht=$!
wait_ready "$WORLD_DIR/t.out"
expect_eq $N "$(grep -cx 200 "$WORLD_DIR/t.out")" "session default opens its share of $N tunnels over TCP"
expect_eq 1 "$(grep -cx "503 session_connection_limit" "$WORLD_DIR/t.out")" \
	"the one after its share is refused, though the workers together hold it"
t0=$(worker 0) t1=$(worker 1)
diag "TCP: worker 0 accepted $t0, worker 1 $t1"
expect_eq $((N + 1)) $((t0 + t1)) "the workers together accepted every TCP connection"
[ "$t0" -gt 0 ] && [ "$t1" -gt 0 ] && ok "the TCP connections landed on both workers" ||
	fail "the TCP connections did not spread: worker 0 $t0, worker 1 $t1"
# Every accepted TCP socket, on either worker, has TCP_NODELAY (its
# listener's, inherited), as every upstream socket does: a streamed
# answer's small writes do not wait for a delayed ACK.
nd=$("$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/nodelay.py" "$WORLD_PROXY_PID" 3128)
expect_eq "clients=$N/$N upstreams=$N/$N" "$nd" "every tunnel's sockets, on both workers, have TCP_NODELAY"

# UNIX: the same through session u's socket.
in_px "$WORLD_PYTHON" "$H" "unix:$WORLD_DIR/u.sock" allowed.test:7 $((N + 1)) "$WORLD_DIR/u.out" \
	"$WORLD_DIR/go-t" --timeout 30 &
hu=$!
wait_ready "$WORLD_DIR/u.out"
expect_eq $N "$(grep -cx 200 "$WORLD_DIR/u.out")" "session u opens its share of $N tunnels over UNIX"
expect_eq 1 "$(grep -cx "503 session_connection_limit" "$WORLD_DIR/u.out")" \
	"the one after its share is refused"
u0=$(($(worker 0) - t0)) u1=$(($(worker 1) - t1))
diag "UNIX: worker 0 accepted $u0, worker 1 $u1"
expect_eq $((N + 1)) $((u0 + u1)) "the workers together accepted every UNIX connection"
[ "$u0" -gt 0 ] && [ "$u1" -gt 0 ] && ok "the UNIX connections landed on both workers" ||
	fail "the UNIX connections did not spread: worker 0 $u0, worker 1 $u1"
d=$((u0 - u1))
[ ${d#-} -le 1 ] && ok "the workers took turns on the UNIX socket" ||
	fail "a burst on the UNIX socket went $u0 to $u1, not in turns"
expect_eq $((2 * N)) "$(status_get 's["connections_open"]')" "/status counts both workers' tunnels"

# A reload while both workers hold tunnels: all still work after it, and
# what is decided after it says the new generation on either worker.
g=$(generation)
write_conf "allow_hosts = other.test:7 private"
wait_generation $((g + 1)) 3 >/dev/null || fail "the reload was not taken"
touch "$WORLD_DIR/go-t"
wait "$ht"
expect_eq 0 $? "no TCP tunnel was dropped by the reload"
wait "$hu"
expect_eq 0 $? "no UNIX tunnel was dropped by the reload"
expect_eq "echoed $N of $N" "$(tail -1 "$WORLD_DIR/t.out")" "every TCP tunnel carried bytes after it"
expect_eq "echoed $N of $N" "$(tail -1 "$WORLD_DIR/u.out")" "every UNIX tunnel carried bytes after it"
touch "$WORLD_DIR/go-n"
in_px "$WORLD_PYTHON" "$H" 127.0.0.1:3128 other.test:7 8 "$WORLD_DIR/n.out" "$WORLD_DIR/go-n" --timeout 30
expect_eq 8 "$(grep -cx 200 "$WORLD_DIR/n.out")" "the new rule is in force on every worker"
n=$(grep -c "\"host\":\"other.test\".*\"generation\":$((g + 1))\|\"generation\":$((g + 1)).*\"host\":\"other.test\"" \
	"$PROXY_LOG")
[ "$n" -ge 8 ] && ok "each decision after the reload names generation $((g + 1)) ($n lines)" ||
	fail "only $n decisions for other.test name generation $((g + 1))"
w0=$(worker 0) w1=$(worker 1)
[ $((w0 - t0 - u0)) -gt 0 ] && [ $((w1 - t1 - u1)) -gt 0 ] &&
	ok "both workers decided after the reload" ||
	diag "after the reload: worker 0 accepted $((w0 - t0 - u0)), worker 1 $((w1 - t1 - u1))"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly, both workers stopped"
