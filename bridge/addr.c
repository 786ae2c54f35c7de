/*
 * bridge/addr.c: listen address parsing and printing (see addr.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "base/cursor.h"
#include "bridge/addr.h"

int
br_addr_port_parse(const char *s, size_t len, unsigned int *out)
{
	uint16_t v;

	if (bs_port_parse(s, len, &v) < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int
br_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
    const char **why)
{
	char host[INET6_ADDRSTRLEN];
	const char *colon, *hs, *close;
	size_t hlen, slen;
	unsigned int port;
	const char *w = NULL;
	int err = -EINVAL;

	if (s == NULL) {
		w = "no address";
		goto out;
	}
	slen = strlen(s);
	if (s[0] == '[') {
		close = memchr(s, ']', slen);
		if (close == NULL) {
			w = "unterminated '[' in IPv6 address";
			goto out;
		}
		if (close[1] != ':') {
			w = "expected ':PORT' after ']'";
			goto out;
		}
		hs = s + 1;
		hlen = (size_t)(close - hs);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL) {
			w = "expected ADDRESS:PORT";
			goto out;
		}
		hs = s;
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen >= sizeof(host)) {
		w = "missing or over-long address";
		goto out;
	}
	memcpy(host, hs, hlen);
	host[hlen] = '\0';
	if (br_addr_port_parse(colon + 1, slen - (size_t)(colon + 1 - s), &port) < 0) {
		w = "port is not a number from 0 to 65535";
		goto out;
	}
	if (s[0] == '[') {
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &sin6.sin6_addr) != 1) {
			w = "not an IPv6 address";
			goto out;
		}
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, &sin6, sizeof(sin6));
		*len = sizeof(sin6);
	} else {
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)port);
		/* A bare IPv6 address must be bracketed, or its port is ambiguous. */
		if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
			w = "not a dotted-quad IPv4 address (IPv6 goes in brackets)";
			goto out;
		}
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, &sin, sizeof(sin));
		*len = sizeof(sin);
	}
	err = 0;
out:
	if (err < 0 && why != NULL)
		*why = w;
	return err;
}

int
br_addr_format(const struct sockaddr *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];
	unsigned int port;
	int n;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		if (inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host)) == NULL)
			return -EINVAL;
		port = ntohs(sin->sin_port);
		n = snprintf(buf, size, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

		if (inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host)) == NULL)
			return -EINVAL;
		port = ntohs(sin6->sin6_port);
		n = snprintf(buf, size, "[%s]:%u", host, port);
	} else {
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return 0;
}
