/*
 * bridge/nonss.c: the bridge has no name service.
 *
 * libnl's address and protocol helpers (nl_addr_info(), nl_addr_resolve(),
 * nl_ip_proto2str(), ...) call getaddrinfo(), getnameinfo() and
 * getprotobyname(); the bridge calls none of those helpers, but a static
 * link takes the object files that hold them, and with them glibc's
 * resolver and NSS: about 170 KB of a binary that is bind-mounted into
 * every sandbox image, and code that would try to load NSS modules in a
 * root that has none.  Defining these here keeps libc's out: each fails
 * at once, as a lookup must in a sandbox without a network of its own.
 * tests/static-chroot.sh checks that the static bridge holds no resolver
 * or NSS and stays under 1.2 MB stripped.
 */
#include "config.h"

#include <stddef.h>
#include <netdb.h>
#include <sys/socket.h>

int
getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
    struct addrinfo **res)
{
	(void)node;
	(void)service;
	(void)hints;
	*res = NULL;
	return EAI_FAIL;
}

void
freeaddrinfo(struct addrinfo *res)
{
	(void)res;
}

int
getnameinfo(const struct sockaddr *sa, socklen_t salen, char *host, socklen_t hostlen,
    char *serv, socklen_t servlen, int flags)
{
	(void)sa;
	(void)salen;
	(void)host;
	(void)hostlen;
	(void)serv;
	(void)servlen;
	(void)flags;
	return EAI_FAIL;
}

struct protoent *
getprotobyname(const char *name)
{
	(void)name;
	return NULL;
}

struct protoent *
getprotobynumber(int proto)
{
	(void)proto;
	return NULL;
}
