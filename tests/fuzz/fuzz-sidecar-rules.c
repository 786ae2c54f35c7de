/*
 * tests/fuzz/fuzz-sidecar-rules.c: the sidecar's parser of RTM_GETRULE dump
 * messages (sidecar/rules.c, sc_rule_parse), fed the payload of one netlink
 * message: a struct fib_rule_hdr and its FRA_* attributes, as the kernel (or
 * anything else answering on a netlink socket) sends them.  Whatever
 * parses is then put through the lock-down checker.  The seed corpus holds
 * real kernel messages (the sidecar's rules and many selector kinds) and a
 * few malformed ones.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "sidecar/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nlmsghdr *nlh;
	struct sc_rule r;
	char why[256];
	int family;

	if (size > 65536)
		return 0;
	/* An exact-size allocation, so ASan sees any read past the message. */
	nlh = malloc(NLMSG_HDRLEN + size);
	if (nlh == NULL)
		return 0;
	memset(nlh, 0, NLMSG_HDRLEN);
	nlh->nlmsg_len = (uint32_t)(NLMSG_HDRLEN + size);
	nlh->nlmsg_type = RTM_NEWRULE;
	if (size > 0)
		memcpy((char *)nlh + NLMSG_HDRLEN, data, size);
	family = size > 0 && data[0] == AF_INET6 ? AF_INET6 : AF_INET;
	if (sc_rule_parse(nlh, family, &r) == 1)
		(void)sc_rules_check(family, &r, 1, 65532, why, sizeof(why));
	free(nlh);
	return 0;
}
