/*
 * bridge/forward.c: --forward specs and the proxy's CONNECT answer (see
 * forward.h).  The answer comes from the proxy's socket and is treated as
 * hostile: every read is bounded by LEN, no <ctype.h>, no sscanf.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "bridge/addr.h"
#include "bridge/forward.h"

static bool
name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
}

/* A nonzero port, the whole of [S, S+LEN). */
static int
nonzero_port(const char *s, size_t len, unsigned int *out)
{
	if (br_addr_port_parse(s, len, out) < 0 || *out == 0)
		return -EINVAL;
	return 0;
}

int
br_forward_parse(const char *s, struct br_forward *f, const char **why)
{
	const char *host, *end, *w = NULL;
	unsigned int port, hport;
	char v6[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	size_t slen, plen, hlen, i;
	int err = -EINVAL;

	if (s == NULL) {
		w = "no port";
		goto out;
	}
	slen = strlen(s);
	end = memchr(s, ':', slen);
	plen = end != NULL ? (size_t)(end - s) : slen;
	if (nonzero_port(s, plen, &port) < 0) {
		w = "PORT is not a number from 1 to 65535";
		goto out;
	}
	if (end == NULL) {
		/* The proxy's own loopback: where the orchestrator's hooks listen. */
		f->port = (uint16_t)port;
		snprintf(f->target, sizeof(f->target), "127.0.0.1:%u", port);
		err = 0;
		goto out;
	}
	host = end + 1;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (end == NULL || end[1] != ':') {
			w = "expected [IPV6]:HPORT after PORT:";
			goto out;
		}
		hlen = (size_t)(end - host - 1);
		if (hlen == 0 || hlen >= sizeof(v6)) {
			w = "not an IPv6 address";
			goto out;
		}
		memcpy(v6, host + 1, hlen);
		v6[hlen] = '\0';
		if (inet_pton(AF_INET6, v6, &a6) != 1) {
			w = "not an IPv6 address";
			goto out;
		}
		hlen += 2;
		end++;
	} else {
		end = strrchr(host, ':');
		if (end == NULL) {
			w = "expected PORT or PORT:HOST:HPORT";
			goto out;
		}
		hlen = (size_t)(end - host);
		/* Nothing that could end the request line or add a header. */
		for (i = 0; i < hlen; i++) {
			if (!name_char(host[i])) {
				w = "HOST has a character other than letters, digits, '.' and '-' "
				    "(IPv6 goes in brackets)";
				goto out;
			}
		}
		if (hlen == 0 || hlen > 253) {
			w = "HOST is empty or longer than 253 bytes";
			goto out;
		}
	}
	if (nonzero_port(end + 1, slen - (size_t)(end + 1 - s), &hport) < 0) {
		w = "HPORT is not a number from 1 to 65535";
		goto out;
	}
	f->port = (uint16_t)port;
	snprintf(f->target, sizeof(f->target), "%.*s:%u", (int)hlen, host, hport);
	err = 0;
out:
	if (err < 0 && why != NULL)
		*why = w;
	return err;
}

size_t
br_forward_escape(const char *src, size_t len, char *buf, size_t size)
{
	return bs_escape(src, len, buf, size, BS_ESC_TAB_SPACE);
}
