/*
 * sidecar/escape.h: the live proof that the packet filter holds.
 *
 * sidecar/probe.h shows that routing gives another uid ENETUNREACH for an
 * ordinary connect().  This probe tries what routing cannot stop, as
 * another uid with no capabilities, on each interface but lo: TCP and UDP
 * bound to the interface (SO_BINDTODEVICE), UDP with IP_UNICAST_IF and
 * IPV6_UNICAST_IF, limited and directed broadcast (SO_BROADCAST), IPv4 and
 * IPv6 multicast, group joins (whose IGMP and MLD reports the kernel sends
 * for it); and, with CAP_NET_RAW kept for that child only, a frame written
 * by an AF_PACKET socket, with and without PACKET_QDISC_BYPASS.  Every
 * payload carries a random nonce.
 *
 * What leaves is observed two ways.  The filter's drop counters are read
 * after each attempt (CAP_NET_ADMIN, which the sidecar has).  When the
 * sidecar also holds CAP_NET_RAW, it captures each interface's outgoing
 * frames with packet sockets of its own, which the kernel feeds after the
 * egress hook, so a capture sees only what really left, and looks for the
 * nonce, the probe's TCP ports and its groups; a datagram of the proxy uid
 * to the default gateway checks that the capture sees what does leave.
 *
 * One door stays open and is only reported: an AF_XDP socket (CAP_NET_RAW)
 * in copy mode transmits past every netfilter hook.
 */
#ifndef POSTERN_SIDECAR_ESCAPE_H
#define POSTERN_SIDECAR_ESCAPE_H

#include <sys/types.h>

#include "sidecar/nft.h"

struct sc_escape_opts {
	uid_t proxy_uid;
	uid_t probe_uid;
	gid_t probe_gid;
	unsigned families;            /* SC_FAM_* bits */
	const struct sc_nft_ifaces *ifs;     /* the interfaces to probe */
	const struct sc_nft_ifaces *nft_ifs; /* those with an egress chain */
	int no_egress;                /* the kernel has no egress hook */
	/* Unicast destinations: the default gateways when there are, else
	 * these (numeric, may be NULL). */
	const char *addr4, *addr6;
};

/*
 * Run the escape probe in the caller's network namespace (the caller is
 * root with CAP_NET_ADMIN, SETUID, SETGID; CAP_NET_RAW is used when held).
 * Logs one "check passed: ..." or "check failed: ..." line per attempt and
 * interface, and "note: ..." lines for what could not be tried.  Returns 0
 * when nothing left, -EPERM when something did (or the capture saw nothing
 * at all, not even the proxy's datagram), another negative errno when the
 * probe could not run.
 */
int sc_escape_run(const struct sc_escape_opts *opts);

#endif
