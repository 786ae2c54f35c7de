#!/bin/sh
# bridge-unshare.sh: in "unshare -n" (lo down), the bridge brings lo up and
# curl reaches the upstream through it, by the proxy variables the bridge
# exports, on the very first request after start, 50 times in a row; both
# the forward path (HTTP_PROXY) and a CONNECT tunnel (curl -p).
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
command -v curl >/dev/null || br_skip "curl is not installed"
br_start_upstream
br_start_proxy "$BR_T/proxy.sock"

# lo must start down, or this test proves nothing about bringing it up.
flags=$(br_ns python3 "$BR_T/loflags.py")
[ $(( flags & 1 )) = 0 ] || br_fail "lo is not down in a fresh namespace: flags $flags"

i=0
while [ $i -lt 50 ]; do
	i=$((i + 1))
	# No sleep, no retry: curl runs as CMD the moment the bridge starts it.
	out=$(br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
		curl -sS --max-time 10 http://upstream.test/hello.txt 2>&1) ||
		br_fail "run $i: bridge or curl failed: $out"
	[ "$out" = "hello from upstream" ] || br_fail "run $i: got '$out'"
done
br_pass "50 first requests through the forward path"

out=$(br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
	curl -sS -p --max-time 10 http://upstream.test/hello.txt 2>&1) ||
	br_fail "CONNECT tunnel: $out"
[ "$out" = "hello from upstream" ] || br_fail "CONNECT tunnel: got '$out'"
grep -q . "$BR_T/proxy.log" || br_fail "the test proxy saw nothing"
br_pass "CONNECT tunnel"

# A namespace without IPv6 on lo: the default [::1] listener is skipped
# quietly and the bridge works (socat would die here).
out=$(br_ns sh -c 'echo 1 > /proc/sys/net/ipv6/conf/lo/disable_ipv6 &&
	echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && exec "$@"' sh \
	"$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
	sh -c 'cat /proc/net/if_inet6; curl -sS --max-time 10 http://upstream.test/hello.txt' 2>&1) ||
	br_fail "without IPv6: $out"
[ "$out" = "hello from upstream" ] || br_fail "without IPv6: got '$out'"
br_pass "no IPv6 in the namespace: [::1] skipped, no error"

# Several listeners, IPv6 among them, when the namespace has ::1.
out=$(br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT --listen 127.0.0.1:3130 \
	--listen '[::1]:3131' -- sh -c 'echo "$HTTPS_PROXY";
	curl -sS --max-time 10 -x "http://[::1]:3131" http://upstream.test/hello.txt;
	curl -sS --max-time 10 -x http://127.0.0.1:3130 http://upstream.test/hello.txt' 2>&1) ||
	br_fail "two listeners: $out"
[ "$out" = "http://127.0.0.1:3130
hello from upstream
hello from upstream" ] || br_fail "two listeners: got '$out'"
br_pass "--listen 127.0.0.1:3130 --listen [::1]:3131 both relay"

# Bad arguments are refused before anything changes: lo stays down.
out=$(br_ns sh -c '"$0" --connect "$1" --listen 127.1:3128 -- true; echo "rc=$?";
	python3 "$2"' "$BRIDGE" "$BR_T/proxy.sock" "$BR_T/loflags.py" 2>&1)
echo "$out" | grep -q '^rc=2$' || br_fail "bad --listen: $out"
[ $(( $(echo "$out" | tail -n 1) & 1 )) = 0 ] || br_fail "bad --listen still brought lo up"
br_pass "a bad --listen exits 2 and leaves lo down"

# "ip" is never needed: the bridge brings lo up itself, and says so.
flags=$(br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- python3 "$BR_T/loflags.py")
[ $(( flags & 1 )) = 1 ] || br_fail "lo not up under the bridge: $flags"
br_pass "lo brought up over netlink"
exit 0
