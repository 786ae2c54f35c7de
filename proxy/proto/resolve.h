/*
 * proxy/proto/resolve.h: a blocking lookup for command-line tools (--explain
 * --resolve), made with the same resolver the proxy uses.
 */
#ifndef POSTERN_PROXY_RESOLVE_H
#define POSTERN_PROXY_RESOLVE_H

#include <stddef.h>
#include <sys/socket.h>

#include "proxy/proto/dns.h"

struct px_resolved {
	size_t naddrs;
	struct sockaddr_storage addrs[PX_DNS_MAX_ADDRS];
};

/*
 * Resolve NAME (normal form) with SERVERS (NULL: /etc/resolv.conf), waiting
 * at most about TIMEOUT_MS.  Returns 0 and fills OUT, or a negative errno
 * with *ERR set to a static message: -ENOMEM or -EINVAL when no lookup
 * could start, -ETIMEDOUT when it did not finish, -EHOSTUNREACH when the
 * name did not resolve.
 */
int px_resolve_sync(const char *name, const char *servers, unsigned timeout_ms,
    struct px_resolved *out, const char **err);

#endif
