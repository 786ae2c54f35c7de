#!/bin/sh
# bridge-capture.sh: transparent capture by postern-bridge on its own, in
# unshare and in bwrap, with the real proxy.  With CAP_NET_ADMIN
# in its namespace and /etc/resolv.conf bound to "nameserver 127.0.0.1",
# Node 20's fetch and curl --noproxy reach an allowed host by name; a name
# never allowed gets NXDOMAIN and the proxy's audit line (method DNS);
# without the capability the bridge still runs CMD, and says capture is
# off when resolv.conf names the stub (only then); --no-capture leaves port
# 53 alone.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"
[ -f /etc/resolv.conf ] || skip "no /etc/resolv.conf to bind over"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

S="$WORLD_DIR/sock"
mkdir -p "$S" "$WORLD_DIR/conf.d"
chmod 755 "$WORLD_DIR/conf.d"
conf="$WORLD_DIR/conf.d/postern.ini"
{
	admin_proxy_section
	cat <<-EOF2
		[session agent]
		listen = unix:$S/agent.sock
		allow_hosts = allowed.test:80 private, allowed.test private
	EOF2
} >"$conf"
proxy_start "$conf" || die "no proxy"
RC="$WORLD_DIR/resolv.conf"
echo "nameserver 127.0.0.1" >"$RC"
BR="$top_builddir/postern-bridge"
root=
[ "$(id -u)" = 0 ] && root=--allow-root
CMD='node -e "fetch(\"http://allowed.test/node\").then(r => console.log(\"node\", r.status),
		e => console.log(\"node error\", e.cause ? e.cause.code : e.message))"
	curl -sS --noproxy "*" --max-time 10 -o /dev/null -w "curl %{http_code}\n" http://allowed.test/curl
	getent hosts denied.test; echo "getent denied $?"'

# The unshare recipe with a mount namespace for resolv.conf.
out=$(unshare -nm sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$RC" \
	"$BR" $root --connect "$S/agent.sock" -- sh -c "$CMD" 2>"$WORLD_DIR/br.err")
expect_match "^node 200$" "$out" "unshare: Node's fetch reaches an allowed host by name"
expect_match "^curl 200$" "$out" "unshare: curl --noproxy reaches it"
expect_match "^getent denied 2$" "$out" "unshare: a denied name does not resolve"
expect_audit "the proxy audits the refused name" event=decision decision=deny \
	host=denied.test reason=host_not_allowed method=DNS
expect_no_match "capture is off" "$(cat "$WORLD_DIR/br.err")" "no complaint from the bridge"

if command -v bwrap >/dev/null 2>&1; then
	out=$(bwrap --unshare-net --unshare-pid --die-with-parent --dev-bind / / \
		--ro-bind "$RC" /etc/resolv.conf --cap-add CAP_NET_ADMIN -- \
		"$BR" $root --connect "$S/agent.sock" -- sh -c "$CMD" 2>"$WORLD_DIR/br.err")
	expect_match "^node 200$" "$out" "bwrap --cap-add CAP_NET_ADMIN: Node's fetch by name"
	expect_match "^curl 200$" "$out" "bwrap: curl --noproxy"
	out=$(bwrap --unshare-net --unshare-pid --die-with-parent --dev-bind / / \
		--ro-bind "$RC" /etc/resolv.conf --cap-drop ALL -- \
		"$BR" $root --connect "$S/agent.sock" -- sh -c 'echo ran' 2>"$WORLD_DIR/br.err")
	expect_eq "ran" "$out" "bwrap --cap-drop ALL: CMD still runs"
	expect_match "transparent capture is off" "$(cat "$WORLD_DIR/br.err")" \
		"and the bridge says capture is off"
	# The recipe without capture (the host's resolv.conf) stays quiet.
	bwrap --unshare-net --unshare-pid --die-with-parent --dev-bind / / --cap-drop ALL -- \
		"$BR" $root --connect "$S/agent.sock" -- true 2>"$WORLD_DIR/br.err"
	expect_eq "" "$(cat "$WORLD_DIR/br.err")" \
		"bwrap --cap-drop ALL, no stub in resolv.conf: not a word about capture"
else
	diag "bwrap is not installed: its half is not run"
fi

out=$(unshare -n "$BR" $root --no-capture --connect "$S/agent.sock" -- \
	sh -c 'cat /proc/net/udp | awk "NR > 1 { print \$2 }"' 2>&1)
expect_no_match ":0035$" "$out" "--no-capture: nothing on port 53"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
