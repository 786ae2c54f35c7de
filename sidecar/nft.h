/*
 * sidecar/nft.h: the egress lock-down by packet filter (nftables).
 *
 * Policy routing (sidecar/rules.h) only decides where a packet is routed;
 * a socket bound to an interface (SO_BINDTODEVICE, IP_UNICAST_IF) or sending
 * to a broadcast or multicast address is served by the local table or treats
 * a failed lookup as "on link" and leaves anyway.  A filter on the output
 * path sees the socket's owner and can drop.  The sidecar keeps two tables,
 * both named "postern":
 *
 *   table inet postern
 *     chain output  { type filter hook output priority -300; policy accept;
 *       oif 1 (lo) accept
 *       meta nfproto ipv4 meta l4proto igmp counter drop
 *       meta nfproto ipv6 meta l4proto ipv6-icmp icmpv6 type 131 counter drop
 *       ... the same for 132 and 143
 *       meta skuid PROXY accept
 *       meta skuid != PROXY counter drop }
 *   table netdev postern
 *     chain egress-IFNAME { type filter hook egress device IFNAME priority -300;
 *       meta skuid PROXY accept
 *       meta skuid != PROXY counter drop }   (one per interface but lo)
 *
 * A packet of no user socket (ARP, neighbour discovery, TCP resets, ICMP
 * errors: the kernel's own sockets have no file) makes "meta skuid" break,
 * so it falls through and the policy accepts it.  The exceptions are IGMP
 * and MLD reports: they too come from kernel sockets, but an agent chooses
 * their content by joining groups, so they are dropped for everyone.  The
 * egress chains see frames of AF_PACKET sockets (also with
 * PACKET_QDISC_BYPASS, Linux 5.17 and later), which never pass "output".
 *
 * The messages are built and parsed with libnl-3's generic message and
 * attribute API (nlmsg_*, nla_*, nla_policy), not with libnftnl: libnftnl
 * needs libmnl, and Debian 12's libmnl-dev ships no static archive, so the
 * FROM-scratch image could not link it.  nfnetlink is a small, stable
 * format (<linux/netfilter/nf_tables.h>).
 */
#ifndef POSTERN_SIDECAR_NFT_H
#define POSTERN_SIDECAR_NFT_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SC_NFT_TABLE "postern"
#define SC_NFT_PRIO (-300)
#define SC_NFT_MAX_EXPR 12
#define SC_NFT_MAX_IF 32

/* The expressions the sidecar writes; anything else reads back as
 * SC_NX_OTHER and makes the rule "not ours". */
enum sc_nft_kind {
	SC_NX_OTHER = 0,
	SC_NX_META,
	SC_NX_CMP,
	SC_NX_IMM,
	SC_NX_COUNTER,
	SC_NX_PAYLOAD,
};

/* One expression, as written or as read back.  Fields not used by KIND
 * are zero. */
struct sc_nft_expr {
	int kind;
	uint32_t key;           /* meta: NFT_META_* */
	uint32_t reg;           /* meta/payload dreg, cmp sreg, immediate dreg */
	uint32_t op;            /* cmp: NFT_CMP_* */
	uint8_t data[16];       /* cmp: the value, in register byte order */
	uint32_t dlen;
	int32_t verdict;        /* immediate: NF_ACCEPT, NF_DROP, ... */
	int has_verdict;
	uint32_t base, offset, len; /* payload */
	uint64_t packets, bytes;    /* counter, read back only */
};

/* One rule of a GETRULE dump. */
struct sc_nft_rule {
	int family;             /* nfgenmsg family: NFPROTO_INET, NFPROTO_NETDEV */
	char table[64];
	char chain[64];
	size_t n;
	struct sc_nft_expr e[SC_NFT_MAX_EXPR];
	int other;              /* more than SC_NFT_MAX_EXPR, or an unknown part */
};

/* One chain of a GETCHAIN dump. */
struct sc_nft_chain {
	int family;
	char table[64];
	char name[64];
	int has_hook;
	uint32_t hooknum;
	int32_t priority;
	char dev[IFNAMSIZ];
	int has_policy;
	uint32_t policy;
	char type[16];
};

/* One table of a GETTABLE dump. */
struct sc_nft_table {
	int family;
	char name[64];
	uint32_t flags;         /* NFT_TABLE_F_DORMANT, ... */
};

/*
 * Parse one nfnetlink message NLH (nlmsg_len within the caller's buffer;
 * everything inside untrusted; NLH is only read) of a GETRULE, GETCHAIN or
 * GETTABLE dump into *R, *C or *T.  Every attribute length is checked
 * before it is read; names longer than their field, nesting past what
 * nf_tables uses, attributes of the wrong size, bytes left over after the
 * last attribute, and an attribute read here that appears twice are
 * -EBADMSG.  Returns 1 when filled, 0 when NLH is not a message of that
 * kind (skip it), -EBADMSG when malformed.
 */
struct nlmsghdr;
int sc_nft_parse_rule(struct nlmsghdr *nlh, struct sc_nft_rule *r);
int sc_nft_parse_chain(struct nlmsghdr *nlh, struct sc_nft_chain *c);
int sc_nft_parse_table(struct nlmsghdr *nlh, struct sc_nft_table *t);

/* The network interfaces of the namespace but lo, as names. */
struct sc_nft_ifaces {
	size_t n;
	char name[SC_NFT_MAX_IF][IFNAMSIZ];
	int index[SC_NFT_MAX_IF];
};

/*
 * Fill *IFS with every interface of the caller's namespace but loopback.
 * Returns 0, -E2BIG when there are more than SC_NFT_MAX_IF, or a negative
 * errno.
 */
int sc_nft_ifaces_get(struct sc_nft_ifaces *ifs);

/*
 * Replace both tables for PROXY_UID and the interfaces IFS in one nfnetlink
 * batch (create, delete, create again), so the kernel swaps them atomically:
 * there is never a moment without our drop rules, and a restart never stacks
 * tables.  Returns 0, or a negative errno after logging the kernel's answer.
 */
int sc_nft_install(uid_t proxy_uid, const struct sc_nft_ifaces *ifs);

/*
 * Delete both tables (a missing one is fine).  Returns 0 or a negative errno.
 */
int sc_nft_remove(void);

/* Drop counters of our tables, summed: the inet output chain's and every
 * egress chain's. */
struct sc_nft_counts {
	uint64_t output_drops;
	uint64_t egress_drops;
};

/*
 * Read both tables back and check that they are exactly what
 * sc_nft_install() writes for PROXY_UID and IFS: not dormant, every chain
 * hooked where it must be with an accept policy, an egress chain for each
 * interface in IFS, the rules and nothing else.  Logs one "check passed" or
 * "check failed" line per table.  When COUNTS is not NULL it receives the
 * drop counters.  Returns 0, -EPERM when a check failed, another negative
 * errno when the read-back failed.
 */
int sc_nft_verify(uid_t proxy_uid, const struct sc_nft_ifaces *ifs,
    struct sc_nft_counts *counts, int quiet);

/*
 * Build the expected rules of chain CHAIN ("output" or "egress-IFNAME") for
 * PROXY_UID into R (at most MAX); returns how many.  Exposed for the fuzz
 * target, which compares what it parsed against them.
 */
size_t sc_nft_expected(const char *chain, uid_t proxy_uid, struct sc_nft_rule *r,
    size_t max);

/* Nonzero when rule A has the same expressions as rule B, counters aside. */
int sc_nft_rule_equal(const struct sc_nft_rule *a, const struct sc_nft_rule *b);

#endif
