/*
 * sidecar/rules.h: the egress lock-down by policy routing.
 *
 * For IPv4 and IPv6 the sidecar keeps two rules, built with libnl's message
 * API because libnl-route-3 has no setter for FRA_UID_RANGE:
 *
 *   priority SC_RULE_PRIO_ALLOW: uidrange PROXY-PROXY lookup main
 *   priority SC_RULE_PRIO_DENY:  (everything) unreachable
 *
 * The kernel's own priority-0 "lookup local" rule stays in front of both, so
 * loopback keeps working for every uid; every other socket that is not the
 * proxy's gets ENETUNREACH at connect() or sendto() time.  A uid, not a
 * fwmark, is the selector because SO_MARK needs only CAP_NET_RAW, which
 * container runtimes grant by default.
 */
#ifndef POSTERN_SIDECAR_RULES_H
#define POSTERN_SIDECAR_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SC_RULE_PRIO_ALLOW 100u
#define SC_RULE_PRIO_DENY 101u

/* Address families, as a bit mask. */
#define SC_FAM_V4 0x1u
#define SC_FAM_V6 0x2u

/*
 * One policy-routing rule as read back from the kernel (RTM_GETRULE), in the
 * kernel's evaluation order.  A plain record, filled by sc_rules_dump() or by
 * a test.
 */
struct sc_rule {
	int family;          /* AF_INET or AF_INET6 */
	uint32_t priority;   /* FRA_PRIORITY, 0 when absent */
	uint32_t table;      /* FRA_TABLE, else fib_rule_hdr.table */
	uint8_t action;      /* FR_ACT_* */
	uint32_t flags;      /* fib_rule_hdr.flags (FIB_RULE_INVERT, ...) */
	int has_uid_range;   /* FRA_UID_RANGE present */
	uint32_t uid_start, uid_end;
	/* Nonzero when the rule matches on anything but the uid: source or
	 * destination prefix, tos, interface, fwmark, port, protocol, tunnel
	 * id, l3mdev, realm, or an attribute this code does not know. */
	int has_selector;
};

/*
 * Parse one netlink message NLH of a RTM_GETRULE dump into *R.  NLH's
 * nlmsg_len must lie within the caller's buffer (libnl checks that before
 * any callback); everything inside it is untrusted and validated: the
 * header length, each attribute's length (FRA_UID_RANGE exactly its
 * struct), and unknown attributes count as selectors.  Returns 1 when *R
 * was filled, 0 when NLH is not a rule of FAMILY (skip it), -EBADMSG when
 * it is malformed.
 */
struct nlmsghdr;
int sc_rule_parse(struct nlmsghdr *nlh, int family, struct sc_rule *r);

/*
 * Install the two rules for each family in FAMILIES (SC_FAM_* bits) for
 * sockets of PROXY_UID, idempotently: a rule already present is kept (the
 * add uses NLM_F_EXCL), then rules of our shape at our priorities that are
 * stale (another uid) or duplicated are deleted, so a restart never stacks
 * rules and there is no window without the unreachable rule.  A family the
 * kernel does not support (EAFNOSUPPORT) is skipped and left out of
 * *INSTALLED, which receives the families that now carry the rules (may be
 * NULL).  Returns 0, or a negative errno after logging which rule failed.
 */
int sc_rules_install(uid_t proxy_uid, unsigned families, unsigned *installed);

/*
 * Delete every rule of our shape at our priorities (any uid) in FAMILIES.
 * Returns 0 (also when there was nothing to delete) or a negative errno.
 */
int sc_rules_remove(unsigned families);

/*
 * Read the rules of FAMILY (AF_INET or AF_INET6) back from the kernel into a
 * new array *OUT of *N records in evaluation order; the caller frees *OUT
 * with free().  Netlink replies are validated attribute by attribute; a
 * malformed reply is an error.  Returns 0 or a negative errno.
 */
int sc_rules_dump(int family, struct sc_rule **out, size_t *n);

/*
 * Decide whether RULES (N records of FAMILY, in evaluation order) hold
 * the lock-down for PROXY_UID: exactly one allow rule of our shape and one
 * unreachable rule of our shape, the allow rule first, and no rule before
 * the unreachable one that could route a socket of another uid (only the
 * local table, rules confined to PROXY_UID, and unreachable, blackhole,
 * prohibit and nop rules may come first).  Returns 0, or -EPERM and writes
 * one sentence saying which check failed into WHY (SIZE bytes).  Pure: no
 * system calls, so the unit test drives it with made-up tables.
 */
int sc_rules_check(int family, const struct sc_rule *rules, size_t n,
    uid_t proxy_uid, char *why, size_t size);

/*
 * Read back and check both rule sets for the families in FAMILIES, logging
 * each failed check.  Returns 0 when every family passes, -EPERM when a
 * check failed, another negative errno when the read-back failed.
 */
int sc_rules_verify(uid_t proxy_uid, unsigned families);

#endif
