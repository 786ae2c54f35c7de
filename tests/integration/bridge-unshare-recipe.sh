#!/bin/sh
# bridge-unshare-recipe.sh: the unshare recipe of README.md and
# postern-bridge(8), run exactly as printed (only "agent ..." becomes the
# probe; the session socket is at the printed /run/postern/s1/proxy.sock) by an
# ordinary user (uid 1000) and by root (the printed setpriv line).  Either
# way CMD has no capability in any set and no_new_privs, is not kernel uid
# or gid 0, sees no process outside its network namespace and cannot
# nsenter the launcher's, finds the launcher's secret in no /proc/*/environ,
# and its allowed request goes through while a denied one gets 403.  (The
# host's UNIX sockets are not checked: this recipe shares the host's file
# system, as the documents say; the bwrap recipe is the one that hides
# them.)
#
# The recipes are read from the documents: keep README.md and the man page
# in sync (this test fails when they differ).
. "$top_srcdir/tests/integration/lib-bridge.sh"
if [ "${BR_IN_MNTNS:-}" != 1 ] && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=1000 --regid=1000 --clear-groups unshare -rn true 2>/dev/null ||
		br_skip "uid 1000 cannot create user namespaces here"
fi
br_recipe_world "$@"

user=$(br_doc_recipe "$top_srcdir/README.md" unshare)
[ -n "$user" ] || br_fail "README.md prints no unshare recipe"
[ "$user" = "$(br_doc_recipe "$top_srcdir/bridge/postern-bridge.8" unshare)" ] ||
	br_fail "README.md and postern-bridge(8) print different unshare recipes"
root=$(br_doc_recipe "$top_srcdir/README.md" setpriv)
[ "$root" = "$(br_doc_recipe "$top_srcdir/bridge/postern-bridge.8" setpriv)" ] ||
	br_fail "README.md and postern-bridge(8) print different root recipes"
# A document that prints no root line leaves root with the plain one.
[ -n "$root" ] || root=$user

fail=0
br_run_recipe unshare-user user "$user" || fail=1
br_run_recipe unshare-root root "$root" || fail=1
[ $fail = 0 ] || br_fail "the unshare recipe does not hold"
br_pass "unshare recipe, as uid 1000 and as root: no capability, not root, own PID namespace, no secret, allow and deny"
exit 0
