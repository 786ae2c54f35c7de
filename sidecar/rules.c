/*
 * sidecar/rules.c: policy-routing lock-down with libnl's message API.
 *
 * libnl-route-3 (3.7) has no setter for FRA_UID_RANGE and does not parse it
 * in dumps, so the rules are built and read as raw RTM_*RULE messages
 * (struct fib_rule_hdr followed by FRA_* attributes, <linux/fib_rules.h>),
 * still through libnl's socket, message and attribute-validation code.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/errno.h>

#include "bridge/nlerr.h"
#include "sidecar/log.h"
#include "sidecar/rules.h"

/* Bound on the rules read back, so a hostile or runaway table cannot make
 * the sidecar allocate without limit. */
#define SC_RULES_MAX 4096

/*
 * Attributes that only say where a matching packet goes or describe the rule
 * (not which packets match).  Every other attribute, including those newer
 * than our headers, counts as a selector: for our unreachable rule a selector
 * would narrow it, so unknown means "not ours" (deny by default).
 */
static int
sc_attr_is_selector(int type)
{
	switch (type) {
	case FRA_UNSPEC:
	case FRA_PRIORITY:
	case FRA_TABLE:
	case FRA_PROTOCOL:
	case FRA_SUPPRESS_PREFIXLEN:
	case FRA_SUPPRESS_IFGROUP:
	case FRA_GOTO:
	case FRA_PAD:
	case FRA_UID_RANGE: /* recorded on its own */
		return 0;
	default:
		return 1;
	}
}

static const char *
sc_family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

static int
sc_nl_open(struct nl_sock **out)
{
	struct nl_sock *sk;
	int err;

	*out = NULL;
	sk = nl_socket_alloc();
	if (sk == NULL)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0) {
		sc_logx("netlink: cannot connect: %s", nl_geterror(err));
		nl_socket_free(sk);
		return br_nlerr(err);
	}
	*out = sk;
	return 0;
}

/*
 * Send one RTM_NEWRULE or RTM_DELRULE describing R (our two shapes only need
 * priority, table, action and the uid range) and wait for the kernel's ack.
 */
static int
sc_rule_send(struct nl_sock *sk, int type, int nlflags, const struct sc_rule *r)
{
	struct fib_rule_hdr frh;
	struct fib_rule_uid_range range;
	struct nl_msg *msg;
	int err;

	msg = nlmsg_alloc_simple(type, nlflags);
	if (msg == NULL)
		return -ENOMEM;
	memset(&frh, 0, sizeof(frh));
	frh.family = (uint8_t)r->family;
	frh.action = r->action;
	/* Tables above 255 only fit FRA_TABLE; the header keeps the low ones
	 * for old readers, like iproute2 does. */
	frh.table = r->table < 256 ? (uint8_t)r->table : RT_TABLE_UNSPEC;
	err = nlmsg_append(msg, &frh, sizeof(frh), NLMSG_ALIGNTO);
	if (err < 0)
		goto nlfail;
	err = nla_put_u32(msg, FRA_PRIORITY, r->priority);
	if (err < 0)
		goto nlfail;
	if (r->action == FR_ACT_TO_TBL) {
		err = nla_put_u32(msg, FRA_TABLE, r->table);
		if (err < 0)
			goto nlfail;
	}
	if (r->has_uid_range) {
		range.start = r->uid_start;
		range.end = r->uid_end;
		err = nla_put(msg, FRA_UID_RANGE, sizeof(range), &range);
		if (err < 0)
			goto nlfail;
	}
	err = nl_send_auto(sk, msg);
	if (err < 0)
		goto nlfail;
	err = nl_wait_for_ack(sk);
	if (err < 0)
		goto nlfail;
	err = 0;
	goto out;
nlfail:
	err = br_nlerr(err);
out:
	nlmsg_free(msg);
	return err;
}

struct sc_dump_ctx {
	int family;
	struct sc_rule *v;
	size_t n, cap;
	int err;
};

static struct nla_policy sc_rule_policy[FRA_MAX + 1] = {
	[FRA_PRIORITY] = { .type = NLA_U32 },
	[FRA_TABLE] = { .type = NLA_U32 },
	[FRA_UID_RANGE] = { .minlen = sizeof(struct fib_rule_uid_range) },
};

int
sc_rule_parse(struct nlmsghdr *nlh, int family, struct sc_rule *r)
{
	struct nlattr *tb[FRA_MAX + 1];
	struct fib_rule_hdr *frh;
	struct fib_rule_uid_range range;
	struct nlattr *a;
	int rem;

	if (nlh->nlmsg_type != RTM_NEWRULE)
		return 0;
	if (!nlmsg_valid_hdr(nlh, sizeof(*frh)))
		return -EBADMSG;
	frh = nlmsg_data(nlh);
	if (frh->family != family)
		return 0;
	if (nlmsg_parse(nlh, sizeof(*frh), tb, FRA_MAX, sc_rule_policy) < 0)
		return -EBADMSG;
	memset(r, 0, sizeof(*r));
	r->family = frh->family;
	r->action = frh->action;
	r->flags = frh->flags;
	r->table = tb[FRA_TABLE] ? nla_get_u32(tb[FRA_TABLE]) : frh->table;
	r->priority = tb[FRA_PRIORITY] ? nla_get_u32(tb[FRA_PRIORITY]) : 0;
	if (tb[FRA_UID_RANGE]) {
		if (nla_len(tb[FRA_UID_RANGE]) != (int)sizeof(range))
			return -EBADMSG;
		memcpy(&range, nla_data(tb[FRA_UID_RANGE]), sizeof(range));
		r->has_uid_range = 1;
		r->uid_start = range.start;
		r->uid_end = range.end;
	}
	if (frh->src_len || frh->dst_len || frh->tos)
		r->has_selector = 1;
	/* Walk the raw attributes too: nlmsg_parse() silently drops types
	 * above FRA_MAX of our headers, and those must count as selectors. */
	nlmsg_for_each_attr(a, nlh, sizeof(*frh), rem) {
		if (sc_attr_is_selector(nla_type(a)))
			r->has_selector = 1;
	}
	return 1;
}

/* One message of a dump; a reply that does not parse is fatal to the
 * read-back: a rule we cannot understand is a rule we cannot vouch for. */
static int
sc_dump_cb(struct nl_msg *msg, void *arg)
{
	struct sc_dump_ctx *ctx = arg;
	struct sc_rule r;
	int rc;

	rc = sc_rule_parse(nlmsg_hdr(msg), ctx->family, &r);
	if (rc < 0) {
		ctx->err = rc;
		return NL_STOP;
	}
	if (rc == 0)
		return NL_SKIP;
	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 16;
		struct sc_rule *v;

		if (ctx->n >= SC_RULES_MAX) {
			ctx->err = -E2BIG;
			return NL_STOP;
		}
		v = realloc(ctx->v, cap * sizeof(*v));
		if (v == NULL) {
			ctx->err = -ENOMEM;
			return NL_STOP;
		}
		ctx->v = v;
		ctx->cap = cap;
	}
	ctx->v[ctx->n++] = r;
	return NL_OK;
}

int
sc_rules_dump(int family, struct sc_rule **out, size_t *n)
{
	struct sc_dump_ctx ctx;
	struct fib_rule_hdr frh;
	struct nl_sock *sk = NULL;
	int err;

	*out = NULL;
	*n = 0;
	memset(&ctx, 0, sizeof(ctx));
	ctx.family = family;
	err = sc_nl_open(&sk);
	if (err < 0)
		goto out;
	err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, sc_dump_cb, &ctx);
	if (err < 0) {
		err = br_nlerr(err);
		goto out;
	}
	memset(&frh, 0, sizeof(frh));
	frh.family = (uint8_t)family;
	err = nl_send_simple(sk, RTM_GETRULE, NLM_F_DUMP, &frh, sizeof(frh));
	if (err < 0) {
		err = br_nlerr(err);
		goto out;
	}
	err = nl_recvmsgs_default(sk);
	if (ctx.err < 0) {
		err = ctx.err;
		goto out;
	}
	if (err < 0) {
		err = br_nlerr(err);
		goto out;
	}
	*out = ctx.v;
	*n = ctx.n;
	ctx.v = NULL;
	err = 0;
out:
	free(ctx.v);
	nl_socket_free(sk);
	return err;
}

static void
sc_rule_allow(struct sc_rule *r, int family, uid_t uid)
{
	memset(r, 0, sizeof(*r));
	r->family = family;
	r->priority = SC_RULE_PRIO_ALLOW;
	r->table = RT_TABLE_MAIN;
	r->action = FR_ACT_TO_TBL;
	r->has_uid_range = 1;
	r->uid_start = (uint32_t)uid;
	r->uid_end = (uint32_t)uid;
}

static void
sc_rule_deny(struct sc_rule *r, int family)
{
	memset(r, 0, sizeof(*r));
	r->family = family;
	r->priority = SC_RULE_PRIO_DENY;
	r->table = RT_TABLE_UNSPEC;
	r->action = FR_ACT_UNREACHABLE;
}

/* Our allow shape, for any uid (a stale rule of an earlier proxy uid too). */
static int
sc_is_allow_shape(const struct sc_rule *r)
{
	return r->priority == SC_RULE_PRIO_ALLOW && r->action == FR_ACT_TO_TBL &&
	    r->table == RT_TABLE_MAIN && r->has_uid_range && !r->has_selector &&
	    r->flags == 0;
}

static int
sc_is_allow(const struct sc_rule *r, uid_t uid)
{
	return sc_is_allow_shape(r) && r->uid_start == (uint32_t)uid &&
	    r->uid_end == (uint32_t)uid;
}

static int
sc_is_deny(const struct sc_rule *r)
{
	return r->priority == SC_RULE_PRIO_DENY &&
	    r->action == FR_ACT_UNREACHABLE && !r->has_uid_range &&
	    !r->has_selector && r->flags == 0;
}

/*
 * Rules that may sit before our unreachable rule without letting another
 * uid out: lookups of the local table (loopback and our own addresses, the
 * kernel's priority-0 rule), lookups confined to the proxy uid, rules that
 * refuse, and rules that do nothing.
 */
static int
sc_is_harmless(const struct sc_rule *r, uid_t uid)
{
	switch (r->action) {
	case FR_ACT_UNREACHABLE:
	case FR_ACT_BLACKHOLE:
	case FR_ACT_PROHIBIT:
	case FR_ACT_NOP:
		return 1;
	case FR_ACT_TO_TBL:
		if (r->table == RT_TABLE_LOCAL)
			return 1;
		/* An inverted uid range matches every other uid. */
		return r->has_uid_range && !(r->flags & FIB_RULE_INVERT) &&
		    r->uid_start == (uint32_t)uid && r->uid_end == (uint32_t)uid;
	default:
		/* FR_ACT_GOTO could jump past the unreachable rule. */
		return 0;
	}
}

int
sc_rules_check(int family, const struct sc_rule *rules, size_t n,
    uid_t proxy_uid, char *why, size_t size)
{
	size_t i, n_allow = 0, n_deny = 0, first_deny = n, first_allow = n;
	const char *fam;

	if (size > 0)
		why[0] = '\0';
	fam = sc_family_name(family);
	for (i = 0; i < n; i++) {
		if (sc_is_deny(&rules[i])) {
			if (n_deny++ == 0)
				first_deny = i;
		} else if (sc_is_allow(&rules[i], proxy_uid)) {
			if (n_allow++ == 0)
				first_allow = i;
		}
	}
	if (n_deny == 0) {
		snprintf(why, size, "%s: the unreachable rule at priority %u is missing",
		    fam, SC_RULE_PRIO_DENY);
		return -EPERM;
	}
	if (n_allow == 0) {
		snprintf(why, size,
		    "%s: the rule for uid %u to the main table at priority %u is missing",
		    fam, (unsigned)proxy_uid, SC_RULE_PRIO_ALLOW);
		return -EPERM;
	}
	if (n_allow > 1 || n_deny > 1) {
		snprintf(why, size, "%s: our rules are duplicated (%zu allow, %zu unreachable)",
		    fam, n_allow, n_deny);
		return -EPERM;
	}
	if (first_allow > first_deny) {
		snprintf(why, size, "%s: the unreachable rule comes before the proxy uid's rule",
		    fam);
		return -EPERM;
	}
	/* Every rule evaluated before the unreachable one must be unable to
	 * route a socket of another uid. */
	for (i = 0; i < first_deny; i++) {
		const struct sc_rule *r = &rules[i];

		if (i == first_allow || sc_is_harmless(r, proxy_uid))
			continue;
		snprintf(why, size,
		    "%s: a rule at priority %u (action %u, table %u) comes before the "
		    "lock-down and could route sockets of other uids",
		    fam, r->priority, r->action, r->table);
		return -EPERM;
	}
	return 0;
}

/* Delete the stale and duplicated rules of our shape that the dump shows. */
static int
sc_rules_prune(struct nl_sock *sk, int family, uid_t uid, int remove_all)
{
	struct sc_rule *v = NULL;
	size_t n = 0, i;
	int err, kept_allow = 0, kept_deny = 0;

	err = sc_rules_dump(family, &v, &n);
	if (err < 0)
		goto out;
	for (i = 0; i < n; i++) {
		int del = 0;

		if (sc_is_deny(&v[i])) {
			del = remove_all || kept_deny++;
		} else if (sc_is_allow_shape(&v[i])) {
			if (remove_all || !sc_is_allow(&v[i], uid))
				del = 1;
			else
				del = kept_allow++;
		}
		if (!del)
			continue;
		err = sc_rule_send(sk, RTM_DELRULE, 0, &v[i]);
		if (err < 0) {
			sc_logerr(err, "%s: cannot delete rule at priority %u",
			    sc_family_name(family), v[i].priority);
			goto out;
		}
	}
	err = 0;
out:
	free(v);
	return err;
}

static int
sc_rules_install_one(struct nl_sock *sk, int family, uid_t uid)
{
	struct sc_rule r;
	int err;

	/* The allow rule first, so the proxy never loses its route; then the
	 * unreachable rule.  NLM_F_EXCL makes an identical existing rule an
	 * EEXIST instead of a duplicate (the kernel compares every attribute,
	 * the uid range included). */
	sc_rule_allow(&r, family, uid);
	err = sc_rule_send(sk, RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, &r);
	if (err < 0 && err != -EEXIST) {
		if (err != -EAFNOSUPPORT)
			sc_logerr(err, "%s: cannot add the rule for uid %u at priority %u",
			    sc_family_name(family), (unsigned)uid, SC_RULE_PRIO_ALLOW);
		return err;
	}
	sc_rule_deny(&r, family);
	err = sc_rule_send(sk, RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, &r);
	if (err < 0 && err != -EEXIST) {
		sc_logerr(err, "%s: cannot add the unreachable rule at priority %u",
		    sc_family_name(family), SC_RULE_PRIO_DENY);
		return err;
	}
	return sc_rules_prune(sk, family, uid, 0);
}

int
sc_rules_install(uid_t proxy_uid, unsigned families, unsigned *installed)
{
	static const struct {
		unsigned bit;
		int family;
	} fams[] = { { SC_FAM_V4, AF_INET }, { SC_FAM_V6, AF_INET6 } };
	struct nl_sock *sk = NULL;
	unsigned done = 0;
	size_t i;
	int err;

	err = sc_nl_open(&sk);
	if (err < 0)
		goto out;
	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		if (!(families & fams[i].bit))
			continue;
		err = sc_rules_install_one(sk, fams[i].family, proxy_uid);
		if (err == -EAFNOSUPPORT) {
			/* A kernel without IPv6 has no IPv6 route to lock. */
			sc_logx("%s: not supported by this kernel, no rules needed",
			    sc_family_name(fams[i].family));
			continue;
		}
		if (err < 0)
			goto out;
		done |= fams[i].bit;
	}
	err = 0;
out:
	if (installed != NULL)
		*installed = done;
	nl_socket_free(sk);
	return err;
}

int
sc_rules_remove(unsigned families)
{
	struct nl_sock *sk = NULL;
	int err;

	err = sc_nl_open(&sk);
	if (err < 0)
		goto out;
	if (families & SC_FAM_V4) {
		err = sc_rules_prune(sk, AF_INET, 0, 1);
		if (err < 0)
			goto out;
	}
	if (families & SC_FAM_V6) {
		err = sc_rules_prune(sk, AF_INET6, 0, 1);
		if (err < 0 && err != -EAFNOSUPPORT)
			goto out;
	}
	err = 0;
out:
	nl_socket_free(sk);
	return err;
}

int
sc_rules_verify(uid_t proxy_uid, unsigned families)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	char why[256];
	struct sc_rule *v;
	size_t n, i;
	int err, result = 0;

	for (i = 0; i < 2; i++) {
		if (!(families & (i == 0 ? SC_FAM_V4 : SC_FAM_V6)))
			continue;
		err = sc_rules_dump(fams[i], &v, &n);
		if (err < 0) {
			sc_logerr(err, "check failed: cannot read the %s rules back",
			    sc_family_name(fams[i]));
			return err;
		}
		err = sc_rules_check(fams[i], v, n, proxy_uid, why, sizeof(why));
		free(v);
		if (err < 0) {
			sc_logx("check failed: rules: %s", why);
			result = err;
		} else {
			sc_logx("check passed: %s rules read back in order", sc_family_name(fams[i]));
		}
	}
	return result;
}
