/*
 * sidecar/link.c: "ip link set lo up" with libnl-route-3.
 */
#include "config.h"

#include <errno.h>
#include <net/if.h>

#include <netlink/netlink.h>
#include <netlink/errno.h>
#include <netlink/route/link.h>

#include "sidecar/link.h"
#include "sidecar/log.h"

int
sc_link_up_lo(void)
{
	struct nl_sock *sk;
	struct rtnl_link *lo = NULL, *change = NULL;
	int err;

	sk = nl_socket_alloc();
	if (sk == NULL)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0) {
		sc_logx("netlink: cannot connect: %s", nl_geterror(err));
		err = -EIO;
		goto out;
	}
	err = rtnl_link_get_kernel(sk, 0, "lo", &lo);
	if (err < 0) {
		sc_logx("cannot find the loopback interface: %s", nl_geterror(err));
		err = -ENODEV;
		goto out;
	}
	if (rtnl_link_get_flags(lo) & IFF_UP) {
		err = 0;
		goto out;
	}
	change = rtnl_link_alloc();
	if (change == NULL) {
		err = -ENOMEM;
		goto out;
	}
	rtnl_link_set_flags(change, IFF_UP);
	err = rtnl_link_change(sk, lo, change, 0);
	if (err < 0) {
		sc_logx("cannot bring the loopback interface up: %s", nl_geterror(err));
		err = err == -NLE_PERM ? -EPERM : -EIO;
		goto out;
	}
	err = 0;
out:
	rtnl_link_put(change);
	rtnl_link_put(lo);
	nl_socket_free(sk);
	return err;
}
