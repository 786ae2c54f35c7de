#!/bin/sh
# bridge-lo-error.sh: when lo is down and the bridge may not bring it up
# (no CAP_NET_ADMIN over the namespace), it says so in one line naming the
# missing capability and exits 2, before starting CMD.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
[ "$(id -u)" = 0 ] || br_skip "needs root to drop CAP_NET_ADMIN inside a fresh namespace"
command -v setpriv >/dev/null || br_skip "setpriv (util-linux) is not installed"
# The unprivileged user must be able to run the binary where it was built.
setpriv --reuid=65534 --regid=65534 --clear-groups "$BRIDGE" --version >/dev/null 2>&1 ||
	br_skip "uid 65534 cannot execute $BRIDGE here"

out=$(unshare -n setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all --bounding-set=-all \
	"$BRIDGE" --connect "$BR_T/proxy.sock" -- sh -c 'echo CMD-RAN' 2>&1)
rc=$?
echo "$out"
[ $rc = 2 ] || br_fail "exit status $rc, not 2"
# One line saying why, then the line every program ends a failed start with.
[ "$(echo "$out" | wc -l)" = 2 ] || br_fail "not one line and the not-starting line"
[ "$(echo "$out" | tail -1)" = "postern-bridge: not starting" ] || br_fail "the last line is not 'not starting'"
echo "$out" | grep -q 'lo' || br_fail "does not name lo"
echo "$out" | grep -q 'CAP_NET_ADMIN' || br_fail "does not name CAP_NET_ADMIN"
case "$out" in *CMD-RAN*) br_fail "CMD ran anyway" ;; esac
br_pass "lo down and no CAP_NET_ADMIN: one line and not starting, exit 2"
exit 0
