#!/bin/sh
# bridge-bwrap.sh: the bwrap recipe of README.md and postern-bridge(8), run
# exactly as printed (only "agent ..." becomes the probe; the session socket
# is at the printed /run/postern/s1/proxy.sock) by an ordinary user (uid 1000) and
# by root (behind the printed setpriv prefix).  Either way CMD has no
# capability in any set and no_new_privs, is not kernel uid or gid 0, sees
# no process outside its network namespace and cannot nsenter the
# launcher's, finds the launcher's secret in no /proc/*/environ, reaches no
# host UNIX socket (stand-ins in /run, /tmp and a home), and its allowed
# request goes through while a denied one gets 403.  Then the recipe's first
# request after start succeeds, 20 times in a row, forward and CONNECT.
#
# The recipe is read from the documents: keep README.md and the man page in
# sync (this test fails when they differ).
. "$top_srcdir/tests/integration/lib-bridge.sh"
command -v bwrap >/dev/null || br_skip "bubblewrap is not installed"
if [ "${BR_IN_MNTNS:-}" != 1 ] && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=1000 --regid=1000 --clear-groups \
		bwrap --unshare-user --unshare-net --ro-bind / / true 2>/dev/null ||
		br_skip "uid 1000 cannot create namespaces with bwrap here"
fi
br_recipe_world "$@"

recipe=$(br_doc_recipe "$top_srcdir/README.md" bwrap)
[ -n "$recipe" ] || br_fail "README.md prints no bwrap recipe"
[ "$recipe" = "$(br_doc_recipe "$top_srcdir/bridge/postern-bridge.8" bwrap)" ] ||
	br_fail "README.md and postern-bridge(8) print different bwrap recipes"
# Root's way in is the printed setpriv prefix; a document that prints none
# leaves root with the plain line.
rootline=$(br_doc_recipe "$top_srcdir/README.md" setpriv)
[ "$rootline" = "$(br_doc_recipe "$top_srcdir/bridge/postern-bridge.8" setpriv)" ] ||
	br_fail "README.md and postern-bridge(8) print different root prefixes"
prefix=""
[ -n "$rootline" ] && prefix="${rootline%%unshare *}"

fail=0
SOCKETS=yes br_run_recipe bwrap-user user "$recipe" || fail=1
SOCKETS=yes br_run_recipe bwrap-root root "$prefix$recipe" || fail=1
[ $fail = 0 ] || br_fail "the bwrap recipe does not hold"
br_pass "bwrap recipe, as uid 1000 and as root: no capability, not root, own PID namespace, no secret, no host socket, allow and deny"

i=0
while [ $i -lt 20 ]; do
	i=$((i + 1))
	line=$(printf '%s\n' "$recipe" |
		sed 's|agent \.\.\.|curl -sS --max-time 10 http://upstream.test/hello.txt|')
	out=$(cd /home/agent && setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "$line" 2>&1) ||
		br_fail "run $i: bridge or curl failed: $out"
	[ "$out" = "hello from upstream" ] || br_fail "run $i: got '$out'"
done
br_pass "20 first requests through the recipe"

line=$(printf '%s\n' "$recipe" |
	sed 's|agent \.\.\.|curl -sS -p --max-time 10 http://upstream.test/hello.txt|')
out=$(cd /home/agent && setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "$line" 2>&1) ||
	br_fail "CONNECT tunnel: $out"
[ "$out" = "hello from upstream" ] || br_fail "CONNECT tunnel: got '$out'"
br_pass "CONNECT tunnel through the recipe"

# The ProxyCommand of the GIT_SSH_COMMAND the bridge exports is reachable
# inside the recipe's sandbox (the bridge's own path), and relays one
# CONNECT over stdin and stdout.
line=$(printf '%s\n' "$recipe" |
	sed "s|agent \\.\\.\\.|sh -c 'p=\${GIT_SSH_COMMAND#*ProxyCommand=?}; p=\${p%% *}; printf \"GET /hello.txt HTTP/1.0\\\\r\\\\n\\\\r\\\\n\" \\| \$p connect upstream.test 80'|")
out=$(cd /home/agent && setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "$line" 2>&1) ||
	br_fail "GIT_SSH_COMMAND's ProxyCommand: $out"
case $out in
*"hello from upstream"*) ;;
*) br_fail "GIT_SSH_COMMAND's ProxyCommand: got '$out'" ;;
esac
br_pass "the exported ProxyCommand works inside the recipe"
exit 0
