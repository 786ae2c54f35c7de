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
# AddressSanitizer's quarantine keeps freed memory resident, so RSS says
# nothing about buffering there; the sanitizer build still runs the flow.
bin="${POSTERN_PROXY:-$top_builddir/postern-proxy}"
asan=
grep -q __asan_init "$bin" 2>/dev/null && asan=1
judge() { # judge GREW_KB WHAT
	if [ -n "$asan" ]; then
		diag "$2: grew by $1 kB (not judged under AddressSanitizer)"
	elif [ "$1" -lt 4096 ]; then
		ok "$2: the proxy's memory grew by less than 4 MiB ($1 kB)"
	else
		fail "$2: memory grew by $1 kB"
	fi
}
before=$(proxy_rss_kb)
in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/slowread.py" 127.0.0.1 3128 \
	allowed.test:80 /bytes/500000000 1000000 4 >"$WORLD_DIR/slow1.out" &
sp=$!
sleep 3
during=$(proxy_rss_kb)
wait "$sp"
diag "tunnel: RSS before $before kB, while a 500 MB answer is read at 1 MB/s: $during kB; read $(cat "$WORLD_DIR/slow1.out") bytes"
judge $((during - before)) "tunnel"

# The forward path: curl reading a 500 MB answer at 1 MB/s.
in_px curl -sS --max-time 4 --limit-rate 1M -o /dev/null -x http://127.0.0.1:3128 http://allowed.test/bytes/500000000 2>/dev/null &
cp=$!
sleep 3
during2=$(proxy_rss_kb)
wait "$cp"
judge $((during2 - before)) "forward path"

# A keep-alive client that floods the connection while its request's
# answer is awaited: the proxy reads no more of it until the answer is
# out (the kernel's socket buffers fill and the client waits), then
# answers the pipelined request behind it and refuses the flood (431:
# the "head" it makes is too large).  The refusal's close leaves flood
# bytes unread, and closing then would reset the connection and destroy
# what of the 8 MB answer is still in the proxy's socket buffer: the
# proxy shuts down writing and reads on for a while instead.
before=$(proxy_rss_kb)
in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/pipeflood.py" 127.0.0.1 3128 \
	allowed.test 1.2 /bytes/8000000 >"$WORLD_DIR/flood.out" &
fp=$!
sleep 1.2
during3=$(proxy_rss_kb)
wait "$fp"
sent=$(sed -n 's/^sent=//p' "$WORLD_DIR/flood.out")
diag "flood during an awaited answer: $sent bytes taken, RSS before $before kB, during $during3 kB"
[ -n "$sent" ] && [ "$sent" -lt 33554432 ] &&
	ok "the connection took less than 32 MiB of the flood ($sent bytes): the proxy stopped reading" ||
	fail "the connection took $sent bytes of the flood"
judge $((during3 - before)) "a flood behind an awaited answer"
expect_eq "200 200 200 431" "$(sed -n 's/^status=//p' "$WORLD_DIR/flood.out" | tr '\n' ' ' | sed 's/ $//')" \
	"a first answer, the awaited one, the pipelined request's 8 MB whole, then a 431 for the flood"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
