/*
 * sidecar/probe.h: the live proof of the lock-down.
 *
 * Reading the rules back shows what the kernel was told; the probe shows
 * what it does.  A child process takes another uid and connect()s UDP and TCP
 * sockets towards the main table's default gateways and towards "public"
 * addresses; each must fail with ENETUNREACH at connect() time.  No payload
 * is ever sent (a UDP connect() only looks the route up; a TCP connect() that
 * wrongly finds a route is closed at once).  A second child with the proxy's
 * uid checks that the same destinations do have a route for the proxy, so a
 * pass cannot come from a namespace that simply has no routes.
 */
#ifndef POSTERN_SIDECAR_PROBE_H
#define POSTERN_SIDECAR_PROBE_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* The default "public" probe destinations: documentation addresses (RFC
 * 5737, RFC 3849) that the Internet never routes, so even a probe that
 * finds the door open sends its one SYN nowhere. */
#define SC_PROBE_DEFAULT_V4 "192.0.2.1"
#define SC_PROBE_DEFAULT_V6 "2001:db8::1"

struct sc_probe_opts {
	uid_t proxy_uid;          /* must get a route where one exists */
	uid_t probe_uid;          /* must get ENETUNREACH everywhere */
	gid_t probe_gid;
	unsigned families;        /* SC_FAM_* bits that carry the rules */
	/* Numeric addresses to probe besides the gateways; when N_ADDRS is 0
	 * the two SC_PROBE_DEFAULT_* are used. */
	const char *const *addrs;
	size_t n_addrs;
};

/*
 * Nonzero when S is a numeric IPv4 or IPv6 address (inet_pton), the only
 * thing --probe-addr accepts.
 */
int sc_probe_addr_valid(const char *s);

/*
 * Run the probe described by OPTS in the caller's network namespace; the
 * caller must be root (it forks children that setuid()).  Logs one line per
 * check, "check passed: ..." or "check failed: ...".  Returns 0 when every
 * check passed, -EPERM when one failed, another negative errno when the
 * probe could not run (fork, netlink).
 */
int sc_probe_run(const struct sc_probe_opts *opts);

/*
 * The main table's default gateway of FAMILY (AF_INET or AF_INET6) into *SS
 * and *LEN (port 53; a link-local gateway carries its interface as scope).
 * Returns 1 when there is one, 0 when there is none, or a negative errno.
 */
struct sockaddr_storage;
int sc_probe_gateway(int family, struct sockaddr_storage *ss, socklen_t *len);

#endif
