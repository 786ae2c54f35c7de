#!/bin/sh
# sidecar-escape.sh: after lockdown-check, a process of another uid in the
# pod's namespace (the world's px) sends nothing out of its interface, by
# any of the ways routing alone let through: TCP and UDP bound to the
# device, IP_UNICAST_IF and IPV6_UNICAST_IF, directed and limited
# broadcast, IPv4 and IPv6 multicast, group joins (IGMP/MLD reports), and
# with CAP_NET_RAW an AF_PACKET frame, with and without
# PACKET_QDISC_BYPASS.  The witness is a capture on the FAR side of the
# veth (in up), so it sees only what really left; the proxy uid still gets
# through, and unlock opens the door again.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
command -v nft >/dev/null 2>&1 || skip "nft (nftables) is not installed"
sc_world_up
sc_escape_tools
sc_capture_start

# What an agent with no capability tries, and what it tries with CAP_NET_RAW.
PLAIN="tcp-bind4 tcp-bind6 udp-bind4 udp-bind6 udp-unicast-if4 udp-unicast-if6
 bcast-directed bcast-limited mcast-224.0.0.251 mcast-239.1.2.3 mcast-ff02::1
 mcast-ff0e::1234 join4 join6"
RAW="packet packet-bypass"
# The world's broadcast address of px's /24.
BCAST=10.200.1.255

# escape NONCE UID [setpriv capability options]: every kind as UID.
escape() {
	local n u
	n=$1 u=$2
	shift 2
	# shellcheck disable=SC2086
	in_px setpriv --reuid "$u" --regid "$u" --clear-groups "$@" \
		"$WORLD_PYTHON" "$WORLD_DIR/escape.py" "$n" veth-up "$WORLD_UP4" "$WORLD_UP6" \
		"$BCAST" $KINDS 2>&1
}
no_caps="--inh-caps=-all --bounding-set=-all --no-new-privs"
net_raw="--inh-caps=-all,+net_raw --ambient-caps=-all,+net_raw --bounding-set=-all,+net_raw"

# Before the lock-down the world carries each kind to the far side, so the
# silence below is the filter's doing, not the world's.
KINDS="$PLAIN"
# shellcheck disable=SC2086
escape pn-before $AGENT_UID $no_caps >/dev/null
KINDS="$RAW"
# shellcheck disable=SC2086
escape pn-before $AGENT_UID $net_raw >/dev/null
for k in udp-bind4 udp-bind6 udp-unicast-if4 udp-unicast-if6 bcast-directed bcast-limited \
	mcast-224.0.0.251 mcast-239.1.2.3 mcast-ff02::1 mcast-ff0e::1234 packet packet-bypass; do
	expect_ne 0 "$(far_seen "^nonce pn-before $k\$")" "before: $k reaches the far side"
done
expect_ne 0 "$(far_seen '^tcp-syn 47001$')" "before: a v4 SYN reaches the far side"
expect_ne 0 "$(far_seen '^igmp .*ef4d4d4d')" "before: the IGMP report of a join reaches the far side"
expect_ne 0 "$(far_seen '^mld .*ff050000000000000000000000007777')" \
	"before: the MLD report of a join reaches the far side"

: >"$WORLD_DIR/far.txt"    # from here on, count afresh
out=$(in_px "$SIDECAR" lockdown-check --user $PROXY_UID \
	--probe-addr 10.200.1.77 --probe-addr fd00:200:1::77 2>&1)
expect_eq 0 $? "lockdown-check succeeds"
diag "$out"
expect_match "lock-down proven" "$out" "lockdown-check says the lock-down is proven"
expect_no_match "check failed" "$out" "no check failed"
expect_match "warning: NOT held by the lock-down: .*AF_XDP" "$out" \
	"lockdown-check says loudly what it cannot hold (AF_XDP with CAP_NET_RAW)"
for what in "inet postern output drops every packet" "netdev postern egress on veth-up" \
	"TCP bound to veth-up \(SO_BINDTODEVICE\) to $WORLD_UP4" \
	"UDP with veth-up as unicast interface \(IP_UNICAST_IF\)" \
	"UDP with veth-up as unicast interface \(IPV6_UNICAST_IF\)" \
	"UDP to limited broadcast 255.255.255.255 bound to veth-up" \
	"UDP to directed broadcast $BCAST" "UDP to multicast 224.0.0.251" \
	"UDP to multicast 239.1.2.3" "UDP to multicast ff02::1" "UDP to multicast ff0e::1234" \
	"IGMP report" "MLD report" "AF_PACKET socket on veth-up, with CAP_NET_RAW" \
	"AF_PACKET socket on veth-up \(PACKET_QDISC_BYPASS\)" \
	"the capture saw proxy uid $PROXY_UID's UDP to the default gateway"; do
	expect_match "check passed: .*$what" "$out" "lockdown-check proves: $what"
done
# The agent, with no capability, then with CAP_NET_RAW: nothing arrives.
KINDS="$PLAIN"
# shellcheck disable=SC2086
escape pn-agent $AGENT_UID $no_caps >"$WORLD_DIR/agent.out"
diag "$(cat "$WORLD_DIR/agent.out")"
KINDS="$RAW"
# shellcheck disable=SC2086
escape pn-raw $AGENT_UID $net_raw >"$WORLD_DIR/raw.out"
diag "$(cat "$WORLD_DIR/raw.out")"
expect_match "packet (sent|ENOBUFS)" "$(cat "$WORLD_DIR/raw.out")" \
	"(the agent did hold CAP_NET_RAW: its packet socket opened)"
for k in $PLAIN $RAW; do
	expect_eq 0 "$(far_seen "^nonce pn-(agent|raw) $k\$")" "agent: $k does not reach the far side"
done
expect_eq 0 "$(far_seen '^tcp-syn 4700[12]$')" "agent: no SYN of the agent's ports arrives"
expect_eq 0 "$(far_seen '^igmp .*ef4d4d4d')" "agent: no IGMP report of its join arrives"
expect_eq 0 "$(far_seen '^mld .*ff050000000000000000000000007777')" \
	"agent: no MLD report of its join arrives"
expect_eq 0 "$(far_seen '^frame 88b5')" "agent: no frame of its packet socket arrives"
# Root's sockets in the pod are locked too (only the proxy uid leaves).
KINDS="udp-bind4 bcast-limited mcast-239.1.2.3"
# shellcheck disable=SC2086
escape pn-root 0 >/dev/null
expect_eq 0 "$(far_seen '^nonce pn-root ')" "root in the pod: nothing arrives either"

# The proxy uid still gets out, the same ways.
KINDS="udp4 udp6 udp-bind4 mcast-239.1.2.3"
# shellcheck disable=SC2086
escape pn-proxy $PROXY_UID $no_caps >/dev/null
for k in $KINDS; do
	expect_ne 0 "$(far_seen "^nonce pn-proxy $k\$")" "proxy uid: $k reaches the far side"
done

# Without CAP_NET_RAW (the sidecar container may lack it) the sidecar still
# proves the lock-down, by the drop counters alone, and says what it could
# not try.
out=$(in_px setpriv --inh-caps=-net_raw --bounding-set=-net_raw "$SIDECAR" lockdown-check \
	--user $PROXY_UID --probe-addr 10.200.1.77 2>&1)
expect_eq 0 $? "without CAP_NET_RAW: lockdown-check succeeds"
expect_match "note: no CAP_NET_RAW" "$out" "without CAP_NET_RAW: it says so"
expect_match "check passed: uid 65533: UDP to limited broadcast .*dropped by the filter \(1 packet\)\$" \
	"$out" "without CAP_NET_RAW: the counters prove the broadcast was dropped"
expect_no_match "AF_PACKET" "$out" "without CAP_NET_RAW: no packet-socket frame is claimed"

# Running it again replaces the tables (no second copy), atomically.
in_px "$SIDECAR" lockdown-check --user $PROXY_UID --probe-addr 10.200.1.77 >/dev/null 2>&1
expect_eq 0 $? "lockdown-check again"
expect_eq 2 "$(in_px nft list tables | grep -c 'postern$')" "two tables of ours, not four"
expect_eq 1 "$(in_px nft list table netdev postern | grep -c 'hook egress device "veth-up"')" \
	"one egress chain for the one interface"

# unlock removes both tables: the same escapes arrive again.
in_px "$SIDECAR" unlock >/dev/null 2>&1
expect_eq 0 $? "unlock succeeds"
expect_eq 0 "$(in_px nft list tables | grep -c postern)" "unlock removed the tables"
KINDS="udp-bind4 bcast-limited"
# shellcheck disable=SC2086
escape pn-unlocked $AGENT_UID $no_caps >/dev/null
expect_ne 0 "$(far_seen '^nonce pn-unlocked udp-bind4$')" "after unlock the agent gets out again"
exit 0
