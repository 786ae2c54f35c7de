#!/bin/sh
# proxy-flood: a flood of connections the proxy refuses at once does not
# take its loop.  A head already in the socket at the accept is answered
# in the same pass (read_at_accept(), proxy/flow/accept.c), and a client
# answered at once connects again at once: 64 C clients refusing as fast
# as they can keep the backlog full for as long as they run (an accept
# loop without a bound took 245 to 1,415 descriptors here, never closing
# what it had answered, against 73 to 79 with it).  Meanwhile an
# established tunnel still gets every echo back, the refused connections
# are closed as they are answered (the descriptors stay bounded), and
# every refusal is a 403.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

LOAD="$top_builddir/tests/bench/proxy-load"
[ -x "$LOAD" ] || skip "tests/bench/proxy-load is not built"
conf=$(proxy_conf "max_connections = 10000" "[defaults]" "max_connections = 10000" \
	"allow_hosts = allowed.test:7 private")
proxy_start "$conf" || die "no proxy"
fds0=$(proxy_fds)

in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/pinger.py" 127.0.0.1 3128 allowed.test:7 \
	"$WORLD_DIR/ping.ready" "$WORLD_DIR/ping.stop" --limit 10 >"$WORLD_DIR/ping.out" 2>&1 &
pinger=$!
i=0
while [ ! -s "$WORLD_DIR/ping.ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$WORLD_DIR/ping.ready" ] || die "the pinger's tunnel did not open: $(cat "$WORLD_DIR/ping.out")"

in_px "$LOAD" refuse 127.0.0.1:3128 nowhere.invalid:443 64 4 >"$WORLD_DIR/flood.out" 2>"$WORLD_DIR/flood.err" &
flood=$!
# The most descriptors the proxy held while the flood ran.
most=0
i=0
while kill -0 $flood 2>/dev/null && [ $i -lt 100 ]; do
	n=$(proxy_fds)
	[ "$n" -gt "$most" ] && most=$n
	sleep 0.05
	i=$((i + 1))
done
wait $flood
frc=$?
: >"$WORLD_DIR/ping.stop"
wait $pinger
prc=$?
rate=$(cat "$WORLD_DIR/flood.out")
diag "refusals/s: $rate; the pinger: $(cat "$WORLD_DIR/ping.out"); descriptors: $fds0 before, $most at most"
expect_eq 0 "$frc" "every connection of the flood got its 403 ($(tail -n 1 "$WORLD_DIR/flood.err"))"
[ "${rate%%.*}" -ge 500 ] 2>/dev/null && ok "the flood ran ($rate refusals/s)" ||
	fail "the flood did not run: '$rate'"
expect_eq 0 "$prc" "an established tunnel kept echoing through the flood: $(cat "$WORLD_DIR/ping.out")"
pings=$(sed -n 's/^pings=\([0-9]*\) .*/\1/p' "$WORLD_DIR/ping.out")
[ "${pings:-0}" -ge 20 ] && ok "and it echoed $pings times in those 4 seconds" ||
	fail "only '$pings' echoes in 4 seconds"
# 64 clients, one connection each at a time, and at most a burst of
# answered ones waiting for the loop to go round and close them; not one
# held for as long as the flood lasts.
[ "$most" -le $((fds0 + 128)) ] && ok "the refused connections were closed as they went ($most descriptors at most, $fds0 before)" ||
	fail "the refused connections piled up: $most descriptors, $fds0 before"
expect_audit "the refusals are audited" event=decision host=nowhere.invalid decision=deny
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
