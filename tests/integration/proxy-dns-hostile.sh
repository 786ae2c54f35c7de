#!/bin/sh
# proxy-dns-hostile: the proxy's only DNS server is hostile (dnsmasq cannot
# be made to misbehave, so lib-proxy/dnsfake.py answers on 10.200.1.54):
# slow answers, the TC bit (with and without a TCP answer behind it),
# garbage, random noise, a compression loop, an answer to another question,
# a record cut short.  Each gets a clean answer from the proxy (a tunnel,
# or a 502/504 with reason dns_failure), no bad answer leads to a
# connection, and the proxy keeps serving throughout.  (Vetting of the
# addresses in good answers is proxy-rebind.sh.)
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

FAKE=10.200.1.54
ip -n "$WORLD_NS_UP" addr add "$FAKE/24" dev veth-px || die "cannot add $FAKE"
FAKE_LOG="$WORLD_DIR/dnsfake.log"
in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/dnsfake.py" "$FAKE" "$FAKE_LOG" \
	>"$WORLD_DIR/dnsfake.out" 2>&1 &
i=0
while ! grep -q ready "$WORLD_DIR/dnsfake.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || die "dnsfake.py did not start: $(cat "$WORLD_DIR/dnsfake.out")"
	sleep 0.1
done

conf=$(proxy_conf "[defaults]" \
	"allow_hosts = slow.test:7 private, slowflood.test:7 private, tc.test:7 private, tcdead.test:7 private" \
	"allow_hosts = garbage.test:7 private, noise.test:7 private, loop.test:7 private" \
	"allow_hosts = other.test:7 private, short.test:7 private, fine.test:7 private")
sed -i "s/^dns_servers = .*/dns_servers = $FAKE/" "$conf"
proxy_start "$conf" || die "no proxy"

connect() {
	printf 'CONNECT %s:7 HTTP/1.1\r\nHost: %s:7\r\n\r\n' "$1" "$1" | raw 127.0.0.1 3128 --shut --timeout 12
}
ms() { date +%s%3N; }

# A slow answer (1 s, within the 2 s per try) is waited for.
t0=$(ms)
out=$(connect slow.test)
t1=$(ms)
expect_eq 200 "$(status_of "$out")" "a slow answer is waited for: 200"
[ $((t1 - t0)) -ge 900 ] && ok "and it took the server's second ($((t1 - t0)) ms)" ||
	fail "answered in $((t1 - t0)) ms: not from the slow server?"

# Bytes sent behind the CONNECT while its name is looked up wait in the
# kernel (the proxy takes one read of them and stops) and reach the
# upstream once the tunnel stands, every one in order.
in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/lookupflood.py" 127.0.0.1 3128 \
	slowflood.test:7 0.7 >"$WORLD_DIR/lookupflood.out" 2>&1
sent=$(sed -n 's/^sent=//p' "$WORLD_DIR/lookupflood.out")
diag "a flood during a slow lookup: $sent bytes taken"
[ -n "$sent" ] && [ "$sent" -gt 0 ] && [ "$sent" -lt 33554432 ] &&
	ok "the connection took less than 32 MiB of it ($sent bytes): the proxy stopped reading" ||
	fail "the connection took ${sent:-no} bytes of a flood during the lookup"
expect_eq 200 "$(sed -n 's/^status=//p' "$WORLD_DIR/lookupflood.out")" "and the tunnel came up: 200"
expect_eq "$sent intact" "$(sed -n 's/^echoed=//p' "$WORLD_DIR/lookupflood.out")" \
	"every byte of it came back through the tunnel, in order"

# TC: c-ares asks again over TCP and gets the answer there.
out=$(connect tc.test)
expect_eq 200 "$(status_of "$out")" "a truncated UDP answer is retried over TCP: 200"
expect_match "tcp tc\.test" "$(cat "$FAKE_LOG")" "the retry went over TCP"
# TC with a dead TCP side is a DNS failure, not a crash or a hang.
out=$(connect tcdead.test)
expect_match "^50[24]$" "$(status_of "$out")" "TC and no TCP answer: $(status_of "$out") $(reason_of "$out")"
expect_match "^(dns_failure|timeout)$" "$(reason_of "$out")" "with a DNS reason"

# Garbage behind the right ID, noise with any ID, a compression loop, a
# record cut short, an answer to another question: none is an address.
for n in garbage noise loop other short; do
	out=$(connect $n.test)
	st=$(status_of "$out")
	expect_match "^50[24]$" "$st" "$n.test: refused as a DNS failure ($st $(reason_of "$out"))"
	expect_match "^(dns_failure|timeout)$" "$(reason_of "$out")" "$n.test: with a DNS reason"
done
for n in garbage noise loop other short; do
	expect_no_audit "$n.test: no connection was made" host=$n.test decision=allow
done

# The proxy kept serving throughout, and a good name still works.
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
out=$(connect fine.test)
expect_eq 200 "$(status_of "$out")" "a good answer after all that: 200"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
