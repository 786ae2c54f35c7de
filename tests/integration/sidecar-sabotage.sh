#!/bin/sh
# sidecar-sabotage.sh: the sidecar refuses to start the proxy, and says
# which check failed, when the lock-down does not hold: a rule inserted
# above ours that routes every uid, one at our own priority before ours, a
# goto past the unreachable rule, and a live probe that gets through (the
# probe uid set to the proxy uid, which the read-back alone cannot catch).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up

check() {
	in_px "$SIDECAR" lockdown-check --user $PROXY_UID --probe-addr 10.200.1.77 2>&1
}

# Hostile or broken input is refused before the namespace is touched.
printf '[proxy]\nbogus = 1\n' >"$WORLD_DIR/bad.ini"
set -f    # "--allow *" must reach the sidecar as it is
for args in "--user 4000 -c $WORLD_DIR/bad.ini" "--listen bogus:1" "--allow *" \
	"--allow foo.*.test" "--user 007" "--probe-addr 1.2.3"; do
	# shellcheck disable=SC2086
	out=$(in_px "$SIDECAR" $args 2>&1)
	expect_eq 2 $? "refused with status 2: $args"
	expect_no_match "unexpected argument|^usage" "$out" "refused for the right reason: $args"
done
set +f
expect_eq "0 0" "$(rule_count 100) $(rule_count 101)" "refused input installed no rule"

in_px ip rule add priority 50 from all lookup main || die "cannot add the sabotage rule"
out=$(check)
expect_eq 1 $? "v4 allow-all at priority 50: lockdown-check fails"
expect_match "check failed: rules: IPv4: a rule at priority 50 .*could route sockets of other uids" \
	"$out" "the failure names the rule at priority 50"
out=$(in_px "$SIDECAR" --user $PROXY_UID --probe-addr 10.200.1.77 2>&1)
expect_eq 1 $? "container mode refuses to start"
expect_match "refusing to start the proxy" "$out" "container mode says it refuses"
expect_no_match "serving" "$out" "container mode did not serve"
expect_eq ENETUNREACH "$(conn $AGENT_UID udp "$WORLD_UP6" 53)" \
	"(v6 is still locked: the sabotage is v4 only)"
in_px ip rule del priority 50 || die "cannot remove the sabotage rule"
check >/dev/null
expect_eq 0 $? "without the sabotage rule the check passes again"

in_px ip -6 rule add priority 7 from all lookup main || die "v6 sabotage rule"
out=$(check)
expect_eq 1 $? "v6 allow-all at priority 7: lockdown-check fails"
expect_match "IPv6: a rule at priority 7 " "$out" "the failure names the v6 rule"
in_px ip -6 rule del priority 7

# Same priority as our allow rule, but inserted first: evaluated before the
# unreachable rule, so it counts.
in_px "$SIDECAR" unlock >/dev/null 2>&1
in_px ip rule add priority 100 from all lookup main || die "prio 100 sabotage"
out=$(check)
expect_eq 1 $? "allow-all at our own priority: lockdown-check fails"
expect_match "a rule at priority 100 " "$out" "the failure names it"
in_px ip rule del priority 100 lookup main

# A goto that jumps over the unreachable rule.
in_px ip rule add priority 60 goto 32766 || die "goto sabotage"
out=$(check)
expect_eq 1 $? "goto past the lock-down: lockdown-check fails"
expect_match "a rule at priority 60 " "$out" "the failure names the goto"
in_px ip rule del priority 60

# A harmless rule before ours (blackhole) is accepted.
in_px ip rule add priority 70 to 10.200.1.99 blackhole || die "blackhole rule"
check >/dev/null
expect_eq 0 $? "a blackhole rule before ours is harmless"
in_px ip rule del priority 70

# The live probe: the rules are right, but a probe as the proxy uid gets a
# route, and the sidecar must refuse on the probe's word alone.
out=$(in_px "$SIDECAR" lockdown-check --user $PROXY_UID --probe-uid $PROXY_UID \
	--probe-addr 10.200.1.77 2>&1)
expect_eq 1 $? "a probe that gets through: lockdown-check fails"
expect_match "check passed: IPv4 rules read back in order" "$out" "(the read-back passed)"
expect_match "check failed: uid $PROXY_UID reached for default gateway $WORLD_UP4 \(tcp\)" \
	"$out" "the failure names the probe that got through"
exit 0
