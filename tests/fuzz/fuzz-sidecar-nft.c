/*
 * tests/fuzz/fuzz-sidecar-nft.c: the sidecar's parsers of nf_tables dump
 * messages (sidecar/nft.c: sc_nft_parse_table, _chain, _rule), fed one
 * netlink message: the first input byte says which kind (0 table, 1 chain,
 * 2 rule), the rest is the payload after the nlmsghdr (a struct nfgenmsg
 * and NFTA_* attributes), as the kernel, or anything else answering on a
 * netlink socket, sends it.  A rule that parses is compared with the rules
 * the sidecar writes.  The seed corpus holds real kernel messages of the
 * sidecar's own tables and of other rulesets, and a few malformed ones.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>

#include "sidecar/nft.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t types[] = { NFT_MSG_NEWTABLE, NFT_MSG_NEWCHAIN, NFT_MSG_NEWRULE };
	struct sc_nft_rule want[16];
	struct sc_nft_table t;
	struct sc_nft_chain c;
	struct sc_nft_rule r;
	struct nlmsghdr *nlh;
	size_t n, i;
	int kind;

	if (size < 1 || size > 65536)
		return 0;
	kind = data[0] % 3;
	data++;
	size--;
	/* An exact-size allocation, so ASan sees any read past the message. */
	nlh = malloc(NLMSG_HDRLEN + size);
	if (nlh == NULL)
		return 0;
	memset(nlh, 0, NLMSG_HDRLEN);
	nlh->nlmsg_len = (uint32_t)(NLMSG_HDRLEN + size);
	nlh->nlmsg_type = (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | types[kind]);
	if (size > 0)
		memcpy((char *)nlh + NLMSG_HDRLEN, data, size);
	if (kind == 0) {
		(void)sc_nft_parse_table(nlh, &t);
	} else if (kind == 1) {
		(void)sc_nft_parse_chain(nlh, &c);
	} else if (sc_nft_parse_rule(nlh, &r) == 1) {
		n = sc_nft_expected(strcmp(r.chain, "output") == 0 ? "output" : "egress-x",
		    65532, want, 16);
		for (i = 0; i < n; i++)
			(void)sc_nft_rule_equal(&r, &want[i]);
	}
	free(nlh);
	return 0;
}
