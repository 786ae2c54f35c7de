#!/bin/sh
# bridge-halfclose.sh: half-close crosses the bridge both ways.  A client
# that sends its request and shuts its write side still gets the whole
# answer (which the proxy only sends after it saw that EOF); a proxy that
# answers and closes first is seen by the client as EOF, while the client
# itself has closed nothing.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
br_start_proxy "$BR_T/proxy.sock"

run() {
	br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" -- python3 "$BR_T/client.py" "$@" 2>&1
}

for size in 10 1048576; do
	out=$(run halfclose $size) || br_fail "client failed: $out"
	[ "$out" = ok ] || br_fail "client half-close, $size bytes: $out"
done
br_pass "client shuts its write side, gets the whole response"

out=$(run serverclose) || br_fail "client failed: $out"
[ "$out" = ok ] || br_fail "server closes first: $out"
br_pass "server closes first, client sees EOF"
exit 0
