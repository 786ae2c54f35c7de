#!/bin/sh
# bridge-root.sh: the bridge refuses to run CMD as uid or gid 0 of the host
# (kernel root: it owns every root-owned file and socket even without a
# capability), before it changes anything, in one line that says why and
# names --allow-root (then "postern-bridge: not starting"); it tells such a root from the root of a user namespace
# mapped to an ordinary uid, also through bwrap's two nested namespaces;
# --allow-root runs CMD anyway, still with no capability and no_new_privs;
# the root of a user namespace runs CMD as its uid outside, not as 0;
# a relay-only bridge started as root keeps no capability once it listens.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
[ "$(id -u)" = 0 ] || br_skip "needs root to start the bridge as kernel uid 0 and as uid 1000"
command -v setpriv >/dev/null || br_skip "setpriv (util-linux) is not installed"
# A copy uid 1000 can run wherever the build tree is.
cp "$BRIDGE" "$BR_T/postern-bridge" && chmod 755 "$BR_T/postern-bridge" || br_fail "copy the bridge"
B="$BR_T/postern-bridge"
br_start_proxy "$BR_T/proxy.sock"
# Reachable by uid 1000 too, as a session socket is by its user: the bridge
# asks it for the session info before CMD, and says so when it cannot.
chmod 0666 "$BR_T/proxy.sock"
as1000() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
as1000 unshare -rn true 2>/dev/null || br_skip "uid 1000 cannot create user namespaces here"
SHOW='grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status | tr -s "\t" " "'
NONE="CapInh: 0000000000000000
CapPrm: 0000000000000000
CapEff: 0000000000000000
CapBnd: 0000000000000000
CapAmb: 0000000000000000
NoNewPrivs: 1"

# refused NAME CMD...: CMD (which starts the bridge with "sh -c 'echo
# CMD-RAN'") must exit 2 with one line naming WHAT and --allow-root, then "not starting".
refused() {
	local name=$1 what=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	echo "$name: rc=$rc: $out"
	[ $rc = 2 ] || br_fail "$name: exit status $rc, not 2"
	case "$out" in *CMD-RAN*) br_fail "$name: CMD ran" ;; esac
	[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || br_fail "$name: not one line and the not-starting line"
	[ "$(printf '%s\n' "$out" | tail -1)" = "postern-bridge: not starting" ] ||
		br_fail "$name: the last line is not 'not starting'"
	printf '%s\n' "$out" | grep -q -- "$what" || br_fail "$name: does not say '$what'"
	printf '%s\n' "$out" | grep -q -- '--allow-root' || br_fail "$name: does not name --allow-root"
	printf '%s\n' "$out" | grep -q 'setpriv --reuid' || br_fail "$name: does not say what to do instead"
	br_pass "$name: refused"
}

refused "root in the host's user namespace" "uid 0 is the host's uid 0" \
	unshare -n "$B" --connect "$BR_T/proxy.sock" -- sh -c 'echo CMD-RAN'
refused "unshare -r as root (root mapped to root)" "uid 0 is the host's uid 0" \
	unshare -rn "$B" --connect "$BR_T/proxy.sock" -- sh -c 'echo CMD-RAN'
refused "kernel gid 0 with uid 1000" "gid 0 is the host's gid 0" \
	setpriv --reuid=1000 --regid=0 --clear-groups unshare -rn \
	"$B" --connect "$BR_T/proxy.sock" -- sh -c 'echo CMD-RAN'

# Refused before anything changed: lo is still down.
out=$(unshare -n sh -c '"$0" --connect "$1" -- true; python3 "$2"' \
	"$B" "$BR_T/proxy.sock" "$BR_T/loflags.py" 2>/dev/null)
[ $(( $(echo "$out" | tail -n 1) & 1 )) = 0 ] || br_fail "the refusal still brought lo up"
br_pass "the refusal comes before lo is brought up"

if command -v bwrap >/dev/null; then
	# Root's bwrap with --uid 1000 maps uid 1000 to root one level up.
	refused "bwrap --unshare-user --uid 1000 as root" "uid 1000 is the host's uid 0" \
		bwrap --unshare-all --unshare-user --uid 1000 --gid 1000 --as-pid-1 \
		--ro-bind / / --dev /dev --proc /proc \
		"$B" --connect "$BR_T/proxy.sock" -- sh -c 'echo CMD-RAN'
	# Without procfs nothing tells the namespace's root from the host's.
	# A sanitizer build cannot run without /proc at all (ASan reads its
	# options from /proc/self/environ, LeakSanitizer walks /proc at exit).
	if grep -q __asan_init "$B"; then
		echo "no procfs: not tried with a sanitizer build"
	else
		refused "no procfs" "no procfs at /proc" \
			as1000 bwrap --unshare-all --unshare-user --ro-bind / / --dev /dev \
			--tmpfs /proc "$B" --connect "$BR_T/proxy.sock" -- sh -c 'echo CMD-RAN'
	fi
	# The other way round: uid 1000 in bwrap's inner namespace maps to
	# root of the outer one, which is uid 1000 of the host.
	out=$(as1000 bwrap --unshare-all --unshare-user --as-pid-1 --ro-bind / / \
		--dev /dev --proc /proc "$B" --connect "$BR_T/proxy.sock" -- sh -c "$SHOW" 2>&1) ||
		br_fail "uid 1000 under bwrap refused: $out"
	[ "$out" = "$NONE" ] || br_fail "uid 1000 under bwrap: $out"
	br_pass "uid 1000 under bwrap's nested namespaces runs, with nothing"
	# bwrap --uid 0 keeps the added capability for the bridge, which
	# cannot drop it from the bounding set there; without CAP_SETFCAP it
	# cannot map CMD's namespace either: CMD is the overflow uid, and has
	# nothing.
	out=$(as1000 bwrap --unshare-all --unshare-user --uid 0 --gid 0 --cap-drop ALL \
		--cap-add CAP_NET_ADMIN --as-pid-1 --ro-bind / / --dev /dev --proc /proc \
		"$B" --connect "$BR_T/proxy.sock" -- sh -c "id -u; $SHOW" 2>"$BR_T/unmapped.err") ||
		br_fail "bwrap --uid 0 as uid 1000: $out $(cat "$BR_T/unmapped.err")"
	[ "$out" = "65534
$NONE" ] || br_fail "bwrap --uid 0 without CAP_SETFCAP: $out"
	grep -q 'runs as the overflow uid.*CAP_SETFCAP' "$BR_T/unmapped.err" ||
		br_fail "bwrap --uid 0 without CAP_SETFCAP: no word of it: $(cat "$BR_T/unmapped.err")"
	br_pass "bwrap --uid 0 without CAP_SETFCAP: CMD is the overflow uid, with nothing, and the bridge says so"
fi

# Root of a user namespace that maps it to uid 1000 is no kernel root; CMD
# is not even that root, but uid 1000 of a namespace of its own.
out=$(as1000 unshare -rn "$B" --connect "$BR_T/proxy.sock" -- sh -c "id -u; $SHOW" 2>&1) ||
	br_fail "unshare -r as uid 1000 refused: $out"
[ "$out" = "1000
$NONE" ] || br_fail "unshare -r as uid 1000: $out"
br_pass "uid 0 of a namespace mapped to uid 1000 runs CMD as uid 1000, with no capability"

# Relay only (no CMD, so no refusal): the bridge keeps no capability
# itself once it listens, even as root.
unshare -n "$B" --connect "$BR_T/proxy.sock" --listen 127.0.0.1:3199 &
relay=$!
BR_PIDS="$BR_PIDS $relay"
i=0
until grep -q ':0C7F ' /proc/$relay/net/tcp 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 50 ] && br_fail "the relay-only bridge did not listen"
	sleep 0.1
done
got=$(grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/$relay/status | tr -s '\t' ' ')
kill $relay
[ "$got" = "$NONE" ] || br_fail "the relay-only bridge as root kept: $got"
br_pass "a relay-only bridge started as root keeps no capability once it listens"

# --allow-root: CMD runs as root, but still with nothing.
out=$(unshare -n "$B" --allow-root --connect "$BR_T/proxy.sock" -- sh -c "id -u; $SHOW" 2>&1) ||
	br_fail "--allow-root: $out"
[ "$out" = "0
$NONE" ] || br_fail "--allow-root: $out"
br_pass "--allow-root runs CMD as root with no capability and no_new_privs"
exit 0
