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

static char
lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Does the line [P, P+LEN) start with field name NAME and a colon? */
static bool
field_is(const char *p, size_t len, const char *name)
{
	size_t n = strlen(name), i;

	if (len <= n || p[n] != ':')
		return false;
	for (i = 0; i < n; i++)
		if (lower(p[i]) != name[i])
			return false;
	return true;
}

int
br_reply_parse(const char *buf, size_t len, struct br_reply *out)
{
	static const char proto[] = "HTTP/1.";
	struct br_reply r;
	size_t i, n, line, end, k;

	memset(&r, 0, sizeof(r));
	/* RFC 9112 §4: status-line = HTTP-version SP status-code SP [reason]. */
	n = len < 7 ? len : 7;
	if (memcmp(buf, proto, n) != 0)
		return -EINVAL;
	if (len < 13)
		return 0;
	if (buf[7] < '0' || buf[7] > '9' || buf[8] != ' ')
		return -EINVAL;
	for (i = 9; i < 12; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -EINVAL;
		r.status = r.status * 10 + (buf[i] - '0');
	}
	if (r.status < 100 || (buf[12] != ' ' && buf[12] != '\r'))
		return -EINVAL;
	/* Line by line to the empty one; only CRLF ends a line here. */
	line = 0;
	for (;;) {
		for (end = line; end + 1 < len && !(buf[end] == '\r' && buf[end + 1] == '\n'); end++)
			;
		if (end + 1 >= len)
			return 0;
		if (end == line)
			break;
		if (line > 0 && field_is(buf + line, end - line, "x-postern-reason")) {
			/* RFC 9110 §5.5: optional whitespace around the value. */
			i = line + sizeof("x-postern-reason:") - 1;
			while (i < end && (buf[i] == ' ' || buf[i] == '\t'))
				i++;
			for (k = 0; i < end && k + 1 < sizeof(r.reason); i++, k++) {
				char ch = buf[i];

				if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				    (ch >= '0' && ch <= '9') || ch == '_'))
					break;
				r.reason[k] = ch;
			}
			r.reason[k] = '\0';
		}
		line = end + 2;
	}
	r.head_len = end + 2;
	*out = r;
	return 1;
}

size_t
br_forward_escape(const char *src, size_t len, char *buf, size_t size)
{
	return bs_escape(src, len, buf, size, BS_ESC_TAB_SPACE);
}
