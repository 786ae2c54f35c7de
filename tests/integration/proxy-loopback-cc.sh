#!/bin/sh
# proxy-loopback-cc: a connection that never leaves the machine runs
# without a pacing timer (base/tcp.h): the client's socket
# accepted on a loopback listener, and the upstream socket to a loopback
# address, have congestion control Reno; an upstream on another host
# keeps the system's default.  Read off the kernel's own sockets (ss -ti
# in the proxy's namespace) while the tunnels are open.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

command -v ss >/dev/null || { skip "no ss(8)"; exit 77; }
default=$(in_px cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)
diag "this machine's default congestion control: ${default:-unknown}"

# A loopback echo service in px, beside the proxy (the world's own server).
port=7107
in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" serve --log "$WORLD_DIR/lo-echo.log" \
	--ready "$WORLD_DIR/lo-echo.ready" --echo "127.0.0.1:$port" >"$WORLD_DIR/lo-echo.out" 2>&1 &
echo_pid=$!
i=0
while [ ! -s "$WORLD_DIR/lo-echo.ready" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

conf=$(proxy_conf "[defaults]" "allow_hosts = 127.0.0.1:$port, allowed.test:7 private")
proxy_start "$conf" || die "no proxy"

# cc_of FILTER: the congestion control ss(8) shows for the one TCP
# connection in px matching FILTER (ss's own filter syntax).
cc_of() {
	in_px ss -tinH state established "$@" | tr -s ' \t' '\n' |
		grep -m1 -x -E 'reno|cubic|bbr|bbr2|dctcp|westwood|vegas|htcp|bic|highspeed|hybla|illinois|lp|nv|scalable|veno|yeah|cdg'
}

rm -f "$WORLD_DIR/go"
in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/hold.py" 127.0.0.1:3128 \
	"127.0.0.1:$port" 1 "$WORLD_DIR/lo.out" "$WORLD_DIR/go" --timeout 20 &
lo_hold=$!
in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/hold.py" 127.0.0.1:3128 \
	allowed.test:7 1 "$WORLD_DIR/far.out" "$WORLD_DIR/go" --timeout 20 &
far_hold=$!
wait_ready "$WORLD_DIR/lo.out"
wait_ready "$WORLD_DIR/far.out"
expect_eq 200 "$(head -1 "$WORLD_DIR/lo.out")" "a tunnel to the loopback echo service opens"
expect_eq 200 "$(head -1 "$WORLD_DIR/far.out")" "a tunnel to allowed.test:7 opens"

expect_eq reno "$(cc_of dst "127.0.0.1:$port")" \
	"the proxy's upstream socket to 127.0.0.1:$port runs Reno"
expect_eq reno "$(cc_of src 127.0.0.1:3128)" \
	"the client sockets the loopback listener accepted run Reno"
far=$(cc_of dst "$WORLD_UP4:7")
if [ -n "$default" ] && [ "$default" != reno ]; then
	expect_eq "$default" "$far" "the upstream socket to $WORLD_UP4:7 keeps the default ($default)"
else
	diag "the default is Reno here: a remote upstream's default cannot be told apart"
fi

: >"$WORLD_DIR/go"
wait $lo_hold
expect_eq 0 $? "the loopback tunnel still echoes"
wait $far_hold
expect_eq 0 $? "the remote tunnel still echoes"
kill $echo_pid 2>/dev/null
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
