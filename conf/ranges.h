/*
 * conf/ranges.h: the never-reachable address ranges.
 *
 * A host that resolves to any address in these ranges is refused unless the
 * rule that allowed it says "private" or names the address range itself.
 */
#ifndef POSTERN_CONF_RANGES_H
#define POSTERN_CONF_RANGES_H

#include <sys/socket.h>
#include <netinet/in.h>

/*
 * Classify the IPv4 address A (network byte order).  Returns NULL when the
 * address is publicly routable, or a static name of the never-reachable
 * range it falls in (for example "169.254.0.0/16 (link-local, cloud
 * metadata)").
 */
const char *cf_range_v4(const struct in_addr *a);

/*
 * The IPv4 address the IPv6 address A stands for, the one a connection to A
 * ends up at: IPv4-mapped ::ffff:0:0/96 (RFC 4291 2.5.5.2, which a
 * dual-stack socket connects to as IPv4), the NAT64 well-known prefix
 * 64:ff9b::/96 (RFC 6052 2.1, translated to IPv4 on the path) and the
 * deprecated IPv4-compatible ::/96 (RFC 4291 2.5.5.1; :: and ::1 excepted).
 * Stores it in *V4 and returns 1, or returns 0 when A stands for none.
 * 6to4 and Teredo embed the address of a relay or a NAT, not of the peer,
 * so they are not unwrapped here (cf_range_v6() still checks them).  The
 * classifier, the address rules and the own-listener check all use this.
 */
int cf_addr_v4_of(const struct in6_addr *a, struct in_addr *v4);

/*
 * SA itself, or, when SA is an AF_INET6 address that cf_addr_v4_of()
 * unwraps, *TMP filled with that IPv4 address and SA's port.
 */
const struct sockaddr *cf_sockaddr_unmap(const struct sockaddr *sa,
    struct sockaddr_in *tmp);

/*
 * Classify the IPv6 address A.  The IPv4 address it stands for
 * (cf_addr_v4_of()), and the IPv4 embedded in 6to4 (2002::/16) and Teredo
 * (2001::/32, the client address inverted) addresses, is checked as IPv4.
 * Returns NULL or the name of the range, as cf_range_v4().
 */
const char *cf_range_v6(const struct in6_addr *a);

/* Classify a sockaddr of family AF_INET or AF_INET6 (others: "not IP"). */
const char *cf_range_sockaddr(const struct sockaddr *sa);

#endif
