#!/bin/sh
# proxy-limits: max_connections is honoured by not accepting (clients wait
# in the backlog) rather than failing; running out of file descriptors
# pauses accepting instead of crashing or spinning, established tunnels keep
# working, and the proxy recovers by itself when descriptors free up.  (The
# session is given all of max_connections: its share is proxy-fairness's.)
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

T="$top_srcdir/tests/integration/lib-proxy/tunnels.py"
conf=$(proxy_conf "max_connections = 5" "[defaults]" "max_connections = 5" "allow_hosts = allowed.test:7 private, allowed.test private")
proxy_start "$conf" || die "no proxy"
in_px "$WORLD_PYTHON" "$T" 127.0.0.1 3128 allowed.test:7 5 "$WORLD_DIR/r1" "$WORLD_DIR/g1" --timeout 30 >"$WORLD_DIR/t1.out" 2>&1 &
t1=$!
i=0; while [ ! -s "$WORLD_DIR/r1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
expect_eq "ready 5" "$(cat "$WORLD_DIR/r1")" "5 tunnels fill max_connections = 5"
out=$(printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n' | raw 127.0.0.1 3128 --timeout 1)
expect_eq "" "$(status_of "$out")" "a sixth client is not served while the limit is reached"
in_px curl -sS --max-time 10 --cacert "$WORLD_CA" -o "$WORLD_DIR/waiting.out" -x http://127.0.0.1:3128 https://allowed.test/waited &
cw=$!
sleep 0.5
touch "$WORLD_DIR/g1"
wait "$t1"
expect_eq 0 $? "the 5 tunnels kept working"
wait "$cw"
expect_match "^sni=allowed\.test$" "$(cat "$WORLD_DIR/waiting.out")" "the waiting client is served once connections close"

# The same with a crowd in the backlog behind the full proxy: clients that
# gave up while waiting (their sockets closed, still queued) and clients
# still waiting.  As the tunnels close, a worker may take a slot for a
# closed client while another accepts a waiting one; that one waits for
# the next slot (it came while the proxy was full), never a 503 for a
# session share that is full only because the proxy is.
round=1
while [ $round -le 3 ]; do
	rm -f "$WORLD_DIR/r3" "$WORLD_DIR/g3"
	in_px "$WORLD_PYTHON" "$T" 127.0.0.1 3128 allowed.test:7 5 "$WORLD_DIR/r3" "$WORLD_DIR/g3" --timeout 30 >"$WORLD_DIR/t3.out" 2>&1 &
	t3=$!
	i=0; while [ ! -s "$WORLD_DIR/r3" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	k=1; pids=""
	while [ $k -le 4 ]; do
		printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n' | raw 127.0.0.1 3128 --timeout 0.2 >/dev/null 2>&1 &
		pids="$pids $!"
		rm -f "$WORLD_DIR/crowd$k.out"
		in_px curl -sS --max-time 10 --cacert "$WORLD_CA" -o "$WORLD_DIR/crowd$k.out" -x http://127.0.0.1:3128 https://allowed.test/crowd$k 2>>"$WORLD_DIR/crowd.err" &
		pids="$pids $!"
		k=$((k + 1))
	done
	sleep 0.8
	touch "$WORLD_DIR/g3"
	wait $t3 $pids
	served=0
	for k in 1 2 3 4; do
		grep -q '^sni=allowed\.test$' "$WORLD_DIR/crowd$k.out" 2>/dev/null && served=$((served + 1))
	done
	expect_eq 4 "$served" "round $round: the 4 clients waiting behind 4 that gave up are all served"
	round=$((round + 1))
done
proxy_stop

# Descriptor exhaustion: a proxy with 64 descriptors and 40 clients.
conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test:7 private, allowed.test private")
WORLD_PROXY_ULIMIT=64
ip netns exec "$WORLD_NS_PX" sh -c "ulimit -n 64 && exec '$top_builddir/postern-proxy' -c '$conf'" >>"$WORLD_DIR/proxy.out" 2>&1 &
WORLD_PROXY_PID=$!
in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 --pid "$WORLD_PROXY_PID" --tcp 127.0.0.1:3128 || die "no proxy"
in_px "$WORLD_PYTHON" "$T" 127.0.0.1 3128 allowed.test:7 20 "$WORLD_DIR/r2" "$WORLD_DIR/g2" --timeout 30 >"$WORLD_DIR/t2.out" 2>&1 &
t2=$!
i=0; while [ ! -s "$WORLD_DIR/r2" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
expect_match "^ready 2[0-9]$|^ready 1[0-9]$" "$(cat "$WORLD_DIR/r2")" "tunnels are established up to the descriptor limit ($(cat "$WORLD_DIR/r2"))"
# 30 more clients than descriptors: they must not kill the proxy.
pids=
i=0
while [ $i -lt 30 ]; do
	printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n' | raw 127.0.0.1 3128 --timeout 2 >/dev/null 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do wait "$p"; done
kill -0 "$WORLD_PROXY_PID" 2>/dev/null && ok "the proxy survives descriptor exhaustion" || fail "the proxy died"
cpu1=$(awk '{print $14 + $15}' /proc/"$WORLD_PROXY_PID"/stat)
sleep 1
cpu2=$(awk '{print $14 + $15}' /proc/"$WORLD_PROXY_PID"/stat)
[ $((cpu2 - cpu1)) -lt 50 ] && ok "and does not spin while it cannot accept ($((cpu2 - cpu1)) ticks in 1 s)" || fail "spinning: $((cpu2 - cpu1)) ticks"
touch "$WORLD_DIR/g2"
wait "$t2"
expect_match "^echoed" "$(tail -1 "$WORLD_DIR/t2.out")" "established tunnels kept working ($(tail -1 "$WORLD_DIR/t2.out"))"
out=$(curl_px -x http://127.0.0.1:3128 https://allowed.test/recovered)
expect_match "^sni=allowed\.test$" "$out" "once descriptors free up, new clients are served again"
grep -q "cannot accept" "$WORLD_DIR/proxy.out" && ok "the pause is logged" || fail "no log of the pause"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
