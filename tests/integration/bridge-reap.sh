#!/bin/sh
# bridge-reap.sh: as PID 1 the bridge reaps every orphan (grandchildren whose
# parent exited leave no zombie), also when it is not PID 1 (it is a child
# subreaper); and when CMD exits, nothing it left running survives the
# bridge, not even a process that ignores SIGTERM.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
$BR_PIDNS true 2>/dev/null ||
	br_skip "cannot create a PID namespace with its own /proc here"
br_start_proxy "$BR_T/proxy.sock"
cp "$(command -v sleep)" "$BR_T/leftover-sleep"

# Orphans: a child starts two grandchildren and exits at once; they are
# handed to the bridge, exit after 0.2 s, and must not stay zombies.
cat > "$BR_T/orphans.sh" <<'EOF2'
sh -c 'sleep 0.2 & sleep 0.2 & exit 0'
sleep 1
z=0
bridge=$1
for f in /proc/[0-9]*/stat; do
	# A process may vanish between the glob and the read.
	{ read -r pid comm state ppid rest < "$f"; } 2>/dev/null || continue
	[ "$ppid" = "$bridge" ] && [ "$state" = Z ] && z=$((z + 1))
done
echo "zombies=$z"
EOF2

out=$($BR_PIDNS "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- \
	sh "$BR_T/orphans.sh" 1 2>&1) || br_fail "PID-1 run failed: $out"
[ "$out" = "zombies=0" ] || br_fail "as PID 1: $out"
br_pass "as PID 1, orphaned grandchildren are reaped"

out=$(br_ns sh -c 'exec "$0" --connect "$1" $BR_ROOT -- sh "$2" $$' "$BRIDGE" \
	"$BR_T/proxy.sock" "$BR_T/orphans.sh" 2>&1) || br_fail "run failed: $out"
[ "$out" = "zombies=0" ] || br_fail "not PID 1: $out"
br_pass "not PID 1 (subreaper), orphaned grandchildren are reaped"

# Leftovers: CMD leaves a background process, and one that ignores SIGTERM.
start=$(date +%s)
br_ns "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT -- sh -c \
	'"$0" 300 & (trap "" TERM; exec "$0" 301) & sleep 0.2; exit 3' \
	"$BR_T/leftover-sleep"
rc=$?
[ $rc = 3 ] || br_fail "bridge exited $rc, not CMD's 3"
if pgrep -f "$BR_T/leftover-sleep" >/dev/null; then
	pkill -KILL -f "$BR_T/leftover-sleep"
	br_fail "processes left behind after the bridge exited"
fi
secs=$(( $(date +%s) - start ))
[ $secs -le 5 ] || br_fail "ending the leftovers took $secs s"
br_pass "nothing left behind (SIGTERM, then SIGKILL for the stubborn one), in $secs s"
exit 0
