#!/bin/sh
# proxy-limits-reload: a reload that moves [proxy] max_connections past the
# connections open moves the listeners with it.  Raised while the proxy is
# full: new clients are served at once, and again after the open ones close
# (not paused for good).  Lowered below what is open: no new client is
# accepted until enough have closed (the limit is not skipped).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

H="$top_srcdir/tests/integration/lib-proxy/hold.py"
conf="$WORLD_DIR/conf.d/postern.ini"
mkdir -p "$WORLD_DIR/conf.d"

# write_conf N: global max_connections N, and each session may hold all of
# it (this scenario is about the global limit, not the shares).
write_conf() {
	{
		admin_proxy_section "max_connections = $1"
		echo "[defaults]"
		echo "max_connections = $1"
		echo "allow_hosts = allowed.test:7 private"
		echo "[session b]"
		echo "listen = tcp:127.0.0.1:3129"
	} >"$WORLD_DIR/next.ini"
	write_by_rename "$WORLD_DIR/next.ini" "$conf"
}

# connect_once PORT: the status of one CONNECT to the echo port, empty when
# nothing answered within 1 s.
connect_once() {
	local out
	out=$(printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n' | raw 127.0.0.1 "$1" --timeout 1)
	status_of "$out"
}

write_conf 2
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

in_px "$WORLD_PYTHON" "$H" 127.0.0.1:3128 allowed.test:7 2 "$WORLD_DIR/a.out" "$WORLD_DIR/go-a" --timeout 30 &
ha=$!
wait_ready "$WORLD_DIR/a.out"
expect_eq 2 "$(grep -cx 200 "$WORLD_DIR/a.out")" "2 tunnels fill max_connections = 2"
expect_eq "" "$(connect_once 3129)" "a third client is not accepted"

g=$(generation)
write_conf 4
wait_generation $((g + 1)) 3 >/dev/null || fail "the reload to max_connections = 4 was not taken"
expect_eq 200 "$(connect_once 3129)" "raised while full: a new client is served at once"
touch "$WORLD_DIR/go-a"
wait "$ha"
expect_eq "echoed 2 of 2" "$(tail -1 "$WORLD_DIR/a.out")" "the open tunnels kept working"
i=0
while [ "$(connect_once 3129)" != 200 ] && [ $i -lt 20 ]; do i=$((i + 1)); done
expect_eq 200 "$(connect_once 3129)" "and once they closed, clients are still served"

workers_spread
# Lowered below what is open (a fresh proxy, so that this part stands on
# its own).
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
write_conf 4
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
g=$(generation)
in_px "$WORLD_PYTHON" "$H" 127.0.0.1:3128 allowed.test:7 3 "$WORLD_DIR/c.out" "$WORLD_DIR/go-c" --timeout 30 &
hc=$!
wait_ready "$WORLD_DIR/c.out"
expect_eq 3 "$(grep -cx 200 "$WORLD_DIR/c.out")" "3 tunnels under max_connections = 4"
write_conf 2
wait_generation $((g + 1)) 3 >/dev/null || fail "the reload to max_connections = 2 was not taken"
expect_eq "" "$(connect_once 3129)" "lowered below the 3 open: a new client is not accepted"
touch "$WORLD_DIR/go-c"
wait "$hc"
expect_eq "echoed 3 of 3" "$(tail -1 "$WORLD_DIR/c.out")" "the reload dropped none of them"
i=0
while [ "$(connect_once 3129)" != 200 ] && [ $i -lt 20 ]; do i=$((i + 1)); done
expect_eq 200 "$(connect_once 3129)" "once they closed, clients are served again"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
