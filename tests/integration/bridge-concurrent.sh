#!/bin/sh
# bridge-concurrent.sh: three clients connected at the same time each get
# their own UNIX connection to the proxy (which numbers its connections), so
# the socat ordering bug (every client on one shared upstream) cannot return.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
br_start_proxy "$BR_T/proxy.sock"

out=$(br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
	python3 "$BR_T/client.py" ids 3 2>&1) || br_fail "client failed: $out"
echo "$out"
n=$(echo "$out" | grep -c '^conn=[0-9]*$')
[ "$n" = 3 ] || br_fail "expected 3 answers, got: $out"
distinct=$(echo "$out" | sort -u | wc -l)
[ "$distinct" = 3 ] || br_fail "clients shared a proxy connection: $out"
accepts=$(grep -c '^accept ' "$BR_T/proxy.log")
[ "$accepts" = 3 ] || br_fail "proxy accepted $accepts connections, not 3"
br_pass "3 concurrent clients, 3 distinct proxy connections"
exit 0
