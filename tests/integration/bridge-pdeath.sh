#!/bin/sh
# bridge-pdeath.sh: the bridge dies with its parent and takes CMD (and what
# CMD started) with it; and if the bridge itself is killed outright, CMD
# still does not outlive it.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
command -v pgrep >/dev/null || br_skip "pgrep (procps) is not installed"
br_start_proxy "$BR_T/proxy.sock"
cp "$(command -v sleep)" "$BR_T/cmd-sleep"
cp "$(command -v sleep)" "$BR_T/grandchild-sleep"

gone() { # PATTERN: true once no process matches, within 5 s
	i=0
	while pgrep -f "$1" >/dev/null; do
		i=$((i + 1))
		[ $i -gt 50 ] && return 1
		sleep 0.1
	done
	return 0
}

# 1. The launcher dies (SIGKILL, no chance to clean up).
sh -c '$0 "$@" & wait' "$BR_NS" "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
	sh -c '"$0" 401 & exec "$1" 400' "$BR_T/grandchild-sleep" "$BR_T/cmd-sleep" &
launcher=$!
BR_PIDS="$BR_PIDS $launcher"
i=0
until pgrep -f "$BR_T/grandchild-sleep" >/dev/null && pgrep -f "$BR_T/cmd-sleep" >/dev/null; do
	i=$((i + 1))
	[ $i -gt 50 ] && br_fail "CMD did not start"
	sleep 0.1
done
bridge=$(pgrep -f "$BRIDGE --connect $BR_T/proxy.sock")
[ -n "$bridge" ] || br_fail "no bridge process found"
kill -KILL $launcher
wait $launcher 2>/dev/null
gone "$BRIDGE --connect $BR_T/proxy.sock" || br_fail "the bridge outlived its parent"
gone "$BR_T/cmd-sleep" || br_fail "CMD outlived the bridge's parent"
gone "$BR_T/grandchild-sleep" || br_fail "CMD's child outlived the bridge's parent"
br_pass "parent killed: bridge, CMD and CMD's child are gone"

# 2. The bridge itself is killed outright: CMD (ignoring SIGTERM) follows.
br_ns_bg "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
	sh -c 'trap "" TERM; exec "$0" 402' "$BR_T/cmd-sleep"
bridge=$BG_PID
i=0
until pgrep -f "$BR_T/cmd-sleep 402" >/dev/null; do
	i=$((i + 1))
	[ $i -gt 50 ] && br_fail "CMD did not start"
	sleep 0.1
done
kill -KILL $bridge
wait $bridge 2>/dev/null
gone "$BR_T/cmd-sleep 402" || br_fail "CMD outlived a SIGKILLed bridge"
br_pass "bridge SIGKILLed: CMD is gone too"
exit 0
