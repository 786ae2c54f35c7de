#!/bin/sh
# bridge-signals.sh: the bridge forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT,
# SIGUSR1, SIGUSR2 and SIGWINCH to CMD, and exits with CMD's status (the
# exit code, or 128+N for a signal); relay-only mode ends on SIGTERM.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
br_start_proxy "$BR_T/proxy.sock"

run() {
	br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- "$@"
}

# Exit status propagation.
run sh -c 'exit 7'; rc=$?
[ $rc = 7 ] || br_fail "exit 7 gave $rc"
run sh -c 'exit 0'; rc=$?
[ $rc = 0 ] || br_fail "exit 0 gave $rc"
run sh -c 'kill -TERM $$'; rc=$?
[ $rc = 143 ] || br_fail "death by SIGTERM gave $rc, not 143"
run sh -c 'kill -KILL $$'; rc=$?
[ $rc = 137 ] || br_fail "death by SIGKILL gave $rc, not 137"
run /nonexistent/command 2>/dev/null; rc=$?
[ $rc = 127 ] || br_fail "a missing CMD gave $rc, not 127"
br_pass "exit status: 7, 0, 143, 137, 127"

# Forwarding: CMD records every signal it gets and exits 42 on SIGTERM.
cat > "$BR_T/catch.py" <<EOF2
import os, signal, sys, time
log = open("$BR_T/got", "a")
def h(sig, frame):
    log.write(signal.Signals(sig).name + "\n")
    log.flush()
    if sig == signal.SIGTERM:
        sys.exit(42)
for s in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"):
    signal.signal(getattr(signal, s), h)
open("$BR_T/ready", "w").close()
while True:
    time.sleep(1)
EOF2
# Started the way shells start background jobs and nohup-style launchers
# do, with SIGINT and SIGQUIT ignored: the bridge must still forward them.
br_ns_bg sh -c 'trap "" INT QUIT; exec "$@"' sh \
	"$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- python3 "$BR_T/catch.py"
bpid=$BG_PID
br_wait_file "$BR_T/ready" || br_fail "CMD did not start"
for s in INT HUP QUIT USR1 USR2 WINCH TERM; do
	kill -$s $bpid || br_fail "cannot signal the bridge"
	i=0
	until grep -qx "SIG$s" "$BR_T/got" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 50 ] && br_fail "SIG$s was not forwarded to CMD"
		sleep 0.1
	done
done
wait $bpid; rc=$?
[ $rc = 42 ] || br_fail "after forwarded SIGTERM the bridge exited $rc, not CMD's 42"
[ "$(wc -l < "$BR_T/got")" = 7 ] || br_fail "CMD got a signal twice: $(cat "$BR_T/got")"
br_pass "7 signals forwarded once each; CMD's exit status 42 returned"

# The same as PID 1 of a PID namespace (a container's init), where the
# kernel drops signals that have no handler unless they are blocked.
if $BR_PIDNS true 2>/dev/null && command -v pgrep >/dev/null; then
	rm -f "$BR_T/got" "$BR_T/ready"
	$BR_PIDNS "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
		python3 "$BR_T/catch.py" &
	upid=$!
	BR_PIDS="$BR_PIDS $upid"
	br_wait_file "$BR_T/ready" || br_fail "CMD did not start under PID 1"
	bpid=$(pgrep -P $upid)
	[ "$(cat /proc/$bpid/comm 2>/dev/null)" = postern-bridge ] || br_fail "no bridge as PID 1"
	for s in USR1 HUP TERM; do
		kill -$s $bpid
		i=0
		until grep -qx "SIG$s" "$BR_T/got" 2>/dev/null; do
			i=$((i + 1))
			[ $i -gt 50 ] && br_fail "as PID 1, SIG$s was not forwarded"
			sleep 0.1
		done
	done
	wait $upid; rc=$?
	[ $rc = 42 ] || br_fail "as PID 1 the bridge exited $rc, not 42"
	br_pass "as PID 1: signals forwarded, CMD's status returned"
fi

# Relay only: no CMD, runs until SIGTERM, exits 0.
br_ns_bg "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT
bpid=$BG_PID
sleep 0.3
kill -0 $bpid 2>/dev/null || br_fail "relay-only bridge did not stay up"
kill -TERM $bpid
wait $bpid; rc=$?
[ $rc = 0 ] || br_fail "relay-only bridge exited $rc on SIGTERM"
br_pass "relay-only mode ends cleanly on SIGTERM"
exit 0
