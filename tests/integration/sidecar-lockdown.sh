#!/bin/sh
# sidecar-lockdown.sh: postern-sidecar lockdown-check in a shared network
# namespace ("pod" = the world's px): afterwards a process of another uid
# with no capabilities gets ENETUNREACH for direct TCP and for UDP DNS, v4
# and v6, while the proxy uid still gets out and loopback still works; the
# agent cannot remove the rules; running it again does not stack rules.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up

# The world must route the agent before the lock-down, or the ENETUNREACH
# below would prove nothing.
expect_eq OK "$(conn $AGENT_UID tcp "$WORLD_UP4" 80)" "before: agent reaches upstream over TCP"
expect_eq OK "$(conn $AGENT_UID udp "$WORLD_DNS" 53)" "before: agent reaches the resolver"

out=$(in_px "$SIDECAR" lockdown-check --user $PROXY_UID \
	--probe-addr 10.200.1.77 --probe-addr fd00:200:1::77 2>&1)
expect_eq 0 $? "lockdown-check succeeds"
expect_match "lock-down proven" "$out" "lockdown-check says the lock-down is proven"
expect_match "cannot reach default gateway $WORLD_UP4 \(tcp\): ENETUNREACH" "$out" \
	"the probe used the v4 default gateway"
expect_match "cannot reach default gateway $WORLD_UP6 \(udp\): ENETUNREACH" "$out" \
	"the probe used the v6 default gateway"

expect_eq ENETUNREACH "$(conn $AGENT_UID tcp "$WORLD_UP4" 80)" "agent: direct TCP v4 is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID tcp "$WORLD_UP6" 80)" "agent: direct TCP v6 is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID udp "$WORLD_DNS" 53)" "agent: UDP DNS to the resolver is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID udp "$WORLD_UP6" 53)" "agent: UDP v6 is ENETUNREACH"
expect_eq ENETUNREACH "$(conn 0 tcp "$WORLD_UP4" 80)" "root's sockets are locked too"
expect_eq OK "$(conn $PROXY_UID tcp "$WORLD_UP4" 80)" "proxy uid: TCP v4 still gets out"
expect_eq OK "$(conn $PROXY_UID tcp "$WORLD_UP6" 80)" "proxy uid: TCP v6 still gets out"

# Loopback stays open for everyone (the local table's rule at priority 0).
in_px "$WORLD_PYTHON" -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 3999)); s.listen(1)
open(sys.argv[1], "w").close()
s.settimeout(10); c, _ = s.accept()' "$WORLD_DIR/lo.ready" &
lo_pid=$!
i=0
while [ ! -e "$WORLD_DIR/lo.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq OK "$(conn $AGENT_UID tcp 127.0.0.1 3999)" "agent: loopback still works"
wait $lo_pid

# Without CAP_NET_ADMIN the agent cannot undo the lock-down.
as_uid $AGENT_UID ip rule del priority 101 >/dev/null 2>&1
expect_ne 0 $? "agent cannot delete the unreachable rule"
expect_eq 1 "$(rule_count 101)" "the unreachable rule is still there"

# A restart (a second run, and one with another proxy uid first) must not
# stack rules, and must not leave the other uid's rule behind.
# The proxy uid comes from the config's [proxy] user when --user is absent.
printf '[proxy]\nuser = 4242\n' >"$WORLD_DIR/u4242.ini"
in_px "$SIDECAR" lockdown-check -c "$WORLD_DIR/u4242.ini" --probe-addr 10.200.1.77 >/dev/null 2>&1
expect_eq 0 $? "lockdown-check with another proxy uid, from the config"
expect_match "uidrange 4242-4242 lookup main" "$(in_px ip rule show priority 100)" \
	"the config's user is the uid let out"
# A bad config is refused before the namespace is touched.
printf '[proxy]\nuser = 4242\nbogus = 1\n' >"$WORLD_DIR/bad.ini"
out=$(in_px "$SIDECAR" lockdown-check -c "$WORLD_DIR/bad.ini" 2>&1)
expect_eq 2 $? "a bad config: status 2"
expect_match "bad.ini:3: " "$out" "a bad config: FILE:LINE error"
expect_match "uidrange 4242-4242 lookup main" "$(in_px ip rule show priority 100)" \
	"a bad config changed no rule"
in_px "$SIDECAR" lockdown-check --user $PROXY_UID --probe-addr 10.200.1.77 >/dev/null 2>&1
expect_eq 0 $? "lockdown-check again"
in_px "$SIDECAR" lockdown-check --user $PROXY_UID --probe-addr 10.200.1.77 >/dev/null 2>&1
expect_eq 0 $? "and again"
for fam in "" -6; do
	expect_eq 1 "$(rule_count 100 $fam)" "one allow rule ($fam) after three runs"
	expect_eq 1 "$(rule_count 101 $fam)" "one unreachable rule ($fam) after three runs"
	expect_match "uidrange $PROXY_UID-$PROXY_UID lookup main" \
		"$(in_px ip $fam rule show priority 100)" "the allow rule is for the proxy uid ($fam)"
done
expect_eq ENETUNREACH "$(conn 4242 tcp "$WORLD_UP4" 80)" "the earlier proxy uid is locked again"

# unlock removes exactly our rules.
in_px "$SIDECAR" unlock >/dev/null 2>&1
expect_eq 0 $? "unlock succeeds"
expect_eq "0 0 0 0" "$(rule_count 100) $(rule_count 101) $(rule_count 100 -6) $(rule_count 101 -6)" \
	"unlock removed the rules"
expect_eq OK "$(conn $AGENT_UID tcp "$WORLD_UP4" 80)" "after unlock the agent gets out again"
exit 0
