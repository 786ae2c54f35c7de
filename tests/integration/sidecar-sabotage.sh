#!/bin/sh
# sidecar-sabotage.sh: the sidecar refuses to start the proxy, and says
# which check failed, when the lock-down does not hold: a rule inserted
# above ours that routes every uid, one at our own priority before ours, a
# goto past the unreachable rule, and a live probe that gets through (the
# probe uid set to the proxy uid, which the read-back alone cannot catch);
# an nftables table of our name that another process owns (ours cannot
# replace it), and a probe whose escapes the capture sees leave.
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
# The escape probe runs too and sees its own frames leave (as the proxy
# uid they are let out): the capture is a witness, not a formality.
expect_match "check failed: uid $PROXY_UID: UDP bound to veth-up \(SO_BINDTODEVICE\) .*LEFT veth-up" \
	"$out" "the escape probe saw a device-bound datagram leave"
expect_match "check failed: uid $PROXY_UID: UDP to limited broadcast .*LEFT veth-up" \
	"$out" "the escape probe saw a broadcast leave"

# nftables: whatever is in our tables is replaced, so a table altered or
# emptied before the start is repaired, not trusted...
if command -v nft >/dev/null 2>&1; then
	in_px nft delete rule inet postern output handle \
		"$(in_px nft -a list chain inet postern output | sed -n 's/.*counter.*drop # handle //p' | tail -1)" ||
		die "cannot delete our drop rule"
	in_px nft add table inet postern '{ flags dormant; }' || die "cannot make the table dormant"
	in_px nft delete table netdev postern || die "cannot delete the netdev table"
	check >/dev/null
	expect_eq 0 $? "an altered, dormant table and a missing one: repaired, and proven"
	expect_no_match "dormant" "$(in_px nft list table inet postern)" "the table is active again"
	expect_match "meta skuid != $PROXY_UID counter packets [0-9]+ bytes [0-9]+ drop" \
		"$(in_px nft list chain inet postern output)" "the drop rule is back"
	expect_match "hook egress device \"veth-up\"" "$(in_px nft list table netdev postern)" \
		"the egress chain is back"
	# ...but a table of our name that another process owns (NFT_TABLE_F_OWNER)
	# cannot be replaced, and then nothing is served.
	in_px "$SIDECAR" unlock >/dev/null 2>&1
	mkfifo "$WORLD_DIR/nft.in"
	in_px nft -i <"$WORLD_DIR/nft.in" >/dev/null 2>&1 &
	nft_pid=$!
	exec 7>"$WORLD_DIR/nft.in"
	echo 'add table inet postern { flags owner; }' >&7
	i=0
	while ! in_px nft list tables | grep -q 'inet postern' && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	out=$(in_px "$SIDECAR" --user $PROXY_UID --probe-addr 10.200.1.77 2>&1)
	expect_eq 1 $? "a table of our name owned by another process: the sidecar refuses"
	expect_match "check failed: cannot install the nftables lock-down" "$out" "and says why"
	expect_match "refusing to start the proxy" "$out" "and does not serve"
	exec 7>&-
	wait $nft_pid
fi
exit 0
