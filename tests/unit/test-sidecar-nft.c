/*
 * tests/unit/test-sidecar-nft.c: the nf_tables read-back against real kernel bytes.
 *
 * The messages are those a 6.18 kernel sent back for the sidecar's own
 * tables (proxy uid 65532, one interface eth0) and for an unrelated ruleset,
 * kept in the fuzz corpus (tests/fuzz/corpus/sidecar-nft/: first byte the
 * kind, then the payload after the nlmsghdr).  Each of our rules must parse
 * and equal, in order, the rule the sidecar writes; a rule with one value
 * changed, or one of another ruleset, must not.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include "sidecar/nft.h"
#include "tests/unit/tap.h"

/* Read corpus file NAME into a fresh nlmsghdr of its kind; NULL if absent. */
static struct nlmsghdr *
load(const char *name)
{
	static const uint16_t types[] = { NFT_MSG_NEWTABLE, NFT_MSG_NEWCHAIN, NFT_MSG_NEWRULE };
	unsigned char buf[8192];
	char path[512];
	struct nlmsghdr *nlh;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", CORPUS_DIR, name);
	f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n < 1 || buf[0] > 2)
		return NULL;
	nlh = calloc(1, NLMSG_HDRLEN + n - 1);
	if (nlh == NULL)
		return NULL;
	nlh->nlmsg_len = (uint32_t)(NLMSG_HDRLEN + n - 1);
	nlh->nlmsg_type = (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | types[buf[0]]);
	memcpy((char *)nlh + NLMSG_HDRLEN, buf + 1, n - 1);
	return nlh;
}

int
main(void)
{
	struct sc_nft_rule want[16], r;
	struct sc_nft_table t;
	struct sc_nft_chain c;
	struct nlmsghdr *nlh;
	char name[32];
	size_t n, i;
	int k;

	/* The tables: ours, with no flags (not dormant, not owned). */
	nlh = load("kernel-01");
	tap_ok(nlh != NULL && sc_nft_parse_table(nlh, &t) == 1, "table parses");
	tap_ok(strcmp(t.name, "postern") == 0 && t.flags == 0 && t.family == NFPROTO_INET,
	    "inet postern, flags 0");
	free(nlh);

	/* The egress chain: hook, priority, device, policy, type. */
	nlh = load("kernel-06");
	tap_ok(nlh != NULL && sc_nft_parse_chain(nlh, &c) == 1, "egress chain parses");
	tap_ok(c.has_hook && c.hooknum == NF_NETDEV_EGRESS && c.priority == SC_NFT_PRIO &&
	    strcmp(c.dev, "eth0") == 0 && c.has_policy && c.policy == NF_ACCEPT &&
	    strcmp(c.type, "filter") == 0 && strcmp(c.name, "egress-eth0") == 0,
	    "egress-eth0: filter hook egress device eth0 priority -300 policy accept");
	free(nlh);

	/* Our output rules, kernel-11 .. kernel-17, in order. */
	n = sc_nft_expected("output", 65532, want, 16);
	tap_ok(n == 7, "seven output rules expected (got %zu)", n);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "kernel-%02zu", 11 + i);
		nlh = load(name);
		k = nlh ? sc_nft_parse_rule(nlh, &r) : -1;
		tap_ok(k == 1 && strcmp(r.chain, "output") == 0 && sc_nft_rule_equal(&r, &want[i]),
		    "output rule %zu read back equals the one written", i + 1);
		free(nlh);
	}
	n = sc_nft_expected("egress-eth0", 65532, want, 16);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "kernel-%02zu", 18 + i);
		nlh = load(name);
		k = nlh ? sc_nft_parse_rule(nlh, &r) : -1;
		tap_ok(k == 1 && r.family == NFPROTO_NETDEV && sc_nft_rule_equal(&r, &want[i]),
		    "egress rule %zu read back equals the one written", i + 1);
		free(nlh);
	}
	/* The drop rule for another uid is not ours. */
	tap_ok(sc_nft_expected("output", 65533, want, 16) == 7, "rules for uid 65533");
	nlh = load("kernel-17");
	tap_ok(nlh != NULL && sc_nft_parse_rule(nlh, &r) == 1 && !sc_nft_rule_equal(&r, &want[6]),
	    "the drop rule for 65532 is not the one for 65533");
	/* Counters are read, not compared. */
	tap_ok(r.n == 4 && r.e[2].kind == SC_NX_COUNTER, "the drop rule has its counter");
	/* accept instead of drop is not ours. */
	sc_nft_expected("output", 65532, want, 16);
	r.e[3].verdict = NF_ACCEPT;
	tap_ok(!sc_nft_rule_equal(&r, &want[6]), "a drop turned into accept is not ours");
	free(nlh);
	/* A rule of another ruleset (meta skuid 1000 counter reject): the
	 * reject expression is unknown, so the rule is "other". */
	nlh = load("kernel-24");
	tap_ok(nlh != NULL && sc_nft_parse_rule(nlh, &r) == 1 && r.other,
	    "an unknown expression marks the rule as not ours");
	free(nlh);
	/* Truncated: every length is checked. */
	nlh = load("truncated");
	tap_ok(nlh != NULL && sc_nft_parse_rule(nlh, &r) < 0, "a truncated rule is -EBADMSG");
	free(nlh);
	return tap_done();
}
