#!/bin/sh
# bridge-dns-hostile: the bridge's DNS stub on 127.0.0.1:53, in a real
# namespace with the real proxy, against hostile clients over UDP and TCP:
# zero-length, truncated and oversized messages, bad counts, compression
# pointers and loops, long labels and names, a 64 KiB datagram, TCP lengths
# of 0 and past the data, garbage, a slowloris and 100 connections at
# once.  After each, a normal query for an allowed name gets its synthetic
# A record; while a slow or silent TCP client is connected, others are
# still answered; the bridge lives through all of it.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

S="$WORLD_DIR/sock"
mkdir -p "$S"
conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section
	cat <<-EOF2
		[session agent]
		listen = unix:$S/agent.sock
		allow_hosts = allowed.test private
	EOF2
} >"$conf"
proxy_start "$conf" || die "no proxy"
root=
[ "$(id -u)" = 0 ] && root=--allow-root
out=$(unshare -n "${POSTERN_BRIDGE:-$top_builddir/postern-bridge}" $root --connect "$S/agent.sock" -- \
	"$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-bridge/dnshostile.py" allowed.test \
	2>"$WORLD_DIR/br.err")
printf '%s\n' "$out" >"$WORLD_DIR/hostile.out"
n=0
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok }"; n=$((n + 1)) ;;
	"bad "*) fail "${line#bad }" ;;
	done) ;;
	*) diag "$line" ;;
	esac
done <"$WORLD_DIR/hostile.out"
expect_match "^done$" "$out" "every attack was made ($n checks; $(tail -n 3 "$WORLD_DIR/br.err"))"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
