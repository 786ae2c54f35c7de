/*
 * sidecar/probe.c: prove the lock-down with real sockets of another uid.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/errno.h>
#include <netlink/cache.h>
#include <netlink/route/route.h>
#include <netlink/route/nexthop.h>

#include "base/super.h"
#include "sidecar/log.h"
#include "sidecar/probe.h"
#include "sidecar/rules.h"

#define SC_PROBE_MAX 16

struct sc_target {
	struct sockaddr_storage ss;
	socklen_t len;
	const char *what; /* "default gateway" or "address" */
	char text[INET6_ADDRSTRLEN + 16];
};

int
sc_probe_addr_valid(const char *s)
{
	struct in6_addr a6;
	struct in_addr a4;

	return inet_pton(AF_INET, s, &a4) == 1 || inet_pton(AF_INET6, s, &a6) == 1;
}

static int
sc_target_set(struct sc_target *t, int family, const void *addr, int ifindex,
    const char *what)
{
	memset(t, 0, sizeof(*t));
	t->what = what;
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&t->ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(53);
		memcpy(&sin->sin_addr, addr, sizeof(sin->sin_addr));
		t->len = sizeof(*sin);
		inet_ntop(AF_INET, addr, t->text, sizeof(t->text));
		return 0;
	}
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&t->ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(53);
		memcpy(&sin6->sin6_addr, addr, sizeof(sin6->sin6_addr));
		/* A link-local gateway (fe80::1, the usual IPv6 router) is
		 * only reachable with its interface as scope. */
		if (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr))
			sin6->sin6_scope_id = (uint32_t)ifindex;
		t->len = sizeof(*sin6);
		inet_ntop(AF_INET6, addr, t->text, sizeof(t->text));
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* The main table's default gateways, at most one per family. */
static int
sc_find_gateways(unsigned families, struct sc_target *t, size_t *n, size_t max,
    unsigned *has_default)
{
	struct nl_sock *sk;
	struct nl_cache *cache = NULL;
	struct nl_object *obj;
	unsigned seen = 0;
	int err;

	*has_default = 0;
	sk = nl_socket_alloc();
	if (sk == NULL)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0)
		goto nlfail;
	err = rtnl_route_alloc_cache(sk, AF_UNSPEC, 0, &cache);
	if (err < 0)
		goto nlfail;
	for (obj = nl_cache_get_first(cache); obj != NULL; obj = nl_cache_get_next(obj)) {
		struct rtnl_route *route = (struct rtnl_route *)obj;
		struct nl_addr *dst = rtnl_route_get_dst(route);
		int family = rtnl_route_get_family(route), i, nh;
		unsigned bit = family == AF_INET ? SC_FAM_V4 :
		    family == AF_INET6 ? SC_FAM_V6 : 0;

		if (bit == 0 || !(families & bit))
			continue;
		if (rtnl_route_get_table(route) != RT_TABLE_MAIN ||
		    rtnl_route_get_type(route) != RTN_UNICAST ||
		    (dst != NULL && nl_addr_get_prefixlen(dst) != 0))
			continue;
		*has_default |= bit;
		if (seen & bit)
			continue;
		nh = rtnl_route_get_nnexthops(route);
		for (i = 0; i < nh && *n < max; i++) {
			struct rtnl_nexthop *hop = rtnl_route_nexthop_n(route, i);
			struct nl_addr *gw = hop ? rtnl_route_nh_get_gateway(hop) : NULL;
			size_t want = family == AF_INET ? 4 : 16;

			/* The netlink reply is untrusted: the address length
			 * must be the family's before it is copied. */
			if (gw == NULL || nl_addr_get_family(gw) != family ||
			    nl_addr_get_len(gw) != want)
				continue;
			if (sc_target_set(&t[*n], family, nl_addr_get_binary_addr(gw),
			    rtnl_route_nh_get_ifindex(hop), "default gateway") == 0) {
				(*n)++;
				seen |= bit;
				break;
			}
		}
	}
	err = 0;
	goto out;
nlfail:
	sc_logx("cannot read the main routing table: %s", nl_geterror(err));
	err = -EIO;
out:
	nl_cache_free(cache);
	nl_socket_free(sk);
	return err;
}

/*
 * In the child: connect a UDP and a TCP socket to each target as the current
 * uid.  EXPECT_UNREACH: every connect must fail with ENETUNREACH; otherwise
 * the UDP connect must succeed (the proxy's route exists).  Returns the
 * number of failed checks.
 */
static int
sc_probe_targets(const struct sc_target *t, size_t n, int expect_unreach)
{
	static const struct {
		int type;
		const char *name;
	} protos[] = { { SOCK_DGRAM, "udp" }, { SOCK_STREAM, "tcp" } };
	uid_t uid = getuid();
	int failed = 0;
	size_t i, p;

	for (i = 0; i < n; i++) {
		for (p = 0; p < 2; p++) {
			int fd, rc, e;

			if (!expect_unreach && protos[p].type == SOCK_STREAM)
				continue; /* a route lookup is enough */
			fd = socket(t[i].ss.ss_family,
			    protos[p].type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (fd < 0) {
				sc_logerr(errno, "check failed: uid %u: %s socket", (unsigned)uid,
				    protos[p].name);
				failed++;
				continue;
			}
			rc = connect(fd, (const struct sockaddr *)&t[i].ss, t[i].len);
			e = rc == 0 ? 0 : errno;
			close(fd);
			if (expect_unreach && e == ENETUNREACH) {
				sc_logx("check passed: uid %u cannot reach %s %s (%s): ENETUNREACH",
				    (unsigned)uid, t[i].what, t[i].text, protos[p].name);
			} else if (expect_unreach) {
				sc_logx("check failed: uid %u reached for %s %s (%s): %s, not ENETUNREACH",
				    (unsigned)uid, t[i].what, t[i].text, protos[p].name,
				    e == 0 ? "connected" : e == EINPROGRESS ?
				    "connection in progress" : strerror(e));
				failed++;
			} else if (e == 0) {
				sc_logx("check passed: proxy uid %u has a route to %s %s",
				    (unsigned)uid, t[i].what, t[i].text);
			} else {
				sc_logx("check failed: proxy uid %u has no route to %s %s: %s",
				    (unsigned)uid, t[i].what, t[i].text, strerror(e));
				failed++;
			}
		}
	}
	return failed;
}

/* Fork a child that becomes UID/GID with no groups and no capabilities and
 * runs the probe; returns its number of failures or a negative errno. */
static int
sc_probe_as(uid_t uid, gid_t gid, const struct sc_target *t, size_t n,
    int expect_unreach)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int failed, err;

		/* setuid() from root to another uid clears every capability
		 * set, so the probe socket is an ordinary user's socket. */
		err = bs_become(uid, gid);
		if (err < 0) {
			sc_logerr(err, "check failed: probe cannot become uid %u",
			    (unsigned)uid);
			_exit(100);
		}
		failed = sc_probe_targets(t, n, expect_unreach);
		_exit(failed > 99 ? 99 : failed);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (!WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

int
sc_probe_run(const struct sc_probe_opts *o)
{
	static const char *const defaults[] = { SC_PROBE_DEFAULT_V4, SC_PROBE_DEFAULT_V6 };
	struct sc_target t[SC_PROBE_MAX];
	const char *const *addrs = o->n_addrs ? o->addrs : defaults;
	size_t n_addrs = o->n_addrs ? o->n_addrs : 2, n = 0, i, n_pos = 0;
	struct sc_target pos[SC_PROBE_MAX];
	unsigned has_default = 0;
	int err, failed;

	if (o->probe_uid == o->proxy_uid)
		sc_logx("warning: the probe uid is the proxy uid; the probe will fail");
	err = sc_find_gateways(o->families, t, &n, SC_PROBE_MAX, &has_default);
	if (err < 0)
		return err;
	for (i = 0; i < n_addrs && n < SC_PROBE_MAX; i++) {
		unsigned char buf[sizeof(struct in6_addr)];
		int family = strchr(addrs[i], ':') ? AF_INET6 : AF_INET;

		if (inet_pton(family, addrs[i], buf) != 1)
			return -EINVAL;
		if (!(o->families & (family == AF_INET ? SC_FAM_V4 : SC_FAM_V6)))
			continue;
		sc_target_set(&t[n++], family, buf, 0, "address");
	}
	if (n == 0) {
		sc_logx("check failed: nothing to probe");
		return -EPERM;
	}
	/* The proxy's own route is checked only where the family has a
	 * default route: elsewhere nobody has one, and that is fine. */
	for (i = 0; i < n; i++) {
		unsigned bit = t[i].ss.ss_family == AF_INET ? SC_FAM_V4 : SC_FAM_V6;

		if (has_default & bit)
			pos[n_pos++] = t[i];
	}
	if (!(has_default & SC_FAM_V4))
		sc_logx("note: IPv4 has no default route; probing addresses only");
	if ((o->families & SC_FAM_V6) && !(has_default & SC_FAM_V6))
		sc_logx("note: IPv6 has no default route; probing addresses only");
	failed = sc_probe_as(o->probe_uid, o->probe_gid, t, n, 1);
	if (failed < 0)
		return failed;
	err = sc_probe_as(o->proxy_uid, o->proxy_uid, pos, n_pos, 0);
	if (err < 0)
		return err;
	return failed + err == 0 ? 0 : -EPERM;
}

int
sc_probe_gateway(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sc_target t[2];
	unsigned has_default = 0;
	size_t n = 0, i;
	int err;

	err = sc_find_gateways(family == AF_INET ? SC_FAM_V4 : SC_FAM_V6, t, &n, 2,
	    &has_default);
	if (err < 0)
		return err;
	for (i = 0; i < n; i++) {
		if (t[i].ss.ss_family == family) {
			*ss = t[i].ss;
			*len = t[i].len;
			return 1;
		}
	}
	return 0;
}
