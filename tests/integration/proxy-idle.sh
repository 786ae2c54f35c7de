#!/bin/sh
# proxy-idle: 2,000 concurrent idle tunnels stay open and working while new
# requests keep succeeding.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

N=${PROXY_IDLE_TUNNELS:-2000}
ulimit -n 20000 2>/dev/null || ulimit -n 8192 2>/dev/null
[ "$(ulimit -n)" -ge $((2 * N + 100)) ] || skip "needs $((2 * N + 100)) file descriptors, have $(ulimit -n)"
conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test:7 private, allowed.test private")
proxy_start "$conf" || die "no proxy"

in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/tunnels.py" 127.0.0.1 3128 \
	allowed.test:7 "$N" "$WORLD_DIR/ready" "$WORLD_DIR/go" --timeout 90 >"$WORLD_DIR/tunnels.out" 2>&1 &
tp=$!
i=0
while [ ! -s "$WORLD_DIR/ready" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
expect_eq "ready $N" "$(cat "$WORLD_DIR/ready" 2>/dev/null)" "$N tunnels established and held open"
fds=$(ls /proc/"$WORLD_PROXY_PID"/fd 2>/dev/null | wc -l)
rss=$(awk '/^VmRSS/{print $2}' /proc/"$WORLD_PROXY_PID"/status 2>/dev/null)
diag "with $N idle tunnels the proxy holds $fds fds, RSS $rss kB"
good=0
j=0
while [ $j -lt 20 ]; do
	out=$(curl_px -x http://127.0.0.1:3128 "https://allowed.test/new$j")
	printf '%s\n' "$out" | grep -q "^sni=allowed.test" && good=$((good + 1))
	j=$((j + 1))
done
expect_eq 20 "$good" "new requests still succeed while $N tunnels are open"
touch "$WORLD_DIR/go"
wait "$tp"
expect_eq 0 $? "every idle tunnel still echoes ($(tr '\n' ' ' <"$WORLD_DIR/tunnels.out"))"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
