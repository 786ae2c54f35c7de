#!/bin/sh
# bridge-halfclose.sh: half-close crosses the bridge both ways.  A client
# that sends its request and shuts its write side still gets the whole
# answer (which the proxy only sends after it saw that EOF); a proxy that
# answers and closes first is seen by the client as EOF, while the client
# itself has closed nothing; and a proxy that answers and closes while the
# client is still sending gets its answer through.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
br_start_proxy "$BR_T/proxy.sock"

run() {
	br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- python3 "$BR_T/client.py" "$@" 2>&1
}

for size in 10 1048576; do
	out=$(run halfclose $size) || br_fail "client failed: $out"
	[ "$out" = ok ] || br_fail "client half-close, $size bytes: $out"
done
br_pass "client shuts its write side, gets the whole response"

out=$(run serverclose) || br_fail "client failed: $out"
[ "$out" = ok ] || br_fail "server closes first: $out"
br_pass "server closes first, client sees EOF"

# The proxy answers (403) and closes while the client is still uploading:
# writes towards the proxy fail, yet the answer must reach the client.
for i in 1 2 3 4 5; do
	out=$(run early) || br_fail "client failed: $out"
	[ "$out" = ok ] || br_fail "early answer during an upload, run $i: $out"
done
br_pass "an answer sent while the client still uploads reaches it (5 runs)"
exit 0
