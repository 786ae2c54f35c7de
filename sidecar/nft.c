/*
 * sidecar/nft.c: the nftables lock-down, spoken as raw nfnetlink.
 *
 * Messages are NLMSG headers, a struct nfgenmsg, and NFTA_* attributes
 * (<linux/netfilter/nf_tables.h>).  Changes go in one batch between
 * NFNL_MSG_BATCH_BEGIN and NFNL_MSG_BATCH_END, which the kernel applies as
 * one transaction or not at all.  Read-backs are dumps, parsed below with a
 * bounds check before every read (STYLE.md: a netlink reply is untrusted).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/if_arp.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include "sidecar/log.h"
#include "sidecar/nft.h"

#define SC_NFT_BUF 65536
/* Bound on the rules and chains read back, so a hostile or runaway ruleset
 * cannot make the sidecar loop or allocate without limit. */
#define SC_NFT_MAX_RULES 512
#define SC_NFT_MAX_CHAINS (SC_NFT_MAX_IF + 8)

/* ---------------------------------------------------------- message builder */

/* A growing batch of messages in one fixed buffer; an overflow sets FULL and
 * is reported once, when the batch is sent. */
struct sc_nb {
	unsigned char buf[SC_NFT_BUF];
	size_t len;
	size_t msg;          /* offset of the message being built */
	int full;
	uint32_t seq;
	unsigned n_ack;      /* messages that asked for an ack */
};

static void *
sc_nb_put(struct sc_nb *b, size_t len)
{
	size_t al = NLMSG_ALIGN(len);
	void *p;

	if (b->full || al > sizeof(b->buf) - b->len) {
		b->full = 1;
		return NULL;
	}
	p = b->buf + b->len;
	memset(p, 0, al);
	b->len += al;
	return p;
}

static void
sc_nb_msg(struct sc_nb *b, uint16_t type, uint16_t flags, uint8_t family,
    uint16_t res_id)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	b->msg = b->len;
	nlh = sc_nb_put(b, NLMSG_HDRLEN);
	nfg = sc_nb_put(b, sizeof(*nfg));
	if (nlh == NULL || nfg == NULL)
		return;
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	nlh->nlmsg_seq = ++b->seq;
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(res_id);
	if (flags & NLM_F_ACK)
		b->n_ack++;
}

/* Close the message being built: its length is everything since. */
static void
sc_nb_end(struct sc_nb *b)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(b->buf + b->msg);

	if (!b->full)
		nlh->nlmsg_len = (uint32_t)(b->len - b->msg);
}

static void
sc_nb_attr(struct sc_nb *b, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = sc_nb_put(b, NLA_HDRLEN + len);

	if (a == NULL)
		return;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len > 0)
		memcpy((unsigned char *)a + NLA_HDRLEN, data, len);
}

static void
sc_nb_str(struct sc_nb *b, uint16_t type, const char *s)
{
	sc_nb_attr(b, type, s, strlen(s) + 1);
}

static void
sc_nb_be32(struct sc_nb *b, uint16_t type, uint32_t v)
{
	v = htonl(v);
	sc_nb_attr(b, type, &v, sizeof(v));
}

static size_t
sc_nb_nest(struct sc_nb *b, uint16_t type)
{
	size_t off = b->len;

	sc_nb_attr(b, (uint16_t)(type | NLA_F_NESTED), NULL, 0);
	return off;
}

static void
sc_nb_nest_end(struct sc_nb *b, size_t off)
{
	struct nlattr *a = (struct nlattr *)(b->buf + off);

	if (!b->full)
		a->nla_len = (uint16_t)(b->len - off);
}

/* ------------------------------------------------------------- the ruleset */

static void
sc_x_meta(struct sc_nft_rule *r, uint32_t key)
{
	struct sc_nft_expr *e = &r->e[r->n++];

	memset(e, 0, sizeof(*e));
	e->kind = SC_NX_META;
	e->key = key;
	e->reg = NFT_REG_1;
}

static void
sc_x_cmp(struct sc_nft_rule *r, uint32_t op, const void *v, uint32_t len)
{
	struct sc_nft_expr *e = &r->e[r->n++];

	memset(e, 0, sizeof(*e));
	e->kind = SC_NX_CMP;
	e->reg = NFT_REG_1;
	e->op = op;
	memcpy(e->data, v, len);
	e->dlen = len;
}

static void
sc_x_u8(struct sc_nft_rule *r, uint8_t v)
{
	sc_x_cmp(r, NFT_CMP_EQ, &v, 1);
}

static void
sc_x_counter(struct sc_nft_rule *r)
{
	struct sc_nft_expr *e = &r->e[r->n++];

	memset(e, 0, sizeof(*e));
	e->kind = SC_NX_COUNTER;
}

static void
sc_x_verdict(struct sc_nft_rule *r, int32_t verdict)
{
	struct sc_nft_expr *e = &r->e[r->n++];

	memset(e, 0, sizeof(*e));
	e->kind = SC_NX_IMM;
	e->reg = NFT_REG_VERDICT;
	e->verdict = verdict;
	e->has_verdict = 1;
}

static void
sc_rule_init(struct sc_nft_rule *r, int family, const char *chain)
{
	memset(r, 0, sizeof(*r));
	r->family = family;
	snprintf(r->table, sizeof(r->table), "%s", SC_NFT_TABLE);
	snprintf(r->chain, sizeof(r->chain), "%s", chain);
}

/* "meta skuid PROXY accept" and "meta skuid != PROXY counter drop". */
static size_t
sc_rules_skuid(int family, const char *chain, uid_t proxy_uid,
    struct sc_nft_rule *r)
{
	uint32_t uid = (uint32_t)proxy_uid; /* a register holds it host-endian */

	sc_rule_init(&r[0], family, chain);
	sc_x_meta(&r[0], NFT_META_SKUID);
	sc_x_cmp(&r[0], NFT_CMP_EQ, &uid, sizeof(uid));
	sc_x_verdict(&r[0], NF_ACCEPT);
	sc_rule_init(&r[1], family, chain);
	sc_x_meta(&r[1], NFT_META_SKUID);
	sc_x_cmp(&r[1], NFT_CMP_NEQ, &uid, sizeof(uid));
	sc_x_counter(&r[1]);
	sc_x_verdict(&r[1], NF_DROP);
	return 2;
}

size_t
sc_nft_expected(const char *chain, uid_t proxy_uid, struct sc_nft_rule *r,
    size_t max)
{
	/* The MLD messages a host sends as a listener (RFC 2710 §3: report
	 * 131 and done 132; RFC 3810 §5.2: the v2 report 143).  Queries (130)
	 * only a router sends. */
	static const uint8_t mld[] = { 131, 132, 143 };
	uint32_t lo = 1; /* loopback is ifindex 1 in every namespace */
	size_t n = 0, i;

	if (max < 8)
		return 0;
	if (strncmp(chain, "egress-", 7) == 0)
		return sc_rules_skuid(NFPROTO_NETDEV, chain, proxy_uid, r);
	if (strcmp(chain, "output") != 0)
		return 0;
	sc_rule_init(&r[n], NFPROTO_INET, chain);
	sc_x_meta(&r[n], NFT_META_OIF);
	sc_x_cmp(&r[n], NFT_CMP_EQ, &lo, sizeof(lo));
	sc_x_verdict(&r[n], NF_ACCEPT);
	n++;
	/* A group join makes the kernel send IGMP or MLD reports from its own
	 * socket, whose content (the group address) the agent chose: a
	 * covert channel that "meta skuid" cannot see.  The proxy needs no
	 * multicast, so reports are dropped for everyone. */
	sc_rule_init(&r[n], NFPROTO_INET, chain);
	sc_x_meta(&r[n], NFT_META_NFPROTO);
	sc_x_u8(&r[n], NFPROTO_IPV4);
	sc_x_meta(&r[n], NFT_META_L4PROTO);
	sc_x_u8(&r[n], IPPROTO_IGMP);
	sc_x_counter(&r[n]);
	sc_x_verdict(&r[n], NF_DROP);
	n++;
	for (i = 0; i < sizeof(mld); i++) {
		struct sc_nft_expr *e;

		sc_rule_init(&r[n], NFPROTO_INET, chain);
		sc_x_meta(&r[n], NFT_META_NFPROTO);
		sc_x_u8(&r[n], NFPROTO_IPV6);
		sc_x_meta(&r[n], NFT_META_L4PROTO);
		sc_x_u8(&r[n], IPPROTO_ICMPV6);
		e = &r[n].e[r[n].n++];
		memset(e, 0, sizeof(*e));
		e->kind = SC_NX_PAYLOAD;
		e->reg = NFT_REG_1;
		e->base = NFT_PAYLOAD_TRANSPORT_HEADER;
		e->offset = 0; /* the ICMPv6 type (RFC 4443 §2.1) */
		e->len = 1;
		sc_x_u8(&r[n], mld[i]);
		sc_x_counter(&r[n]);
		sc_x_verdict(&r[n], NF_DROP);
		n++;
	}
	n += sc_rules_skuid(NFPROTO_INET, chain, proxy_uid, &r[n]);
	return n;
}

static void
sc_nb_expr(struct sc_nb *b, const struct sc_nft_expr *e)
{
	static const char *const names[] = {
		[SC_NX_META] = "meta", [SC_NX_CMP] = "cmp", [SC_NX_IMM] = "immediate",
		[SC_NX_COUNTER] = "counter", [SC_NX_PAYLOAD] = "payload",
	};
	size_t elem, data, inner, verd;

	elem = sc_nb_nest(b, NFTA_LIST_ELEM);
	sc_nb_str(b, NFTA_EXPR_NAME, names[e->kind]);
	data = sc_nb_nest(b, NFTA_EXPR_DATA);
	switch (e->kind) {
	case SC_NX_META:
		sc_nb_be32(b, NFTA_META_KEY, e->key);
		sc_nb_be32(b, NFTA_META_DREG, e->reg);
		break;
	case SC_NX_CMP:
		sc_nb_be32(b, NFTA_CMP_SREG, e->reg);
		sc_nb_be32(b, NFTA_CMP_OP, e->op);
		inner = sc_nb_nest(b, NFTA_CMP_DATA);
		sc_nb_attr(b, NFTA_DATA_VALUE, e->data, e->dlen);
		sc_nb_nest_end(b, inner);
		break;
	case SC_NX_IMM:
		sc_nb_be32(b, NFTA_IMMEDIATE_DREG, e->reg);
		inner = sc_nb_nest(b, NFTA_IMMEDIATE_DATA);
		verd = sc_nb_nest(b, NFTA_DATA_VERDICT);
		sc_nb_be32(b, NFTA_VERDICT_CODE, (uint32_t)e->verdict);
		sc_nb_nest_end(b, verd);
		sc_nb_nest_end(b, inner);
		break;
	case SC_NX_PAYLOAD:
		sc_nb_be32(b, NFTA_PAYLOAD_DREG, e->reg);
		sc_nb_be32(b, NFTA_PAYLOAD_BASE, e->base);
		sc_nb_be32(b, NFTA_PAYLOAD_OFFSET, e->offset);
		sc_nb_be32(b, NFTA_PAYLOAD_LEN, e->len);
		break;
	default: /* counter: starts at zero, no attributes needed */
		break;
	}
	sc_nb_nest_end(b, data);
	sc_nb_nest_end(b, elem);
}

static void
sc_nb_rule(struct sc_nb *b, const struct sc_nft_rule *r)
{
	size_t list, i;

	sc_nb_msg(b, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWRULE,
	    NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, (uint8_t)r->family, 0);
	sc_nb_str(b, NFTA_RULE_TABLE, r->table);
	sc_nb_str(b, NFTA_RULE_CHAIN, r->chain);
	list = sc_nb_nest(b, NFTA_RULE_EXPRESSIONS);
	for (i = 0; i < r->n; i++)
		sc_nb_expr(b, &r->e[i]);
	sc_nb_nest_end(b, list);
	sc_nb_end(b);
}

static void
sc_nb_chain(struct sc_nb *b, int family, const char *name, uint32_t hooknum,
    const char *dev)
{
	size_t hook;

	sc_nb_msg(b, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWCHAIN,
	    NLM_F_CREATE | NLM_F_ACK, (uint8_t)family, 0);
	sc_nb_str(b, NFTA_CHAIN_TABLE, SC_NFT_TABLE);
	sc_nb_str(b, NFTA_CHAIN_NAME, name);
	hook = sc_nb_nest(b, NFTA_CHAIN_HOOK);
	sc_nb_be32(b, NFTA_HOOK_HOOKNUM, hooknum);
	sc_nb_be32(b, NFTA_HOOK_PRIORITY, (uint32_t)SC_NFT_PRIO);
	if (dev != NULL)
		sc_nb_str(b, NFTA_HOOK_DEV, dev);
	sc_nb_nest_end(b, hook);
	sc_nb_be32(b, NFTA_CHAIN_POLICY, NF_ACCEPT);
	sc_nb_str(b, NFTA_CHAIN_TYPE, "filter");
	sc_nb_end(b);
}

static void
sc_nb_table(struct sc_nb *b, uint16_t msgtype, int family)
{
	sc_nb_msg(b, NFNL_SUBSYS_NFTABLES << 8 | msgtype,
	    msgtype == NFT_MSG_NEWTABLE ? NLM_F_CREATE | NLM_F_ACK : NLM_F_ACK,
	    (uint8_t)family, 0);
	sc_nb_str(b, NFTA_TABLE_NAME, SC_NFT_TABLE);
	if (msgtype == NFT_MSG_NEWTABLE)
		sc_nb_be32(b, NFTA_TABLE_FLAGS, 0);
	sc_nb_end(b);
}

static void
sc_nb_batch(struct sc_nb *b, uint16_t type)
{
	sc_nb_msg(b, type, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	sc_nb_end(b);
}

/* ------------------------------------------------------------ the socket */

static int
sc_nft_open(void)
{
	struct timeval tv = { 5, 0 };
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	/* A kernel that never answers must not hang the sidecar's start. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/*
 * Send the batch and collect one ack per message that asked for one.
 * Returns 0 or the first error the kernel reported (negative errno).
 */
static int
sc_nft_talk(const struct sc_nb *b, const char *what)
{
	static unsigned char rbuf[SC_NFT_BUF];
	unsigned seen = 0;
	int fd, err = 0, first = 0;
	ssize_t n;

	if (b->full) {
		sc_logx("nftables: %s: the batch does not fit in %d bytes", what, SC_NFT_BUF);
		return -E2BIG;
	}
	fd = sc_nft_open();
	if (fd < 0) {
		sc_logerr(fd, "nftables: %s: cannot open a netfilter netlink socket", what);
		return fd;
	}
	if (send(fd, b->buf, b->len, 0) != (ssize_t)b->len) {
		err = errno ? -errno : -EIO;
		sc_logerr(err, "nftables: %s: send", what);
		goto out;
	}
	while (seen < b->n_ack) {
		const struct nlmsghdr *nlh;
		size_t left;

		n = recv(fd, rbuf, sizeof(rbuf), 0);
		if (n < 0) {
			err = -errno;
			sc_logerr(err, "nftables: %s: no answer from the kernel", what);
			goto out;
		}
		left = (size_t)n;
		for (nlh = (const struct nlmsghdr *)rbuf; NLMSG_OK(nlh, left);
		    nlh = NLMSG_NEXT(nlh, left)) {
			const struct nlmsgerr *e;

			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
				err = -EBADMSG;
				goto out;
			}
			e = NLMSG_DATA(nlh);
			seen++;
			if (e->error < 0 && first == 0)
				first = e->error;
		}
	}
	err = first;
	if (err < 0)
		sc_logerr(err, "nftables: %s: the kernel refused the batch", what);
out:
	close(fd);
	return err;
}

int
sc_nft_install(uid_t proxy_uid, const struct sc_nft_ifaces *ifs)
{
	static struct sc_nb b;
	struct sc_nft_rule r[16];
	char chain[64];
	size_t n, i, k;

	memset(&b, 0, sizeof(b));
	b.seq = (uint32_t)getpid() << 8;
	sc_nb_batch(&b, NFNL_MSG_BATCH_BEGIN);
	/* "add; delete; add": the table exists for the delete to succeed, and
	 * the whole swap is one transaction, so a stale table of ours (another
	 * uid, an altered rule) is replaced with no moment in between. */
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_INET);
	sc_nb_table(&b, NFT_MSG_DELTABLE, NFPROTO_INET);
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_INET);
	sc_nb_chain(&b, NFPROTO_INET, "output", NF_INET_LOCAL_OUT, NULL);
	n = sc_nft_expected("output", proxy_uid, r, 16);
	for (i = 0; i < n; i++)
		sc_nb_rule(&b, &r[i]);
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_NETDEV);
	sc_nb_table(&b, NFT_MSG_DELTABLE, NFPROTO_NETDEV);
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_NETDEV);
	for (k = 0; k < ifs->n; k++) {
		snprintf(chain, sizeof(chain), "egress-%s", ifs->name[k]);
		sc_nb_chain(&b, NFPROTO_NETDEV, chain, NF_NETDEV_EGRESS, ifs->name[k]);
		n = sc_nft_expected(chain, proxy_uid, r, 16);
		for (i = 0; i < n; i++)
			sc_nb_rule(&b, &r[i]);
	}
	sc_nb_batch(&b, NFNL_MSG_BATCH_END);
	return sc_nft_talk(&b, "install");
}

int
sc_nft_remove(void)
{
	static struct sc_nb b;

	memset(&b, 0, sizeof(b));
	b.seq = (uint32_t)getpid() << 8;
	sc_nb_batch(&b, NFNL_MSG_BATCH_BEGIN);
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_INET);
	sc_nb_table(&b, NFT_MSG_DELTABLE, NFPROTO_INET);
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_NETDEV);
	sc_nb_table(&b, NFT_MSG_DELTABLE, NFPROTO_NETDEV);
	sc_nb_batch(&b, NFNL_MSG_BATCH_END);
	return sc_nft_talk(&b, "remove");
}

int
sc_nft_ifaces_get(struct sc_nft_ifaces *ifs)
{
	struct if_nameindex *list, *p;
	int err = 0;

	memset(ifs, 0, sizeof(*ifs));
	list = if_nameindex();
	if (list == NULL)
		return -errno;
	for (p = list; p->if_index != 0 && p->if_name != NULL; p++) {
		if (p->if_index == 1 || strcmp(p->if_name, "lo") == 0)
			continue;
		if (strlen(p->if_name) >= IFNAMSIZ)
			continue;
		if (ifs->n >= SC_NFT_MAX_IF) {
			err = -E2BIG;
			break;
		}
		snprintf(ifs->name[ifs->n], IFNAMSIZ, "%s", p->if_name);
		ifs->index[ifs->n] = (int)p->if_index;
		ifs->n++;
	}
	if_freenameindex(list);
	return err;
}

/* ------------------------------------------------------------ the parser */

/* A bounds-checked walk over the attributes in [P, P+LEN). */
struct sc_at {
	const unsigned char *p;
	size_t left;
};

/* Next attribute into *TYPE, *DATA, *DLEN; 1 when one was read, 0 at the
 * end, -EBADMSG when an attribute claims more than what is left. */
static int
sc_at_next(struct sc_at *it, uint16_t *type, const unsigned char **data, size_t *dlen)
{
	struct nlattr a;
	size_t al;

	if (it->left == 0)
		return 0;
	if (it->left < NLA_HDRLEN)
		return -EBADMSG;
	memcpy(&a, it->p, sizeof(a));
	if (a.nla_len < NLA_HDRLEN || a.nla_len > it->left)
		return -EBADMSG;
	*type = a.nla_type & NLA_TYPE_MASK;
	*data = it->p + NLA_HDRLEN;
	*dlen = a.nla_len - NLA_HDRLEN;
	al = NLA_ALIGN(a.nla_len);
	if (al > it->left)
		al = it->left; /* the last attribute may lack its padding */
	it->p += al;
	it->left -= al;
	return 1;
}

static int
sc_at_be32(const unsigned char *d, size_t len, uint32_t *v)
{
	if (len != 4)
		return -EBADMSG;
	memcpy(v, d, 4);
	*v = ntohl(*v);
	return 0;
}

static int
sc_at_be64(const unsigned char *d, size_t len, uint64_t *v)
{
	uint32_t hi, lo;

	if (len != 8)
		return -EBADMSG;
	memcpy(&hi, d, 4);
	memcpy(&lo, d + 4, 4);
	*v = (uint64_t)ntohl(hi) << 32 | ntohl(lo);
	return 0;
}

/* A NUL-terminated string attribute that fits in SIZE bytes. */
static int
sc_at_str(const unsigned char *d, size_t len, char *out, size_t size)
{
	if (len == 0 || len > size || memchr(d, '\0', len) == NULL)
		return -EBADMSG;
	memcpy(out, d, len);
	out[size - 1] = '\0';
	return 0;
}

/* The first attributes of a message of subsystem nf_tables and message
 * type WANT; 0 when it is another message. */
static int
sc_at_msg(const struct nlmsghdr *nlh, int want, struct sc_at *it, int *family)
{
	struct nfgenmsg nfg;

	if (nlh->nlmsg_len < NLMSG_HDRLEN)
		return -EBADMSG;
	if (nlh->nlmsg_type != (NFNL_SUBSYS_NFTABLES << 8 | want))
		return 0;
	if (nlh->nlmsg_len < NLMSG_SPACE(sizeof(nfg)))
		return -EBADMSG;
	memcpy(&nfg, NLMSG_DATA(nlh), sizeof(nfg));
	*family = nfg.nfgen_family;
	it->p = (const unsigned char *)NLMSG_DATA(nlh) + NLMSG_ALIGN(sizeof(nfg));
	it->left = nlh->nlmsg_len - NLMSG_SPACE(sizeof(nfg));
	return 1;
}

/* NFTA_DATA_VALUE or NFTA_DATA_VERDICT inside a cmp or immediate. */
static int
sc_parse_data(const unsigned char *d, size_t len, struct sc_nft_expr *e)
{
	struct sc_at it = { d, len }, v;
	const unsigned char *x, *y;
	size_t xl, yl;
	uint16_t t, u;
	uint32_t code;
	int rc;

	while ((rc = sc_at_next(&it, &t, &x, &xl)) == 1) {
		if (t == NFTA_DATA_VALUE) {
			if (xl > sizeof(e->data))
				return -EBADMSG;
			memcpy(e->data, x, xl);
			e->dlen = (uint32_t)xl;
		} else if (t == NFTA_DATA_VERDICT) {
			v.p = x;
			v.left = xl;
			while ((rc = sc_at_next(&v, &u, &y, &yl)) == 1) {
				if (u == NFTA_VERDICT_CODE) {
					if (sc_at_be32(y, yl, &code) < 0)
						return -EBADMSG;
					e->verdict = (int32_t)code;
					e->has_verdict = 1;
				} else {
					e->kind = SC_NX_OTHER; /* a jump target, ... */
				}
			}
			if (rc < 0)
				return rc;
		} else {
			e->kind = SC_NX_OTHER;
		}
	}
	return rc;
}

/* One NFTA_LIST_ELEM of NFTA_RULE_EXPRESSIONS. */
static int
sc_parse_expr(const unsigned char *d, size_t len, struct sc_nft_expr *e)
{
	struct sc_at it = { d, len }, in;
	const unsigned char *x, *data = NULL, *y;
	size_t xl, dl = 0, yl;
	char name[32] = "";
	uint16_t t, u;
	int rc;

	memset(e, 0, sizeof(*e));
	while ((rc = sc_at_next(&it, &t, &x, &xl)) == 1) {
		if (t == NFTA_EXPR_NAME) {
			if (sc_at_str(x, xl, name, sizeof(name)) < 0)
				return -EBADMSG;
		} else if (t == NFTA_EXPR_DATA) {
			data = x;
			dl = xl;
		}
	}
	if (rc < 0)
		return rc;
	e->kind = strcmp(name, "meta") == 0 ? SC_NX_META :
	    strcmp(name, "cmp") == 0 ? SC_NX_CMP :
	    strcmp(name, "immediate") == 0 ? SC_NX_IMM :
	    strcmp(name, "counter") == 0 ? SC_NX_COUNTER :
	    strcmp(name, "payload") == 0 ? SC_NX_PAYLOAD : SC_NX_OTHER;
	if (e->kind == SC_NX_OTHER || data == NULL)
		return 0;
	in.p = data;
	in.left = dl;
	while (e->kind != SC_NX_OTHER && (rc = sc_at_next(&in, &u, &y, &yl)) == 1) {
		int known = 1;

		switch (e->kind) {
		case SC_NX_META:
			if (u == NFTA_META_KEY)
				rc = sc_at_be32(y, yl, &e->key);
			else if (u == NFTA_META_DREG)
				rc = sc_at_be32(y, yl, &e->reg);
			else
				known = 0; /* SREG: a "meta set", not ours */
			break;
		case SC_NX_CMP:
			if (u == NFTA_CMP_SREG)
				rc = sc_at_be32(y, yl, &e->reg);
			else if (u == NFTA_CMP_OP)
				rc = sc_at_be32(y, yl, &e->op);
			else if (u == NFTA_CMP_DATA)
				rc = sc_parse_data(y, yl, e);
			else
				known = 0;
			break;
		case SC_NX_IMM:
			if (u == NFTA_IMMEDIATE_DREG)
				rc = sc_at_be32(y, yl, &e->reg);
			else if (u == NFTA_IMMEDIATE_DATA)
				rc = sc_parse_data(y, yl, e);
			else
				known = 0;
			break;
		case SC_NX_COUNTER:
			if (u == NFTA_COUNTER_PACKETS)
				rc = sc_at_be64(y, yl, &e->packets);
			else if (u == NFTA_COUNTER_BYTES)
				rc = sc_at_be64(y, yl, &e->bytes);
			else if (u != NFTA_COUNTER_PAD)
				known = 0;
			break;
		case SC_NX_PAYLOAD:
			if (u == NFTA_PAYLOAD_DREG)
				rc = sc_at_be32(y, yl, &e->reg);
			else if (u == NFTA_PAYLOAD_BASE)
				rc = sc_at_be32(y, yl, &e->base);
			else if (u == NFTA_PAYLOAD_OFFSET)
				rc = sc_at_be32(y, yl, &e->offset);
			else if (u == NFTA_PAYLOAD_LEN)
				rc = sc_at_be32(y, yl, &e->len);
			else
				known = 0; /* SREG or checksum: a payload write */
			break;
		}
		if (rc < 0)
			return rc;
		rc = 1;
		/* An attribute we did not write changes what the expression
		 * does (deny by default): the rule is not ours. */
		if (!known)
			e->kind = SC_NX_OTHER;
	}
	return rc < 0 ? rc : 0;
}

int
sc_nft_parse_rule(const struct nlmsghdr *nlh, struct sc_nft_rule *r)
{
	struct sc_at it, list;
	const unsigned char *x, *y;
	size_t xl, yl;
	uint16_t t, u;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = sc_at_msg(nlh, NFT_MSG_NEWRULE, &it, &r->family);
	if (rc <= 0)
		return rc;
	while ((rc = sc_at_next(&it, &t, &x, &xl)) == 1) {
		switch (t) {
		case NFTA_RULE_TABLE:
			if (sc_at_str(x, xl, r->table, sizeof(r->table)) < 0)
				return -EBADMSG;
			break;
		case NFTA_RULE_CHAIN:
			if (sc_at_str(x, xl, r->chain, sizeof(r->chain)) < 0)
				return -EBADMSG;
			break;
		case NFTA_RULE_EXPRESSIONS:
			list.p = x;
			list.left = xl;
			while ((rc = sc_at_next(&list, &u, &y, &yl)) == 1) {
				if (u != NFTA_LIST_ELEM)
					return -EBADMSG;
				if (r->n >= SC_NFT_MAX_EXPR) {
					r->other = 1;
					continue;
				}
				rc = sc_parse_expr(y, yl, &r->e[r->n]);
				if (rc < 0)
					return rc;
				if (r->e[r->n].kind == SC_NX_OTHER)
					r->other = 1;
				r->n++;
			}
			if (rc < 0)
				return rc;
			break;
		case NFTA_RULE_COMPAT:
			r->other = 1; /* an xtables match: not ours */
			break;
		default:
			break; /* handle, position, userdata, pad: descriptive */
		}
	}
	return rc < 0 ? rc : 1;
}

int
sc_nft_parse_chain(const struct nlmsghdr *nlh, struct sc_nft_chain *c)
{
	struct sc_at it, hk;
	const unsigned char *x, *y;
	size_t xl, yl;
	uint16_t t, u;
	uint32_t prio = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = sc_at_msg(nlh, NFT_MSG_NEWCHAIN, &it, &c->family);
	if (rc <= 0)
		return rc;
	while ((rc = sc_at_next(&it, &t, &x, &xl)) == 1) {
		switch (t) {
		case NFTA_CHAIN_TABLE:
			rc = sc_at_str(x, xl, c->table, sizeof(c->table));
			break;
		case NFTA_CHAIN_NAME:
			rc = sc_at_str(x, xl, c->name, sizeof(c->name));
			break;
		case NFTA_CHAIN_TYPE:
			rc = sc_at_str(x, xl, c->type, sizeof(c->type));
			break;
		case NFTA_CHAIN_POLICY:
			rc = sc_at_be32(x, xl, &c->policy);
			c->has_policy = 1;
			break;
		case NFTA_CHAIN_HOOK:
			c->has_hook = 1;
			hk.p = x;
			hk.left = xl;
			while ((rc = sc_at_next(&hk, &u, &y, &yl)) == 1) {
				if (u == NFTA_HOOK_HOOKNUM) {
					rc = sc_at_be32(y, yl, &c->hooknum);
				} else if (u == NFTA_HOOK_PRIORITY) {
					rc = sc_at_be32(y, yl, &prio);
					c->priority = (int32_t)prio;
				} else if (u == NFTA_HOOK_DEV) {
					rc = sc_at_str(y, yl, c->dev, sizeof(c->dev));
				} else if (u == NFTA_HOOK_DEVS) {
					/* A device list: our chains have exactly
					 * one device; record the first. */
					struct sc_at dv = { y, yl };
					const unsigned char *z;
					size_t zl;
					uint16_t w;

					rc = sc_at_next(&dv, &w, &z, &zl);
					if (rc == 1)
						rc = sc_at_str(z, zl, c->dev, sizeof(c->dev));
					if (rc == 0 && dv.left != 0)
						snprintf(c->dev, sizeof(c->dev), "*");
				}
				if (rc < 0)
					return -EBADMSG;
				rc = 1;
			}
			break;
		default:
			rc = 0;
			break;
		}
		if (rc < 0)
			return -EBADMSG;
	}
	return rc < 0 ? rc : 1;
}

int
sc_nft_parse_table(const struct nlmsghdr *nlh, struct sc_nft_table *tb)
{
	struct sc_at it;
	const unsigned char *x;
	size_t xl;
	uint16_t t;
	int rc;

	memset(tb, 0, sizeof(*tb));
	rc = sc_at_msg(nlh, NFT_MSG_NEWTABLE, &it, &tb->family);
	if (rc <= 0)
		return rc;
	while ((rc = sc_at_next(&it, &t, &x, &xl)) == 1) {
		if (t == NFTA_TABLE_NAME)
			rc = sc_at_str(x, xl, tb->name, sizeof(tb->name));
		else if (t == NFTA_TABLE_FLAGS)
			rc = sc_at_be32(x, xl, &tb->flags);
		else
			rc = 0;
		if (rc < 0)
			return -EBADMSG;
	}
	return rc < 0 ? rc : 1;
}

int
sc_nft_rule_equal(const struct sc_nft_rule *a, const struct sc_nft_rule *b)
{
	size_t i;

	if (a->other || b->other || a->n != b->n || a->family != b->family)
		return 0;
	for (i = 0; i < a->n; i++) {
		const struct sc_nft_expr *x = &a->e[i], *y = &b->e[i];

		if (x->kind != y->kind || x->key != y->key || x->reg != y->reg ||
		    x->op != y->op || x->dlen != y->dlen ||
		    memcmp(x->data, y->data, x->dlen) != 0 ||
		    x->has_verdict != y->has_verdict || x->verdict != y->verdict ||
		    x->base != y->base || x->offset != y->offset || x->len != y->len)
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------------ read-back */

struct sc_dump {
	struct sc_nft_table tables[8];
	size_t n_tables;
	struct sc_nft_chain chains[SC_NFT_MAX_CHAINS];
	size_t n_chains;
	struct sc_nft_rule rules[SC_NFT_MAX_RULES];
	size_t n_rules;
	struct sc_nft_rule scratch;
	int overflow;
};

/* Dump MSGTYPE objects of FAMILY and keep those of our table. */
static int
sc_nft_dump(int fd, uint16_t msgtype, int family, struct sc_dump *d)
{
	static unsigned char rbuf[SC_NFT_BUF];
	struct {
		struct nlmsghdr nlh;
		struct nfgenmsg nfg;
	} req;
	ssize_t n;
	int done = 0, rc;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(req.nfg));
	req.nlh.nlmsg_type = (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | msgtype);
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nlh.nlmsg_seq = msgtype;
	req.nfg.nfgen_family = (uint8_t)family;
	req.nfg.version = NFNETLINK_V0;
	if (send(fd, &req, req.nlh.nlmsg_len, 0) < 0)
		return -errno;
	while (!done) {
		const struct nlmsghdr *nlh;
		size_t left;

		n = recv(fd, rbuf, sizeof(rbuf), 0);
		if (n < 0)
			return -errno;
		left = (size_t)n;
		for (nlh = (const struct nlmsghdr *)rbuf; NLMSG_OK(nlh, left);
		    nlh = NLMSG_NEXT(nlh, left)) {
			if (nlh->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EBADMSG;
				return e->error < 0 ? e->error : -EBADMSG;
			}
			if (msgtype == NFT_MSG_GETTABLE) {
				struct sc_nft_table t;

				rc = sc_nft_parse_table(nlh, &t);
				if (rc < 0)
					return rc;
				if (rc == 1 && strcmp(t.name, SC_NFT_TABLE) == 0) {
					if (d->n_tables < 8)
						d->tables[d->n_tables++] = t;
					else
						d->overflow = 1;
				}
			} else if (msgtype == NFT_MSG_GETCHAIN) {
				struct sc_nft_chain c;

				rc = sc_nft_parse_chain(nlh, &c);
				if (rc < 0)
					return rc;
				if (rc == 1 && strcmp(c.table, SC_NFT_TABLE) == 0) {
					if (d->n_chains < SC_NFT_MAX_CHAINS)
						d->chains[d->n_chains++] = c;
					else
						d->overflow = 1;
				}
			} else {
				/* Parsed aside first: only rules of our table
				 * count towards the bound, however many other
				 * tables of the family hold. */
				rc = sc_nft_parse_rule(nlh, &d->scratch);
				if (rc < 0)
					return rc;
				if (rc != 1 || strcmp(d->scratch.table, SC_NFT_TABLE) != 0)
					continue;
				if (d->n_rules < SC_NFT_MAX_RULES)
					d->rules[d->n_rules++] = d->scratch;
				else
					d->overflow = 1;
			}
		}
	}
	return 0;
}

/* Check the chain NAME of FAMILY and its rules against what we install;
 * 0, or -EPERM with WHY filled. */
static int
sc_nft_check_chain(const struct sc_dump *d, int family, const char *name,
    uint32_t hooknum, const char *dev, uid_t proxy_uid, struct sc_nft_counts *cnt,
    char *why, size_t size)
{
	struct sc_nft_rule want[16];
	const struct sc_nft_chain *c = NULL;
	size_t i, n, k = 0;

	for (i = 0; i < d->n_chains; i++) {
		if (d->chains[i].family == family && strcmp(d->chains[i].name, name) == 0)
			c = &d->chains[i];
	}
	if (c == NULL) {
		snprintf(why, size, "chain %s is missing", name);
		return -EPERM;
	}
	if (!c->has_hook || c->hooknum != hooknum || c->priority != SC_NFT_PRIO ||
	    strcmp(c->type, "filter") != 0 || (dev != NULL && strcmp(c->dev, dev) != 0)) {
		snprintf(why, size, "chain %s is not hooked as it must be (%s %u, priority %d%s%s)",
		    name, c->type, (unsigned)c->hooknum, (int)c->priority,
		    c->dev[0] ? ", device " : "", c->dev);
		return -EPERM;
	}
	/* Only accept or drop: a policy that queues to user space hands the
	 * decision to whoever listens. */
	if (!c->has_policy || (c->policy != NF_ACCEPT && c->policy != NF_DROP)) {
		snprintf(why, size, "chain %s has policy %u", name, (unsigned)c->policy);
		return -EPERM;
	}
	n = sc_nft_expected(name, proxy_uid, want, 16);
	for (i = 0; i < d->n_rules; i++) {
		const struct sc_nft_rule *r = &d->rules[i];
		size_t j;

		if (r->family != family || strcmp(r->chain, name) != 0)
			continue;
		if (k >= n || !sc_nft_rule_equal(r, &want[k])) {
			snprintf(why, size, "chain %s: rule %zu is not the one we wrote", name,
			    k + 1);
			return -EPERM;
		}
		for (j = 0; j < r->n && cnt != NULL; j++) {
			if (r->e[j].kind != SC_NX_COUNTER)
				continue;
			if (family == NFPROTO_NETDEV)
				cnt->egress_drops += r->e[j].packets;
			else
				cnt->output_drops += r->e[j].packets;
		}
		k++;
	}
	if (k != n) {
		snprintf(why, size, "chain %s has %zu of its %zu rules", name, k, n);
		return -EPERM;
	}
	return 0;
}

int
sc_nft_verify(uid_t proxy_uid, const struct sc_nft_ifaces *ifs,
    struct sc_nft_counts *counts, int quiet)
{
	struct sc_dump *d;
	struct sc_nft_counts cnt = { 0, 0 };
	char why[256], chain[64];
	int fd, err, fam, i;
	size_t k, t, n_ours;
	static const int fams[] = { NFPROTO_INET, NFPROTO_NETDEV };

	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	fd = sc_nft_open();
	if (fd < 0) {
		err = fd;
		sc_logerr(err, "check failed: nftables: cannot open a netfilter netlink socket");
		goto out;
	}
	for (i = 0; i < 2; i++) {
		fam = fams[i];
		if ((err = sc_nft_dump(fd, NFT_MSG_GETTABLE, fam, d)) < 0 ||
		    (err = sc_nft_dump(fd, NFT_MSG_GETCHAIN, fam, d)) < 0 ||
		    (err = sc_nft_dump(fd, NFT_MSG_GETRULE, fam, d)) < 0) {
			sc_logerr(err, "check failed: nftables: cannot read the ruleset back");
			goto out;
		}
	}
	err = -EPERM;
	if (d->overflow) {
		sc_logx("check failed: nftables: our tables hold more than this sidecar wrote");
		goto out;
	}
	for (i = 0; i < 2; i++) {
		const char *fname = fams[i] == NFPROTO_INET ? "inet" : "netdev";

		for (t = 0; t < d->n_tables; t++) {
			if (d->tables[t].family == fams[i])
				break;
		}
		if (t == d->n_tables) {
			sc_logx("check failed: nftables: table %s %s is missing", fname,
			    SC_NFT_TABLE);
			goto out;
		}
		/* A dormant table is not evaluated at all; an owned one goes
		 * away with the netlink socket that made it. */
		if (d->tables[t].flags != 0) {
			sc_logx("check failed: nftables: table %s %s has flags 0x%x (dormant?)",
			    fname, SC_NFT_TABLE, (unsigned)d->tables[t].flags);
			goto out;
		}
	}
	n_ours = 1 + ifs->n;
	if (d->n_chains != n_ours) {
		sc_logx("check failed: nftables: our tables hold %zu chains, not %zu",
		    d->n_chains, n_ours);
		goto out;
	}
	if (sc_nft_check_chain(d, NFPROTO_INET, "output", NF_INET_LOCAL_OUT, NULL,
	    proxy_uid, &cnt, why, sizeof(why)) < 0) {
		sc_logx("check failed: nftables: inet %s: %s", SC_NFT_TABLE, why);
		goto out;
	}
	for (k = 0; k < ifs->n; k++) {
		snprintf(chain, sizeof(chain), "egress-%s", ifs->name[k]);
		if (sc_nft_check_chain(d, NFPROTO_NETDEV, chain, NF_NETDEV_EGRESS,
		    ifs->name[k], proxy_uid, &cnt, why, sizeof(why)) < 0) {
			sc_logx("check failed: nftables: netdev %s: %s", SC_NFT_TABLE, why);
			goto out;
		}
	}
	if (!quiet) {
		sc_logx("check passed: nftables: inet %s output drops every packet of a "
		    "socket not of uid %u (and IGMP/MLD reports), lo aside", SC_NFT_TABLE,
		    (unsigned)proxy_uid);
		for (k = 0; k < ifs->n; k++)
			sc_logx("check passed: nftables: netdev %s egress on %s drops frames of "
			    "sockets not of uid %u (packet sockets included)", SC_NFT_TABLE,
			    ifs->name[k], (unsigned)proxy_uid);
	}
	if (counts != NULL)
		*counts = cnt;
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	free(d);
	return err;
}
