#!/bin/sh
# proxy-burst: after a burst of 3,000 concurrent tunnels has come and gone,
# the proxy gives back what it took: its descriptors return to their count
# before, and its RSS to within 2 MiB of it (while libevent's per-
# descriptor records lay among the tunnels' blocks, they pinned the heap
# near its peak: 27 MB after, against 6 MB before and 31 MB at the peak).
# Every tunnel works while it lasts.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

N=3000
# The proxy holds two descriptors per tunnel (it inherits this limit).
ulimit -n $((2 * N + 200)) 2>/dev/null ||
	skip "needs $((2 * N + 200)) descriptors; the hard limit is $(ulimit -Hn)"
T="$top_srcdir/tests/integration/lib-proxy/tunnels.py"
conf=$(proxy_conf "[defaults]" "max_connections = $N" "allow_hosts = allowed.test:7 private")
proxy_start "$conf" || die "no proxy"
# tunnels NAME COUNT: hold COUNT tunnels, then echo through each.
tunnels() {
	in_px sh -c "ulimit -n $((2 * $2 + 100)) && exec '$WORLD_PYTHON' '$T' 127.0.0.1 3128 allowed.test:7 $2 \
		'$WORLD_DIR/$1.ready' '$WORLD_DIR/$1.go' --timeout 60" >"$WORLD_DIR/$1.out" 2>&1 &
	tp=$!
	i=0
	while [ ! -s "$WORLD_DIR/$1.ready" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	ready=$(cat "$WORLD_DIR/$1.ready" 2>/dev/null)
	peak_fds=$(proxy_fds) peak_rss=$(proxy_rss_kb)
	touch "$WORLD_DIR/$1.go"
	wait "$tp"
}
# settled: wait until the proxy's descriptor count stops falling, then for
# its idle trim (2 s after the last connection closed).
settled() {
	last=-1 i=0
	while [ $i -lt 60 ]; do
		f=$(proxy_fds)
		[ "$f" = "$last" ] && break
		last=$f
		sleep 0.5
		i=$((i + 1))
	done
	sleep 3
}

# Warm up (the first tunnels allocate what the proxy keeps for good: the
# DNS cache entry, pooled pipes), then take the baseline.
tunnels warm 20 || die "the warm-up tunnels failed: $(cat "$WORLD_DIR/warm.out")"
settled
fd0=$(proxy_fds) rss0=$(proxy_rss_kb)
diag "baseline: $fd0 descriptors, RSS $rss0 kB"

tunnels burst $N
rc=$?
expect_eq "ready $N" "$ready" "$N tunnels are established at once"
expect_eq 0 $rc "every one of them echoes ($(tail -1 "$WORLD_DIR/burst.out"))"
diag "peak: $peak_fds descriptors, RSS $peak_rss kB"
[ "$peak_fds" -ge $((fd0 + 2 * N)) ] && ok "the proxy held two descriptors per tunnel at the peak" ||
	fail "only $peak_fds descriptors at the peak"
settled
fd1=$(proxy_fds) rss1=$(proxy_rss_kb)
diag "after: $fd1 descriptors, RSS $rss1 kB"
expect_eq "$fd0" "$fd1" "the descriptor count is back to its start"
if grep -q __asan_init "${POSTERN_PROXY:-$top_builddir/postern-proxy}" 2>/dev/null; then
	diag "AddressSanitizer build: RSS is not compared (quarantine)"
elif [ "$(head -c 2 "${POSTERN_PROXY:-$top_builddir/postern-proxy}" 2>/dev/null)" = "#!" ] &&
	grep -q valgrind "${POSTERN_PROXY:-$top_builddir/postern-proxy}" 2>/dev/null; then
	# A script wrapper that runs the proxy under valgrind (a binary's
	# debug info may name valgrind's headers: that is not one).
	diag "under valgrind: RSS is not compared (its allocator keeps what it took)"
else
	[ "$rss1" -le $((rss0 + 2048)) ] && ok "RSS is back within 2 MiB of its start ($rss0 -> $rss1 kB, peak $peak_rss)" ||
		fail "RSS stayed at $rss1 kB (start $rss0, peak $peak_rss)"
fi
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
