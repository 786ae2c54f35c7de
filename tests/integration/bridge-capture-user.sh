#!/bin/sh
# bridge-capture-user.sh: the bwrap recipe for transparent capture that
# README.md and postern-bridge(8) print (the resolv.conf line, then the
# bwrap line), run exactly as printed by an ordinary user (uid 1000), with
# the real proxy serving the session socket /run/postern/s1/proxy.sock and
# only "agent ..." replaced by a probe.  curl --noproxy '*' and Node's fetch
# reach an allowed name through capture (an address of 198.18.0.0/15, the
# upstream gets the request); a name never allowed gets NXDOMAIN from the
# stub and the proxy's audit line; CMD has no capability in any set and is
# not uid 0 in its own user namespace, nor kernel uid 0; the bridge says
# nothing about capture being off.
. "$top_srcdir/tests/integration/lib/world.sh"
. "$top_srcdir/tests/integration/lib-bridge.sh"
: "${POSTERN_TEST_WORKERS:=}"
[ "$(id -u)" = 0 ] || skip "runs the recipe as uid 1000: needs root to set up"
for c in bwrap setpriv curl; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
done
if [ "${BR_IN_MNTNS:-}" != 1 ]; then
	setpriv --reuid=1000 --regid=1000 --clear-groups \
		bwrap --unshare-user --unshare-net --ro-bind / / true 2>/dev/null ||
		skip "uid 1000 cannot create namespaces with bwrap here"
	unshare -m --propagation private true 2>/dev/null ||
		skip "cannot make a private mount namespace"
	# Our own view of /usr/local/bin, /run and /home: the recipe finds the
	# bridge on PATH and the session directory where it says.
	BR_IN_MNTNS=1 exec unshare -m --propagation private sh "$0" "$@"
fi

prep=$(br_doc_recipe "$top_srcdir/README.md" "echo nameserver")
line=$(br_doc_recipe "$top_srcdir/README.md" bwrap resolv.conf)
[ -n "$prep" ] && [ -n "$line" ] || {
	echo "FAIL: README.md prints no bwrap recipe for transparent capture"
	exit 1
}
[ "$prep" = "$(br_doc_recipe "$top_srcdir/bridge/postern-bridge.8" "echo nameserver")" ] &&
[ "$line" = "$(br_doc_recipe "$top_srcdir/bridge/postern-bridge.8" bwrap resolv.conf)" ] || {
	echo "FAIL: README.md and postern-bridge(8) print different capture recipes"
	exit 1
}

mount -t tmpfs -o mode=755 postern-test /usr/local/bin || die "tmpfs on /usr/local/bin"
mount -t tmpfs -o mode=755 postern-test /run || die "tmpfs on /run"
mount -t tmpfs -o mode=755 postern-test /home || die "tmpfs on /home"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

cp "$top_builddir/postern-bridge" "$WORLD_LIB/world.py" /usr/local/bin/ &&
	chmod 755 /usr/local/bin/postern-bridge /usr/local/bin/world.py || die "install the bridge"
mkdir -p /run/postern/s1 /home/agent && chmod 755 /run/postern /run/postern/s1 &&
	chown 1000:1000 /home/agent || die "session directory and home"
# The probe in place of "agent ...": what CMD is, and what it reaches.
cat >/usr/local/bin/capture-probe <<'EOF'
#!/bin/sh
grep -E '^(Uid|Gid|Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status
echo "id $(id -u) $(id -g)"
curl -sS --noproxy '*' --max-time 10 -o /dev/null \
	-w 'curl %{http_code} %{remote_ip}\n' http://allowed.test/curl 2>&1
if command -v node >/dev/null 2>&1; then
	node -e 'fetch("http://allowed.test/node").then(r => console.log("node", r.status),
		e => console.log("node error", e.cause ? e.cause.code : e.message))'
else
	echo "node missing"
fi
echo "stub $(python3 /usr/local/bin/world.py dns --server 127.0.0.1 denied.test A --rcode)"
getent hosts denied.test
echo "getent denied $?"
EOF
chmod 755 /usr/local/bin/capture-probe

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section
	cat <<-EOF
		[session s1]
		listen = unix:/run/postern/s1/proxy.sock owner=1000 group=1000 mode=0600
		allow_hosts = allowed.test:80 private
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"

cmd=$(printf '%s\n' "$line" | sed 's|agent \.\.\.|capture-probe|')
diag "as uid 1000: $prep"
diag "as uid 1000: $cmd"
out=$(cd /home/agent && setpriv --reuid=1000 --regid=1000 --clear-groups \
	env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/agent USER=agent \
	sh -c "$prep && $cmd" 2>"$WORLD_DIR/br.err")
diag "$out"
err=$(cat "$WORLD_DIR/br.err")
[ -z "$err" ] || diag "stderr: $err"

expect_match '^curl 200 198\.1[89]\.' "$out" \
	"curl --noproxy '*' reaches an allowed name through an address of 198.18.0.0/15"
expect_upstream "the upstream got curl's request" target=/curl host=allowed.test
if command -v node >/dev/null 2>&1; then
	expect_match '^node 200$' "$out" "Node's fetch reaches an allowed name by name"
	expect_upstream "the upstream got Node's request" target=/node host=allowed.test
else
	diag "node is not installed: Node's fetch is not checked"
fi
expect_match '^stub NXDOMAIN$' "$out" "the stub answers a name never allowed with NXDOMAIN"
expect_match '^getent denied 2$' "$out" "and it does not resolve"
expect_audit "the proxy audits the refused name" event=decision decision=deny \
	host=denied.test reason=host_not_allowed method=DNS
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	expect_match "^$f:[[:space:]]+0000000000000000$" "$out" "CMD's $f is empty"
done
expect_match '^NoNewPrivs:[[:space:]]+1$' "$out" "CMD has no_new_privs"
expect_match '^Uid:([[:space:]]+1000){4}$' "$out" \
	"CMD is uid 1000 in its own user namespace, not 0"
expect_match '^Gid:([[:space:]]+1000){4}$' "$out" "and gid 1000"
expect_no_match 'capture is off|runs as uid 0|overflow uid' "$err" \
	"the bridge does not say capture is off, nor that CMD is root or unmapped"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
