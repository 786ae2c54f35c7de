#!/bin/sh
# bridge-bulk.sh: large transfers both ways arrive intact (byte count and
# CRC-32 compared at both ends), and the bridge's RSS stays bounded while the
# client reads slowly and the proxy pushes as fast as it can: back-pressure,
# not buffering.  1 GiB each way (about 10 s here); BRIDGE_BULK_MIB=N for
# another size.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
br_start_proxy "$BR_T/proxy.sock"
mib=${BRIDGE_BULK_MIB:-1024}
size=$((mib * 1048576))

run() {
	br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- python3 "$BR_T/client.py" "$@" 2>&1
}

# Proxy -> client, with the first 3 seconds read slowly (64 KiB / 5 ms).
out=$(run download $size 3) || br_fail "download failed: $out"
echo "download: $out"
sent=$(grep '^bytes ' "$BR_T/proxy.log" | tail -n 1 | sed 's/^bytes n=[0-9]* //')
got=$(echo "$out" | sed 's/ rss0=.*//')
[ -n "$sent" ] && [ "$sent" = "$got" ] || br_fail "download: proxy sent '$sent', client got '$got'"
rss0=$(echo "$out" | sed 's/.* rss0=\([0-9]*\).*/\1/')
rssmax=$(echo "$out" | sed 's/.* rssmax=\([0-9]*\).*/\1/')
# The bridge keeps no payload in user space beyond its one copy buffer
# (256 KiB, shared by all connections): growth under 1 MiB while hundreds
# of MiB wait behind a slow reader.
[ $((rssmax - rss0)) -lt 1024 ] || br_fail "bridge RSS grew from $rss0 kB to $rssmax kB"
br_pass "$mib MiB proxy -> client intact; bridge RSS $rss0 -> $rssmax kB with a slow reader"

# Client -> proxy.
out=$(run upload $size) || br_fail "upload failed: $out"
echo "upload: $out"
case "$out" in
ok*) ;;
*) br_fail "upload: $out" ;;
esac
br_pass "$mib MiB client -> proxy intact"
exit 0
