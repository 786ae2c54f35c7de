#!/bin/sh
# proxy-headsplit: request heads from the client and response heads from
# upstream that arrive in pieces -- a 27 KB head one byte per send,
# keep-alive and pipelined requests and a 1xx-then-200 answer cut at every
# position -- get the same answers as when they arrive at once.  The proxy
# resumes an incomplete head's parse on the next read instead of starting
# over (what that saves in CPU is measured by "BENCH_ONLY=head make
# bench-proxy", not here: a CPU bound is no test on a shared machine).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

H="$top_srcdir/tests/integration/lib-proxy/headsplit.py"
hs() { in_px "$WORLD_PYTHON" "$H" "$@"; }

# The upstream that sends its answers in pieces, on allowed.test:9000.
in_up "$WORLD_PYTHON" "$H" serve "$WORLD_UP4" 9000 </dev/null >"$WORLD_DIR/headsplit-up.out" 2>&1 &
in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 --connect "$WORLD_UP4:9000" ||
	die "the piecewise upstream does not listen"

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test:80 private, allowed.test:9000 private")
proxy_start "$conf" || die "no proxy"

# ---- a 27 KB request head, one byte per send
big_head() {
	printf 'GET http://allowed.test/big HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n'
	i=0
	while [ $i -lt 27 ]; do
		printf 'X-Pad-%02d: %0985d\r\n' $i $i
		i=$((i + 1))
	done
	printf '\r\n'
}
big_head >"$WORLD_DIR/big.req"
diag "request head: $(wc -c <"$WORLD_DIR/big.req") bytes"
hs send 127.0.0.1 3128 <"$WORLD_DIR/big.req" >"$WORLD_DIR/big.whole"
hs send 127.0.0.1 3128 --bytewise <"$WORLD_DIR/big.req" >"$WORLD_DIR/big.bytewise"
expect_eq 200 "$(status_of "$(head -c 200 "$WORLD_DIR/big.whole")")" "the 27 KB head sent at once is answered 200"
grep -q '^X-Pad-26: 0*26' "$WORLD_DIR/big.whole" &&
	ok "its last field reached upstream" || fail "its last field did not reach upstream"
cmp -s "$WORLD_DIR/big.whole" "$WORLD_DIR/big.bytewise" &&
	ok "sent one byte per send it gets the same answer" ||
	fail "sent one byte per send it gets another answer: $(cmp "$WORLD_DIR/big.whole" "$WORLD_DIR/big.bytewise" 2>&1 | head -1)"
expect_eq 2 "$(upstream_count target=/big)" "both reached upstream once each"

# ---- keep-alive and pipelined requests, cut at every position: a POST
# with a body, a GET, a 403 after which the proxy closes.
printf 'POST http://allowed.test/one HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello' \
	>"$WORLD_DIR/seq.req"
printf 'GET http://allowed.test/two?x=y HTTP/1.1\r\nHost: allowed.test\r\nX-B: 2\r\n\r\n' >>"$WORLD_DIR/seq.req"
printf 'GET http://deny.test/three HTTP/1.1\r\nHost: deny.test\r\n\r\n' >>"$WORLD_DIR/seq.req"
out=$(hs send 127.0.0.1 3128 <"$WORLD_DIR/seq.req" | tr -d '\r')
expect_eq "200 200 403" "$(printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')" \
	"the three requests sent at once get 200, 200, 403"
expect_match "^body-length=5$" "$out" "the POST body reached upstream"
expect_match "^GET /two\?x=y HTTP/1.1$" "$out" "the second request reached upstream"
out=$(hs every 127.0.0.1 3128 <"$WORLD_DIR/seq.req")
expect_match "^[0-9]+ cuts, 0 differ$" "$out" "cut at every position, they get the same answers"
[ -n "$out" ] && diag "$(printf '%s\n' "$out" | head -3)"

# ---- response heads from upstream in pieces
out=$(printf 'GET http://allowed.test:9000/big/whole HTTP/1.1\r\nHost: allowed.test:9000\r\nConnection: close\r\n\r\n' |
	hs send 127.0.0.1 3128)
expect_eq 200 "$(status_of "$out")" "a 27 KB response head sent at once is passed on"
expect_match "X-Pad-26: a{985}" "$out" "with its last field"
out2=$(printf 'GET http://allowed.test:9000/big/bytewise HTTP/1.1\r\nHost: allowed.test:9000\r\nConnection: close\r\n\r\n' |
	hs send 127.0.0.1 3128)
[ "$out" = "$out2" ] && ok "sent one byte per send it is passed on the same" ||
	fail "sent one byte per send it is passed on otherwise: $(printf '%s' "$out2" | head -c 300)"

# A 103 then a 200 with a body, twice on one client connection (the second
# on the reused upstream connection), the upstream's bytes cut at every
# position.
tmpl='GET http://allowed.test:9000/seq/{K} HTTP/1.1\r\nHost: allowed.test:9000\r\n\r\nGET http://allowed.test:9000/seq/{K} HTTP/1.1\r\nHost: allowed.test:9000\r\nConnection: close\r\n\r\n'
out=$(printf "$(printf '%s' "$tmpl" | sed 's/{K}/0/g')" | hs send 127.0.0.1 3128 | tr -d '\r')
expect_eq "103 200 103 200" "$(printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')" \
	"sent at once, the two answers pass as 103, 200, 103, 200"
out=$(hs every-up 127.0.0.1 3128 "$tmpl")
expect_match "^[0-9]+ cuts, 0 differ$" "$out" "cut at every position, they pass the same"
[ -n "$out" ] && diag "$(printf '%s\n' "$out" | head -3)"

proxy_alive && ok "the proxy still answers" || fail "the proxy does not answer"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
