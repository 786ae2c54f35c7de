/*
 * sidecar/nft.c: the nftables lock-down, spoken as nfnetlink through libnl.
 *
 * Messages are NLMSG headers, a struct nfgenmsg, and NFTA_* attributes
 * (<linux/netfilter/nf_tables.h>), built and read with libnl-3's generic
 * message and attribute API, as sidecar/rules.c does for RTM_*RULE (libnl
 * has no nf_tables objects); nf_tables attributes are big-endian.  Changes
 * go in one batch between NFNL_MSG_BATCH_BEGIN and NFNL_MSG_BATCH_END, which
 * the kernel applies as one transaction or not at all.  Read-backs are
 * dumps, each message parsed against nla_policy tables (a netlink reply
 * is untrusted).
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netinet/in.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "bridge/nlerr.h"
#include "sidecar/log.h"
#include "sidecar/nft.h"

/* Bound on the rules and chains read back, so a hostile or runaway ruleset
 * cannot make the sidecar loop or allocate without limit. */
#define SC_NFT_MAX_RULES 512
#define SC_NFT_MAX_CHAINS (SC_NFT_MAX_IF + 8)
/* The messages of the largest batch: begin and end, three per table, the
 * output chain and its seven rules, and per interface a chain and two. */
#define SC_NFT_MAX_MSGS (16 + 3 * SC_NFT_MAX_IF)
/* libnl sizes a socket's buffers to 32 KiB; the kernel answers a batch with
 * one ack datagram per message (over a hundred for SC_NFT_MAX_IF
 * interfaces), which would overrun that.  The kernel caps the request at
 * net.core.rmem_max and wmem_max. */
#define SC_NFT_SOCKBUF (256 * 1024)

/* ---------------------------------------------------------------- the batch */

/* The messages of one batch, each an nl_msg of its own, sent together.  A
 * failure to build one is kept in ERR and reported once, when the batch is
 * sent. */
struct sc_nb {
	struct nl_msg *m[SC_NFT_MAX_MSGS];
	size_t n;
	unsigned n_ack;      /* messages that asked for an ack */
	int err;
};

/* Start a message of B: the netlink header and the struct nfgenmsg every
 * nfnetlink message begins with.  NULL when it cannot be (recorded in B). */
static struct nl_msg *
sc_nb_msg(struct sc_nb *b, int type, int flags, int family, uint16_t res_id)
{
	struct nfgenmsg nfg;
	struct nl_msg *m;

	if (b->err < 0)
		return NULL;
	if (b->n == SC_NFT_MAX_MSGS) {
		b->err = -E2BIG;
		return NULL;
	}
	memset(&nfg, 0, sizeof(nfg));
	nfg.nfgen_family = (uint8_t)family;
	nfg.version = NFNETLINK_V0;
	nfg.res_id = htons(res_id);
	m = nlmsg_alloc_simple(type, flags);
	if (m == NULL || nlmsg_append(m, &nfg, sizeof(nfg), NLMSG_ALIGNTO) < 0) {
		nlmsg_free(m);
		b->err = -ENOMEM;
		return NULL;
	}
	b->m[b->n++] = m;
	if (flags & NLM_F_ACK)
		b->n_ack++;
	return m;
}

static void
sc_nb_free(struct sc_nb *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		nlmsg_free(b->m[i]);
	b->n = 0;
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

/*
 * Append expression E to M as one NFTA_LIST_ELEM.  The NLA_PUT_* macros of
 * libnl jump to nla_put_failure when the message is full; nla_nest_end()
 * fails only past 64 KiB, which a one-page message cannot reach.
 */
static int
sc_put_expr(struct nl_msg *m, const struct sc_nft_expr *e)
{
	static const char *const names[] = {
		[SC_NX_META] = "meta", [SC_NX_CMP] = "cmp", [SC_NX_IMM] = "immediate",
		[SC_NX_COUNTER] = "counter", [SC_NX_PAYLOAD] = "payload",
	};
	struct nlattr *elem, *data, *inner, *verd;

	if ((elem = nla_nest_start(m, NFTA_LIST_ELEM)) == NULL)
		goto nla_put_failure;
	NLA_PUT_STRING(m, NFTA_EXPR_NAME, names[e->kind]);
	if ((data = nla_nest_start(m, NFTA_EXPR_DATA)) == NULL)
		goto nla_put_failure;
	switch (e->kind) {
	case SC_NX_META:
		NLA_PUT_U32(m, NFTA_META_KEY, htonl(e->key));
		NLA_PUT_U32(m, NFTA_META_DREG, htonl(e->reg));
		break;
	case SC_NX_CMP:
		NLA_PUT_U32(m, NFTA_CMP_SREG, htonl(e->reg));
		NLA_PUT_U32(m, NFTA_CMP_OP, htonl(e->op));
		if ((inner = nla_nest_start(m, NFTA_CMP_DATA)) == NULL)
			goto nla_put_failure;
		NLA_PUT(m, NFTA_DATA_VALUE, (int)e->dlen, e->data);
		nla_nest_end(m, inner);
		break;
	case SC_NX_IMM:
		NLA_PUT_U32(m, NFTA_IMMEDIATE_DREG, htonl(e->reg));
		if ((inner = nla_nest_start(m, NFTA_IMMEDIATE_DATA)) == NULL ||
		    (verd = nla_nest_start(m, NFTA_DATA_VERDICT)) == NULL)
			goto nla_put_failure;
		NLA_PUT_U32(m, NFTA_VERDICT_CODE, htonl((uint32_t)e->verdict));
		nla_nest_end(m, verd);
		nla_nest_end(m, inner);
		break;
	case SC_NX_PAYLOAD:
		NLA_PUT_U32(m, NFTA_PAYLOAD_DREG, htonl(e->reg));
		NLA_PUT_U32(m, NFTA_PAYLOAD_BASE, htonl(e->base));
		NLA_PUT_U32(m, NFTA_PAYLOAD_OFFSET, htonl(e->offset));
		NLA_PUT_U32(m, NFTA_PAYLOAD_LEN, htonl(e->len));
		break;
	default: /* counter: starts at zero, no attributes needed */
		break;
	}
	/* A counter's NFTA_EXPR_DATA stays, empty, as nftables sends it. */
	nla_nest_end_keep_empty(m, data);
	nla_nest_end(m, elem);
	return 0;
nla_put_failure:
	return -E2BIG;
}

static void
sc_nb_rule(struct sc_nb *b, const struct sc_nft_rule *r)
{
	struct nlattr *list;
	struct nl_msg *m;
	size_t i;

	m = sc_nb_msg(b, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWRULE,
	    NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, r->family, 0);
	if (m == NULL)
		return;
	NLA_PUT_STRING(m, NFTA_RULE_TABLE, r->table);
	NLA_PUT_STRING(m, NFTA_RULE_CHAIN, r->chain);
	if ((list = nla_nest_start(m, NFTA_RULE_EXPRESSIONS)) == NULL)
		goto nla_put_failure;
	for (i = 0; i < r->n; i++) {
		if (sc_put_expr(m, &r->e[i]) < 0)
			goto nla_put_failure;
	}
	nla_nest_end(m, list);
	return;
nla_put_failure:
	b->err = -E2BIG;
}

static void
sc_nb_chain(struct sc_nb *b, int family, const char *name, uint32_t hooknum,
    const char *dev)
{
	struct nlattr *hook;
	struct nl_msg *m;

	m = sc_nb_msg(b, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWCHAIN,
	    NLM_F_CREATE | NLM_F_ACK, family, 0);
	if (m == NULL)
		return;
	NLA_PUT_STRING(m, NFTA_CHAIN_TABLE, SC_NFT_TABLE);
	NLA_PUT_STRING(m, NFTA_CHAIN_NAME, name);
	if ((hook = nla_nest_start(m, NFTA_CHAIN_HOOK)) == NULL)
		goto nla_put_failure;
	NLA_PUT_U32(m, NFTA_HOOK_HOOKNUM, htonl(hooknum));
	NLA_PUT_U32(m, NFTA_HOOK_PRIORITY, htonl((uint32_t)SC_NFT_PRIO));
	if (dev != NULL)
		NLA_PUT_STRING(m, NFTA_HOOK_DEV, dev);
	nla_nest_end(m, hook);
	NLA_PUT_U32(m, NFTA_CHAIN_POLICY, htonl(NF_ACCEPT));
	NLA_PUT_STRING(m, NFTA_CHAIN_TYPE, "filter");
	return;
nla_put_failure:
	b->err = -E2BIG;
}

static void
sc_nb_table(struct sc_nb *b, int msgtype, int family)
{
	struct nl_msg *m;

	m = sc_nb_msg(b, NFNL_SUBSYS_NFTABLES << 8 | msgtype,
	    msgtype == NFT_MSG_NEWTABLE ? NLM_F_CREATE | NLM_F_ACK : NLM_F_ACK,
	    family, 0);
	if (m == NULL)
		return;
	NLA_PUT_STRING(m, NFTA_TABLE_NAME, SC_NFT_TABLE);
	if (msgtype == NFT_MSG_NEWTABLE)
		NLA_PUT_U32(m, NFTA_TABLE_FLAGS, 0);
	return;
nla_put_failure:
	b->err = -E2BIG;
}

static void
sc_nb_batch(struct sc_nb *b, int type)
{
	sc_nb_msg(b, type, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
}

/* ------------------------------------------------------------ the socket */

/* What a socket receives: the acks of a batch, or a dump into D.  ERR is
 * the first failure; for a batch, the kernel's errno itself, not libnl's
 * NLE_* for it: the caller tells EOPNOTSUPP and ENOENT (no egress hook)
 * from other refusals. */
struct sc_rx {
	struct sc_dump *d;      /* NULL while a batch is answered */
	unsigned acks;
	int err;
};

static int sc_dump_keep(struct sc_dump *d, struct nlmsghdr *nlh);

/* One object of a dump; one that does not parse ends the read-back: a rule
 * we cannot understand is a rule we cannot vouch for. */
static int
sc_rx_valid(struct nl_msg *msg, void *arg)
{
	struct sc_rx *rx = arg;

	if (rx->d == NULL)
		return NL_OK;
	rx->err = sc_dump_keep(rx->d, nlmsg_hdr(msg));
	return rx->err < 0 ? NL_STOP : NL_OK;
}

/* An ack: a batch counts it; a dump asks for none. */
static int
sc_rx_ack(struct nl_msg *msg, void *arg)
{
	struct sc_rx *rx = arg;

	(void)msg;
	rx->acks++;
	if (rx->d != NULL)
		rx->err = -EBADMSG;
	return rx->d != NULL ? NL_STOP : NL_OK;
}

/* An error: a batch counts it and reads on; a dump ends there. */
static int
sc_rx_nack(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct sc_rx *rx = arg;

	(void)nla;
	rx->acks++;
	if (rx->err == 0 && e->error < 0)
		rx->err = e->error;
	if (rx->d == NULL)
		return NL_SKIP;
	if (rx->err == 0)
		rx->err = -EBADMSG;
	return NL_STOP;
}

/* A netfilter netlink socket whose answers go to RX. */
static int
sc_nft_open(struct nl_sock **out, struct sc_rx *rx)
{
	struct timeval tv = { 5, 0 };
	struct nl_sock *sk;
	int err;

	*out = NULL;
	sk = nl_socket_alloc();
	if (sk == NULL)
		return -ENOMEM;
	/* Each message asks for its ack itself (nfnetlink acks no batch
	 * begin or end); libnl must not add NLM_F_ACK to all. */
	nl_socket_disable_auto_ack(sk);
	err = nl_connect(sk, NETLINK_NETFILTER);
	if (err >= 0)
		err = nl_socket_set_buffer_size(sk, SC_NFT_SOCKBUF, SC_NFT_SOCKBUF);
	if (err >= 0)
		err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, sc_rx_valid, rx);
	if (err >= 0)
		err = nl_socket_modify_cb(sk, NL_CB_ACK, NL_CB_CUSTOM, sc_rx_ack, rx);
	if (err >= 0)
		err = nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, sc_rx_nack, rx);
	if (err < 0) {
		err = br_nlerr(err);
		goto fail;
	}
	/* A kernel that never answers must not hang the sidecar's start. */
	if (setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) < 0) {
		err = -errno;
		goto fail;
	}
	*out = sk;
	return 0;
fail:
	nl_socket_free(sk);
	return err;
}

/*
 * Send the batch and collect one ack per message that asked for one.
 * Returns 0 or the first error the kernel reported (negative errno).
 */
static int
sc_nft_talk(struct sc_nb *b, const char *what)
{
	struct iovec iov[SC_NFT_MAX_MSGS];
	struct sc_rx rx = { NULL, 0, 0 };
	struct nl_sock *sk = NULL;
	size_t i;
	int err;

	if (b->err < 0) {
		sc_logerr(b->err, "nftables: %s: cannot build the batch", what);
		return b->err;
	}
	err = sc_nft_open(&sk, &rx);
	if (err < 0) {
		sc_logerr(err, "nftables: %s: cannot open a netfilter netlink socket", what);
		return err;
	}
	for (i = 0; i < b->n; i++) {
		nl_complete_msg(sk, b->m[i]);
		iov[i].iov_base = nlmsg_hdr(b->m[i]);
		iov[i].iov_len = nlmsg_hdr(b->m[i])->nlmsg_len;
	}
	/* One sendmsg(), so one datagram: nfnetlink takes a batch only whole
	 * from one skb. */
	err = nl_send_iovec(sk, b->m[0], iov, (unsigned)b->n);
	if (err < 0) {
		err = br_nlerr(err);
		sc_logerr(err, "nftables: %s: send", what);
		goto out;
	}
	while (rx.acks < b->n_ack) {
		err = nl_recvmsgs_default(sk);
		if (err < 0) {
			err = br_nlerr(err);
			sc_logerr(err, "nftables: %s: no answer from the kernel", what);
			goto out;
		}
	}
	err = rx.err;
	if (err < 0)
		sc_logerr(err, "nftables: %s: the kernel refused the batch", what);
out:
	nl_socket_free(sk);
	return err;
}

int
sc_nft_install(uid_t proxy_uid, const struct sc_nft_ifaces *ifs)
{
	struct sc_nb b;
	struct sc_nft_rule r[16];
	char chain[64];
	size_t n, i, k;
	int err;

	memset(&b, 0, sizeof(b));
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
	err = sc_nft_talk(&b, "install");
	sc_nb_free(&b);
	return err;
}

int
sc_nft_remove(void)
{
	struct sc_nb b;
	int err;

	memset(&b, 0, sizeof(b));
	sc_nb_batch(&b, NFNL_MSG_BATCH_BEGIN);
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_INET);
	sc_nb_table(&b, NFT_MSG_DELTABLE, NFPROTO_INET);
	sc_nb_table(&b, NFT_MSG_NEWTABLE, NFPROTO_NETDEV);
	sc_nb_table(&b, NFT_MSG_DELTABLE, NFPROTO_NETDEV);
	sc_nb_batch(&b, NFNL_MSG_BATCH_END);
	err = sc_nft_talk(&b, "remove");
	sc_nb_free(&b);
	return err;
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

#define SC_FSIZE(type, field) sizeof(((type *)NULL)->field)
#define SC_BIT(t) (1u << (t))
/* Integers are exactly four or eight bytes, as nf_tables writes them: libnl
 * checks the minimum of the type and the maximum given. */
#define SC_BE32 { .type = NLA_U32, .maxlen = 4 }
#define SC_BE64 { .type = NLA_U64, .maxlen = 8 }
/* A NUL-terminated string that fits in N bytes. */
#define SC_STR(n) { .type = NLA_STRING, .maxlen = (n) }
#define SC_NEST { .type = NLA_NESTED }
/* Room for the attributes of any expression the sidecar reads. */
#define SC_EXPR_TB 16

_Static_assert(NFTA_META_MAX < SC_EXPR_TB && NFTA_CMP_MAX < SC_EXPR_TB &&
    NFTA_IMMEDIATE_MAX < SC_EXPR_TB && NFTA_COUNTER_MAX < SC_EXPR_TB &&
    NFTA_PAYLOAD_MAX < SC_EXPR_TB, "an expression's attributes fit SC_EXPR_TB");

static const struct nla_policy sc_table_policy[NFTA_TABLE_MAX + 1] = {
	[NFTA_TABLE_NAME] = SC_STR(SC_FSIZE(struct sc_nft_table, name)),
	[NFTA_TABLE_FLAGS] = SC_BE32,
}, sc_chain_policy[NFTA_CHAIN_MAX + 1] = {
	[NFTA_CHAIN_TABLE] = SC_STR(SC_FSIZE(struct sc_nft_chain, table)),
	[NFTA_CHAIN_NAME] = SC_STR(SC_FSIZE(struct sc_nft_chain, name)),
	[NFTA_CHAIN_TYPE] = SC_STR(SC_FSIZE(struct sc_nft_chain, type)),
	[NFTA_CHAIN_POLICY] = SC_BE32, [NFTA_CHAIN_HOOK] = SC_NEST,
}, sc_hook_policy[NFTA_HOOK_MAX + 1] = {
	[NFTA_HOOK_HOOKNUM] = SC_BE32, [NFTA_HOOK_PRIORITY] = SC_BE32,
	[NFTA_HOOK_DEV] = SC_STR(IFNAMSIZ), [NFTA_HOOK_DEVS] = SC_NEST,
}, sc_device_policy[NFTA_DEVICE_MAX + 1] = {
	[NFTA_DEVICE_NAME] = SC_STR(IFNAMSIZ),
}, sc_rule_policy[NFTA_RULE_MAX + 1] = {
	[NFTA_RULE_TABLE] = SC_STR(SC_FSIZE(struct sc_nft_rule, table)),
	[NFTA_RULE_CHAIN] = SC_STR(SC_FSIZE(struct sc_nft_rule, chain)),
	[NFTA_RULE_EXPRESSIONS] = SC_NEST,
}, sc_expr_policy[NFTA_EXPR_MAX + 1] = {
	[NFTA_EXPR_NAME] = SC_STR(32), [NFTA_EXPR_DATA] = SC_NEST,
}, sc_meta_policy[NFTA_META_MAX + 1] = {
	[NFTA_META_KEY] = SC_BE32, [NFTA_META_DREG] = SC_BE32,
}, sc_cmp_policy[NFTA_CMP_MAX + 1] = {
	[NFTA_CMP_SREG] = SC_BE32, [NFTA_CMP_OP] = SC_BE32, [NFTA_CMP_DATA] = SC_NEST,
}, sc_imm_policy[NFTA_IMMEDIATE_MAX + 1] = {
	[NFTA_IMMEDIATE_DREG] = SC_BE32, [NFTA_IMMEDIATE_DATA] = SC_NEST,
}, sc_counter_policy[NFTA_COUNTER_MAX + 1] = {
	[NFTA_COUNTER_PACKETS] = SC_BE64, [NFTA_COUNTER_BYTES] = SC_BE64,
}, sc_payload_policy[NFTA_PAYLOAD_MAX + 1] = {
	[NFTA_PAYLOAD_DREG] = SC_BE32, [NFTA_PAYLOAD_BASE] = SC_BE32,
	[NFTA_PAYLOAD_OFFSET] = SC_BE32, [NFTA_PAYLOAD_LEN] = SC_BE32,
}, sc_data_policy[NFTA_DATA_MAX + 1] = {
	[NFTA_DATA_VALUE] = { .type = NLA_BINARY,
	    .maxlen = SC_FSIZE(struct sc_nft_expr, data) },
	[NFTA_DATA_VERDICT] = SC_NEST,
}, sc_verdict_policy[NFTA_VERDICT_MAX + 1] = {
	[NFTA_VERDICT_CODE] = SC_BE32,
};

/*
 * What nla_parse() (libnl 3.7) leaves out, checked on the stream [HEAD,
 * HEAD+LEN) it just parsed into TB.  The attributes must fill the stream:
 * nla_parse() stops quietly at one that claims more bytes than are left,
 * and a read-back that skipped the rest would vouch for what it never saw.
 * An attribute POLICY names must appear once: the kernel writes each once,
 * and of two, TB keeps only the last.  Returns -EBADMSG, else 1 when every
 * attribute is of a type in KNOWN (bit N for type N), 0 when not.
 */
static int
sc_nla_check(struct nlattr **tb, int maxtype, struct nlattr *head, int len,
    const struct nla_policy *policy, uint32_t known)
{
	struct nlattr *a;
	int rem, t, all = 1;

	nla_for_each_attr(a, head, len, rem) {
		t = nla_type(a);
		if (t <= maxtype && policy[t].type != NLA_UNSPEC && tb[t] != a)
			return -EBADMSG;
		if (t >= 32 || !(known & SC_BIT(t)))
			all = 0;
	}
	return rem > 0 ? -EBADMSG : all;
}

static int
sc_parse_nested(struct nlattr **tb, int maxtype, struct nlattr *nest,
    const struct nla_policy *policy, uint32_t known)
{
	if (nla_parse_nested(tb, maxtype, nest, policy) < 0)
		return -EBADMSG;
	return sc_nla_check(tb, maxtype, nla_data(nest), nla_len(nest), policy, known);
}

/* Attributes a policy has checked; absent ones read as 0 or "". */
static uint32_t
sc_be32(const struct nlattr *a)
{
	return a != NULL ? ntohl(nla_get_u32(a)) : 0;
}

static void
sc_str(char *out, size_t size, const struct nlattr *a)
{
	if (a != NULL)
		nla_strlcpy(out, a, size);
}

/* The attributes of NLH, a message of subsystem nf_tables and type WANT,
 * into TB; 1 when parsed, 0 when it is another message, or -EBADMSG. */
static int
sc_msg_parse(struct nlmsghdr *nlh, int want, struct nlattr **tb, int maxtype,
    const struct nla_policy *policy, int *family)
{
	const struct nfgenmsg *nfg;

	if (nlh->nlmsg_len < NLMSG_HDRLEN)
		return -EBADMSG;
	if (nlh->nlmsg_type != (NFNL_SUBSYS_NFTABLES << 8 | want))
		return 0;
	if (nlmsg_parse(nlh, sizeof(*nfg), tb, maxtype, policy) < 0 ||
	    sc_nla_check(tb, maxtype, nlmsg_attrdata(nlh, sizeof(*nfg)),
	    nlmsg_attrlen(nlh, sizeof(*nfg)), policy, 0) < 0)
		return -EBADMSG;
	nfg = nlmsg_data(nlh);
	*family = nfg->nfgen_family;
	return 1;
}

/* NFTA_DATA_VALUE or NFTA_DATA_VERDICT inside a cmp or immediate. */
static int
sc_parse_data(struct nlattr *nest, struct sc_nft_expr *e)
{
	struct nlattr *tb[NFTA_DATA_MAX + 1], *v[NFTA_VERDICT_MAX + 1];
	int rc, vrc = 1;

	rc = sc_parse_nested(tb, NFTA_DATA_MAX, nest, sc_data_policy,
	    SC_BIT(NFTA_DATA_VALUE) | SC_BIT(NFTA_DATA_VERDICT));
	if (rc >= 0 && tb[NFTA_DATA_VERDICT] != NULL)
		vrc = sc_parse_nested(v, NFTA_VERDICT_MAX, tb[NFTA_DATA_VERDICT],
		    sc_verdict_policy, SC_BIT(NFTA_VERDICT_CODE));
	if (rc < 0 || vrc < 0)
		return -EBADMSG;
	if (tb[NFTA_DATA_VALUE] != NULL) {
		e->dlen = (uint32_t)nla_len(tb[NFTA_DATA_VALUE]);
		memcpy(e->data, nla_data(tb[NFTA_DATA_VALUE]), e->dlen);
	}
	if (tb[NFTA_DATA_VERDICT] != NULL && v[NFTA_VERDICT_CODE] != NULL) {
		e->verdict = (int32_t)sc_be32(v[NFTA_VERDICT_CODE]);
		e->has_verdict = 1;
	}
	if (rc == 0 || vrc == 0)
		e->kind = SC_NX_OTHER; /* a jump target, ... */
	return 0;
}

/* One NFTA_LIST_ELEM of NFTA_RULE_EXPRESSIONS. */
static int
sc_parse_expr(struct nlattr *elem, struct sc_nft_expr *e)
{
	/* Per kind, the attributes we write: any other changes what the
	 * expression does (deny by default), e.g. SREG, a "meta set", or for
	 * payload SREG or a checksum, a payload write. */
	static const struct {
		const char *name;
		int kind;
		int maxtype;
		const struct nla_policy *policy;
		uint32_t known;
	} kinds[] = {
		{ "meta", SC_NX_META, NFTA_META_MAX, sc_meta_policy,
		  SC_BIT(NFTA_META_KEY) | SC_BIT(NFTA_META_DREG) },
		{ "cmp", SC_NX_CMP, NFTA_CMP_MAX, sc_cmp_policy,
		  SC_BIT(NFTA_CMP_SREG) | SC_BIT(NFTA_CMP_OP) | SC_BIT(NFTA_CMP_DATA) },
		{ "immediate", SC_NX_IMM, NFTA_IMMEDIATE_MAX, sc_imm_policy,
		  SC_BIT(NFTA_IMMEDIATE_DREG) | SC_BIT(NFTA_IMMEDIATE_DATA) },
		{ "counter", SC_NX_COUNTER, NFTA_COUNTER_MAX, sc_counter_policy,
		  SC_BIT(NFTA_COUNTER_PACKETS) | SC_BIT(NFTA_COUNTER_BYTES) |
		  SC_BIT(NFTA_COUNTER_PAD) },
		{ "payload", SC_NX_PAYLOAD, NFTA_PAYLOAD_MAX, sc_payload_policy,
		  SC_BIT(NFTA_PAYLOAD_DREG) | SC_BIT(NFTA_PAYLOAD_BASE) |
		  SC_BIT(NFTA_PAYLOAD_OFFSET) | SC_BIT(NFTA_PAYLOAD_LEN) },
	};
	struct nlattr *tb[NFTA_EXPR_MAX + 1], *d[SC_EXPR_TB];
	char name[32] = "";
	size_t k;
	int rc;

	memset(e, 0, sizeof(*e));
	if (sc_parse_nested(tb, NFTA_EXPR_MAX, elem, sc_expr_policy, 0) < 0)
		return -EBADMSG;
	sc_str(name, sizeof(name), tb[NFTA_EXPR_NAME]);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		if (strcmp(name, kinds[k].name) == 0)
			break;
	}
	if (k == sizeof(kinds) / sizeof(kinds[0]))
		return 0; /* SC_NX_OTHER */
	e->kind = kinds[k].kind;
	if (tb[NFTA_EXPR_DATA] == NULL)
		return 0;
	rc = sc_parse_nested(d, kinds[k].maxtype, tb[NFTA_EXPR_DATA], kinds[k].policy,
	    kinds[k].known);
	if (rc < 0)
		return -EBADMSG;
	switch (e->kind) {
	case SC_NX_META:
		e->key = sc_be32(d[NFTA_META_KEY]);
		e->reg = sc_be32(d[NFTA_META_DREG]);
		break;
	case SC_NX_CMP:
		e->reg = sc_be32(d[NFTA_CMP_SREG]);
		e->op = sc_be32(d[NFTA_CMP_OP]);
		if (d[NFTA_CMP_DATA] != NULL && sc_parse_data(d[NFTA_CMP_DATA], e) < 0)
			return -EBADMSG;
		break;
	case SC_NX_IMM:
		e->reg = sc_be32(d[NFTA_IMMEDIATE_DREG]);
		if (d[NFTA_IMMEDIATE_DATA] != NULL &&
		    sc_parse_data(d[NFTA_IMMEDIATE_DATA], e) < 0)
			return -EBADMSG;
		break;
	case SC_NX_COUNTER:
		/* nla_get_u64() reads an absent attribute as 0. */
		e->packets = be64toh(nla_get_u64(d[NFTA_COUNTER_PACKETS]));
		e->bytes = be64toh(nla_get_u64(d[NFTA_COUNTER_BYTES]));
		break;
	case SC_NX_PAYLOAD:
		e->reg = sc_be32(d[NFTA_PAYLOAD_DREG]);
		e->base = sc_be32(d[NFTA_PAYLOAD_BASE]);
		e->offset = sc_be32(d[NFTA_PAYLOAD_OFFSET]);
		e->len = sc_be32(d[NFTA_PAYLOAD_LEN]);
		break;
	}
	if (rc == 0)
		e->kind = SC_NX_OTHER;
	return 0;
}

int
sc_nft_parse_rule(struct nlmsghdr *nlh, struct sc_nft_rule *r)
{
	struct nlattr *tb[NFTA_RULE_MAX + 1], *a;
	int rc, rem;

	memset(r, 0, sizeof(*r));
	rc = sc_msg_parse(nlh, NFT_MSG_NEWRULE, tb, NFTA_RULE_MAX, sc_rule_policy,
	    &r->family);
	if (rc <= 0)
		return rc;
	sc_str(r->table, sizeof(r->table), tb[NFTA_RULE_TABLE]);
	sc_str(r->chain, sizeof(r->chain), tb[NFTA_RULE_CHAIN]);
	if (tb[NFTA_RULE_COMPAT] != NULL)
		r->other = 1; /* an xtables match: not ours */
	/* Handle, position, userdata, pad: descriptive. */
	if (tb[NFTA_RULE_EXPRESSIONS] == NULL)
		return 1;
	nla_for_each_nested(a, tb[NFTA_RULE_EXPRESSIONS], rem) {
		if (nla_type(a) != NFTA_LIST_ELEM)
			return -EBADMSG;
		if (r->n >= SC_NFT_MAX_EXPR) {
			r->other = 1;
			continue;
		}
		rc = sc_parse_expr(a, &r->e[r->n]);
		if (rc < 0)
			return rc;
		if (r->e[r->n].kind == SC_NX_OTHER)
			r->other = 1;
		r->n++;
	}
	return rem > 0 ? -EBADMSG : 1;
}

/* A device list (NFTA_HOOK_DEVS): our chains have exactly one device, which
 * is recorded; a list of more, of something else, or of another device than
 * NFTA_HOOK_DEV reads as "*", which no check accepts. */
static int
sc_parse_devs(struct nlattr *devs, int has_dev, struct sc_nft_chain *c)
{
	struct nlattr *tb[NFTA_DEVICE_MAX + 1], *a;
	int rem, n = 0;

	nla_for_each_nested(a, devs, rem)
		n++;
	if (rem > 0 ||
	    (n == 1 && sc_parse_nested(tb, NFTA_DEVICE_MAX, devs, sc_device_policy, 0) < 0))
		return -EBADMSG;
	if (n == 1 && tb[NFTA_DEVICE_NAME] != NULL &&
	    (!has_dev || nla_strcmp(tb[NFTA_DEVICE_NAME], c->dev) == 0))
		sc_str(c->dev, sizeof(c->dev), tb[NFTA_DEVICE_NAME]);
	else if (n > 0)
		snprintf(c->dev, sizeof(c->dev), "*");
	return 0;
}

int
sc_nft_parse_chain(struct nlmsghdr *nlh, struct sc_nft_chain *c)
{
	struct nlattr *tb[NFTA_CHAIN_MAX + 1], *hk[NFTA_HOOK_MAX + 1];
	int rc;

	memset(c, 0, sizeof(*c));
	rc = sc_msg_parse(nlh, NFT_MSG_NEWCHAIN, tb, NFTA_CHAIN_MAX, sc_chain_policy,
	    &c->family);
	if (rc <= 0)
		return rc;
	sc_str(c->table, sizeof(c->table), tb[NFTA_CHAIN_TABLE]);
	sc_str(c->name, sizeof(c->name), tb[NFTA_CHAIN_NAME]);
	sc_str(c->type, sizeof(c->type), tb[NFTA_CHAIN_TYPE]);
	if (tb[NFTA_CHAIN_POLICY] != NULL) {
		c->policy = sc_be32(tb[NFTA_CHAIN_POLICY]);
		c->has_policy = 1;
	}
	if (tb[NFTA_CHAIN_HOOK] == NULL)
		return 1;
	c->has_hook = 1;
	if (sc_parse_nested(hk, NFTA_HOOK_MAX, tb[NFTA_CHAIN_HOOK], sc_hook_policy, 0) < 0)
		return -EBADMSG;
	c->hooknum = sc_be32(hk[NFTA_HOOK_HOOKNUM]);
	c->priority = (int32_t)sc_be32(hk[NFTA_HOOK_PRIORITY]);
	sc_str(c->dev, sizeof(c->dev), hk[NFTA_HOOK_DEV]);
	/* The kernel sends both for one device. */
	if (hk[NFTA_HOOK_DEVS] != NULL &&
	    sc_parse_devs(hk[NFTA_HOOK_DEVS], hk[NFTA_HOOK_DEV] != NULL, c) < 0)
		return -EBADMSG;
	return 1;
}

int
sc_nft_parse_table(struct nlmsghdr *nlh, struct sc_nft_table *t)
{
	struct nlattr *tb[NFTA_TABLE_MAX + 1];
	int rc;

	memset(t, 0, sizeof(*t));
	rc = sc_msg_parse(nlh, NFT_MSG_NEWTABLE, tb, NFTA_TABLE_MAX, sc_table_policy,
	    &t->family);
	if (rc <= 0)
		return rc;
	sc_str(t->name, sizeof(t->name), tb[NFTA_TABLE_NAME]);
	t->flags = sc_be32(tb[NFTA_TABLE_FLAGS]);
	return 1;
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
	int msgtype;            /* of the dump under way */
};

/* Keep NLH, one message of a MSGTYPE dump, when it is of our table. */
static int
sc_dump_keep(struct sc_dump *d, struct nlmsghdr *nlh)
{
	int rc;

	if (d->msgtype == NFT_MSG_GETTABLE) {
		struct sc_nft_table t;

		rc = sc_nft_parse_table(nlh, &t);
		if (rc == 1 && strcmp(t.name, SC_NFT_TABLE) == 0) {
			if (d->n_tables < 8)
				d->tables[d->n_tables++] = t;
			else
				d->overflow = 1;
		}
	} else if (d->msgtype == NFT_MSG_GETCHAIN) {
		struct sc_nft_chain c;

		rc = sc_nft_parse_chain(nlh, &c);
		if (rc == 1 && strcmp(c.table, SC_NFT_TABLE) == 0) {
			if (d->n_chains < SC_NFT_MAX_CHAINS)
				d->chains[d->n_chains++] = c;
			else
				d->overflow = 1;
		}
	} else {
		/* Parsed aside first: only rules of our table count towards
		 * the bound, however many other tables of the family hold. */
		rc = sc_nft_parse_rule(nlh, &d->scratch);
		if (rc == 1 && strcmp(d->scratch.table, SC_NFT_TABLE) == 0) {
			if (d->n_rules < SC_NFT_MAX_RULES)
				d->rules[d->n_rules++] = d->scratch;
			else
				d->overflow = 1;
		}
	}
	return rc < 0 ? rc : 0;
}

/* Dump MSGTYPE objects of FAMILY and keep those of our table. */
static int
sc_nft_dump(struct nl_sock *sk, struct sc_rx *rx, int msgtype, int family)
{
	struct nfgenmsg nfg;
	int err;

	memset(&nfg, 0, sizeof(nfg));
	nfg.nfgen_family = (uint8_t)family;
	nfg.version = NFNETLINK_V0;
	rx->d->msgtype = msgtype;
	rx->err = 0;
	err = nl_send_simple(sk, NFNL_SUBSYS_NFTABLES << 8 | msgtype, NLM_F_DUMP, &nfg,
	    sizeof(nfg));
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	if (rx->err < 0)
		return rx->err;
	return err < 0 ? br_nlerr(err) : 0;
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
	struct nl_sock *sk = NULL;
	struct sc_rx rx = { NULL, 0, 0 };
	int err, fam, i;
	size_t k, t, n_ours;
	static const int fams[] = { NFPROTO_INET, NFPROTO_NETDEV };

	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	rx.d = d;
	err = sc_nft_open(&sk, &rx);
	if (err < 0) {
		sc_logerr(err, "check failed: nftables: cannot open a netfilter netlink socket");
		goto out;
	}
	for (i = 0; i < 2; i++) {
		fam = fams[i];
		if ((err = sc_nft_dump(sk, &rx, NFT_MSG_GETTABLE, fam)) < 0 ||
		    (err = sc_nft_dump(sk, &rx, NFT_MSG_GETCHAIN, fam)) < 0 ||
		    (err = sc_nft_dump(sk, &rx, NFT_MSG_GETRULE, fam)) < 0) {
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
	nl_socket_free(sk);
	free(d);
	return err;
}
