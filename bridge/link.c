/*
 * bridge/link.c: the netlink "link up" helper (see link.h).
 */
#include "config.h"

#include <errno.h>
#include <net/if.h>
#include <stddef.h>

#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

#include "bridge/link.h"
#include "bridge/nlerr.h"

/*
 * libnl's codes as errno (bridge/nlerr.h), in a link's words: an object
 * that is not there is no such device, and a refusal is always the
 * missing CAP_NET_ADMIN (EPERM), which the caller names.
 */
static int
nl_to_errno(int nlerr)
{
	int err = br_nlerr(nlerr);

	if (err == -EACCES)
		return -EPERM;
	if (err == -ENOENT)
		return -ENODEV;
	return err;
}

/* Read the link's flags afresh from the kernel into *FLAGS. */
static int
link_flags(struct nl_sock *sk, const char *name, unsigned int *flags)
{
	struct rtnl_link *link = NULL;
	int err;

	err = rtnl_link_get_kernel(sk, 0, name, &link);
	if (err < 0)
		return nl_to_errno(err);
	*flags = rtnl_link_get_flags(link);
	rtnl_link_put(link);
	return 0;
}

int
br_link_up(const char *name, bool *changed)
{
	struct nl_sock *sk = NULL;
	struct rtnl_link *link = NULL, *change = NULL;
	unsigned int flags = 0;
	int err;

	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	sk = nl_socket_alloc();
	if (sk == NULL) {
		err = -ENOMEM;
		goto out;
	}
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0) {
		err = nl_to_errno(err);
		goto out;
	}
	err = rtnl_link_get_kernel(sk, 0, name, &link);
	if (err < 0) {
		err = nl_to_errno(err);
		goto out;
	}
	if (rtnl_link_get_flags(link) & IFF_UP) {
		if (changed != NULL)
			*changed = false;
		err = 0;
		goto out;
	}
	change = rtnl_link_alloc();
	if (change == NULL) {
		err = -ENOMEM;
		goto out;
	}
	rtnl_link_set_flags(change, IFF_UP);
	err = rtnl_link_change(sk, link, change, 0);
	if (err < 0) {
		err = nl_to_errno(err);
		goto out;
	}
	/*
	 * Trust the kernel's word, not the absence of an error: read the
	 * flags back so that "success" always means the link is up.
	 */
	err = link_flags(sk, name, &flags);
	if (err < 0)
		goto out;
	if (!(flags & IFF_UP)) {
		err = -EIO;
		goto out;
	}
	if (changed != NULL)
		*changed = true;
	err = 0;
out:
	rtnl_link_put(change);
	rtnl_link_put(link);
	nl_socket_free(sk);
	return err;
}

int
br_link_up_lo(bool *changed)
{
	return br_link_up("lo", changed);
}
