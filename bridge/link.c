/*
 * bridge/link.c: the netlink "link up" helper (see link.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stddef.h>
#include <poll.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>

#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>

#include "bridge/link.h"
#include "bridge/nlerr.h"

/* No netlink answer takes longer than this from a kernel that answers. */
#define NL_ANSWER_MS 2000

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

/*
 * libnl's nl_recv(), after waiting at most NL_ANSWER_MS for something to
 * read: a kernel that never answers (or answers in a way libnl does not
 * expect) is an error, never a hang.  Not SO_RCVTIMEO: gVisor's netlink
 * sockets refuse it.
 */
static int
bounded_recv(struct nl_sock *sk, struct sockaddr_nl *nla, unsigned char **buf,
    struct ucred **creds)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
	int n;

	do
		n = poll(&pfd, 1, NL_ANSWER_MS);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -nl_syserr2nlerr(errno);
	if (n == 0)
		return -NLE_AGAIN;
	return nl_recv(sk, nla, buf, creds);
}

/* A NETLINK_ROUTE socket in *SK that reads with bounded_recv().  Returns 0
 * or a negative errno. */
static int
nl_open(struct nl_sock **skp)
{
	struct nl_sock *sk;
	struct nl_cb *cb;
	int err;

	*skp = NULL;
	sk = nl_socket_alloc();
	if (sk == NULL)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0) {
		nl_socket_free(sk);
		return nl_to_errno(err);
	}
	/* The socket's callbacks, which every receive clones. */
	cb = nl_socket_get_cb(sk);
	if (cb == NULL) {
		nl_socket_free(sk);
		return -ENOMEM;
	}
	nl_cb_overwrite_recv(cb, bounded_recv);
	nl_cb_put(cb);
	*skp = sk;
	return 0;
}

/*
 * rtnl_link_get_kernel() without asking for an ACK, on a socket of its
 * own.  libnl reads the answer, then waits for the ACK in a datagram of
 * its own, as Linux sends it; gVisor puts both in one datagram, so that
 * wait would never end.  A request with no ACK has one answer everywhere.
 * Its own socket: libnl's sequence check on a socket counts ACKs, and one
 * not asked for would put a later request's ACK out of step.
 */
static int
link_get(const char *name, struct rtnl_link **link)
{
	struct nl_sock *sk;
	int err;

	err = nl_open(&sk);
	if (err < 0)
		return err;
	nl_socket_disable_auto_ack(sk);
	err = rtnl_link_get_kernel(sk, 0, name, link);
	nl_socket_free(sk);
	return err < 0 ? nl_to_errno(err) : 0;
}

/* Read the link's flags afresh from the kernel into *FLAGS. */
static int
link_flags(const char *name, unsigned int *flags)
{
	struct rtnl_link *link = NULL;
	int err;

	err = link_get(name, &link);
	if (err < 0)
		return err;
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
	err = nl_open(&sk);
	if (err < 0)
		goto out;
	err = link_get(name, &link);
	if (err < 0)
		goto out;
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
	err = link_flags(name, &flags);
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

int
br_link_capture_route(void)
{
	struct nl_sock *sk = NULL;
	struct rtnl_route *route = NULL;
	struct rtnl_nexthop *nh = NULL;
	struct nl_addr *dst = NULL;
	uint32_t net = htonl(BR_LINK_CAPTURE_NET);
	int err, ifindex;

	ifindex = (int)if_nametoindex("lo");
	if (ifindex == 0)
		return -ENODEV;
	route = rtnl_route_alloc();
	nh = rtnl_route_nh_alloc();
	dst = nl_addr_build(AF_INET, &net, sizeof(net));
	if (route == NULL || nh == NULL || dst == NULL) {
		err = -ENOMEM;
		goto out;
	}
	err = nl_open(&sk);
	if (err < 0)
		goto out;
	/* "ip route add local 198.18.0.0/15 dev lo": every address of the
	 * range is this host's (table local, scope host), so the bridge can
	 * bind one per name and a connection to any other gets the kernel's
	 * immediate reset, never leaves. */
	nl_addr_set_prefixlen(dst, BR_LINK_CAPTURE_PREFIX);
	rtnl_route_set_family(route, AF_INET);
	rtnl_route_set_type(route, RTN_LOCAL);
	rtnl_route_set_table(route, RT_TABLE_LOCAL);
	rtnl_route_set_scope(route, RT_SCOPE_HOST);
	rtnl_route_set_protocol(route, RTPROT_STATIC);
	err = rtnl_route_set_dst(route, dst);
	if (err < 0) {
		err = nl_to_errno(err);
		goto out;
	}
	rtnl_route_nh_set_ifindex(nh, ifindex);
	rtnl_route_add_nexthop(route, nh);
	nh = NULL; /* the route's now; rtnl_route_nh_free(NULL) is not a no-op */
	err = rtnl_route_add(sk, route, NLM_F_CREATE | NLM_F_REPLACE);
	if (err < 0)
		err = nl_to_errno(err);
out:
	if (nh != NULL)
		rtnl_route_nh_free(nh);
	nl_addr_put(dst);
	rtnl_route_put(route);
	nl_socket_free(sk);
	return err;
}

int
br_link_capture(void)
{
	int err, fd;

	err = br_link_capture_route();
	if (err < 0)
		return err;
	/* Ports 53, 80 and 443 of the namespace's own addresses for a bridge
	 * that keeps no capability; the namespace has nothing but loopback,
	 * so a low port guards nothing there. */
	fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = write(fd, "0\n", 2) == 2 ? 0 : -errno;
	close(fd);
	return err;
}
