#!/bin/sh
# proxy-many-addrs: a name with more than 16 addresses is vetted on every
# one of them, not only on the 16 the proxy may dial: a deny_hosts address
# or the proxy's own listener as the 20th answer refuses the host (no
# connection is made), and a name with more addresses than the proxy keeps
# (64) is refused with that reason instead of being cut short.  The DNS
# server is lib-proxy/dnsfake.py on 10.200.1.54, which keeps the order of
# the answers (dnsmasq does not).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

FAKE=10.200.1.54
ip -n "$WORLD_NS_UP" addr add "$FAKE/24" dev veth-px || die "cannot add $FAKE"
in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/dnsfake.py" "$FAKE" \
	"$WORLD_DIR/dnsfake.log" >"$WORLD_DIR/dnsfake.out" 2>&1 &
i=0
while ! grep -q ready "$WORLD_DIR/dnsfake.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || die "dnsfake.py did not start: $(cat "$WORLD_DIR/dnsfake.out")"
	sleep 0.1
done

# Every answer but 10.200.1.2 is unrouted from px (10.200.3-5.x): a dial
# fails at once and the next address is tried.
conf=$(proxy_conf "[defaults]" \
	"allow_hosts = many.test private, fine20.test private, toomany.test private" \
	"allow_hosts = self.test:3128 private" \
	"deny_hosts = 10.200.4.20")
sed -i "s/^dns_servers = .*/dns_servers = $FAKE/" "$conf"
proxy_start "$conf" || die "no proxy"

expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 http://fine20.test/fine)" \
	"20 addresses, none refused: the host is reached"
expect_upstream "fine20.test reached the upstream" target=/fine

expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://many.test/many)" \
	"a deny_hosts address as the 20th answer refuses the host"
expect_audit "... as denied_by_rule, naming that address" host=many.test \
	decision=deny reason=denied_by_rule address=10.200.4.20
expect_eq 0 "$(upstream_count target=/many)" "... and nothing reached the upstream"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://many.test/many)" \
	"... a CONNECT to it as well"

expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://self.test:3128/self)" \
	"the proxy's own listener as the 20th answer refuses the host, private or not"
expect_audit "... as private_address: the own listener" host=self.test \
	decision=deny reason=private_address address=127.0.0.1 "detail~own listener"
expect_eq 0 "$(audit_count path=/self decision=allow)" "... and no request to itself was allowed"

expect_eq 502 "$(curl_status -x http://127.0.0.1:3128 http://toomany.test/toomany)" \
	"71 addresses: refused, not cut short to what the proxy keeps"
expect_audit "... with the reason" host=toomany.test reason=dns_failure \
	"detail~more than 64 addresses"
expect_eq 0 "$(upstream_count target=/toomany)" "... and nothing reached the upstream"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
