#!/bin/sh
# bridge-bwrap.sh: under "bwrap --unshare-net" (which brings lo up itself),
# the bridge relays to the proxy's socket bind-mounted into the sandbox, and
# curl's first request after start succeeds, 50 times in a row.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
command -v curl >/dev/null || br_skip "curl is not installed"
command -v bwrap >/dev/null || br_skip "bubblewrap is not installed"
bwrap --unshare-net --dev-bind / / true 2>/dev/null ||
	br_skip "bwrap cannot create a network namespace here"
br_start_upstream
br_start_proxy "$BR_T/proxy.sock"

# The sandbox sees the socket at a fixed path of its own, as in DESIGN.md
# deployment A; it has no network but loopback.
sandbox() {
	bwrap --unshare-net --unshare-pid --die-with-parent --dev-bind / / \
		--tmpfs /run --bind "$BR_T/proxy.sock" /run/postern.sock \
		--proc /proc -- "$@"
}

i=0
while [ $i -lt 50 ]; do
	i=$((i + 1))
	out=$(sandbox "$BRIDGE" --connect /run/postern.sock $BR_ROOT -- \
		curl -sS --max-time 10 http://upstream.test/hello.txt 2>&1) ||
		br_fail "run $i: bridge or curl failed: $out"
	[ "$out" = "hello from upstream" ] || br_fail "run $i: got '$out'"
done
br_pass "50 first requests under bwrap --unshare-net"

out=$(sandbox "$BRIDGE" --connect /run/postern.sock $BR_ROOT -- \
	curl -sS -p --max-time 10 http://upstream.test/hello.txt 2>&1) ||
	br_fail "CONNECT tunnel: $out"
[ "$out" = "hello from upstream" ] || br_fail "CONNECT tunnel: got '$out'"
br_pass "CONNECT tunnel under bwrap"
exit 0
