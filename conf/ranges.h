/*
 * conf/ranges.h: the never-reachable address ranges of DESIGN.md.
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
 * Classify the IPv6 address A.  IPv4 embedded in IPv4-mapped
 * (::ffff:0:0/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo
 * (2001::/32, the client address inverted) addresses is checked as IPv4.
 * Returns NULL or the name of the range, as cf_range_v4().
 */
const char *cf_range_v6(const struct in6_addr *a);

/* Classify a sockaddr of family AF_INET or AF_INET6 (others: "not IP"). */
const char *cf_range_sockaddr(const struct sockaddr *sa);

#endif
