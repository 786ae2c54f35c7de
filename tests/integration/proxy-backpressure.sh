#!/bin/sh
# proxy-backpressure: a client that reads slowly while upstream writes fast
# does not make the proxy buffer the difference: its memory stays bounded
# (libevent watermarks stop reading upstream while the client's output is
# full), and the same holds the other way round on the plain-HTTP path.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test:80 private, allowed.test private")
proxy_start "$conf" || die "no proxy"
rss() { awk '/^VmRSS/{print $2}' /proc/"$WORLD_PROXY_PID"/status; }
before=$(rss)
in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/slowread.py" 127.0.0.1 3128 \
	allowed.test:80 /bytes/500000000 1000000 4 >"$WORLD_DIR/slow1.out" &
sp=$!
sleep 3
during=$(rss)
wait "$sp"
diag "tunnel: RSS before $before kB, while a 500 MB answer is read at 1 MB/s: $during kB; read $(cat "$WORLD_DIR/slow1.out") bytes"
[ $((during - before)) -lt 4096 ] && ok "tunnel: the proxy's memory grew by less than 4 MiB ($((during - before)) kB)" ||
	fail "tunnel: memory grew by $((during - before)) kB"

# The forward path: curl reading a 500 MB answer at 1 MB/s.
in_px curl -sS --max-time 4 --limit-rate 1M -o /dev/null -x http://127.0.0.1:3128 http://allowed.test/bytes/500000000 2>/dev/null &
cp=$!
sleep 3
during2=$(rss)
wait "$cp"
[ $((during2 - before)) -lt 4096 ] && ok "forward path: memory grew by less than 4 MiB ($((during2 - before)) kB)" ||
	fail "forward path: memory grew by $((during2 - before)) kB"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
