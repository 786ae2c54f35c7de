/*
 * conf/host.c: the one host normaliser (see host.h).
 *
 * Everything here treats its input as hostile: it never relies on NUL
 * termination, never uses <ctype.h> (locale-dependent), and never hands
 * untrusted text to a parser that accepts more than we mean to accept
 * (inet_aton(3) accepts "127.1" and "0x7f.1", which is exactly the class of
 * bypass we refuse, so IPv4 is parsed here by hand).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "base/cursor.h"
#include "base/text.h"
#include "conf/host.h"

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int
is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int
cf_hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
is_hex(unsigned char c)
{
	return cf_hex_value(c) >= 0;
}

static unsigned char
to_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

static int
fail(const char **why, const char *msg)
{
	if (why != NULL)
		*why = msg;
	return -EINVAL;
}

int
cf_port_parse(const char *s, size_t len, uint16_t *out, const char **why)
{
	uint16_t v;
	int rc;

	if (len == 0)
		return fail(why, "empty port");
	if (len > 5)
		return fail(why, "port out of range 1-65535");
	/* A leading zero would make "0443" mean 443 to us and something else to
	 * another parser; refuse it, and "0" is not a port. */
	if (s[0] == '0')
		return fail(why, "port with a leading zero or port 0");
	rc = bs_port_parse(s, len, &v);
	if (rc == -EINVAL)
		return fail(why, "port is not plain decimal digits");
	if (rc < 0 || v < 1)
		return fail(why, "port out of range 1-65535");
	*out = v;
	return 0;
}

/*
 * Does the last label of this dotted name look numeric?  Following the
 * WHATWG URL standard's "ends in a number" rule, such a name is an attempt
 * at an IPv4 address, and must then be a canonical dotted quad.  No
 * top-level domain is numeric, so nothing legitimate is lost.
 */
static int
ends_in_number(const char *s, size_t len)
{
	size_t start = len, i;

	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0)
		return 0;
	start = len;
	while (start > 0 && s[start - 1] != '.')
		start--;
	if (start == len)
		return 0;
	if (len - start >= 2 && s[start] == '0' &&
	    (s[start + 1] == 'x' || s[start + 1] == 'X')) {
		for (i = start + 2; i < len; i++)
			if (!is_hex((unsigned char)s[i]))
				return 0;
		return 1;
	}
	for (i = start; i < len; i++)
		if (!is_digit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Exactly four decimal octets, 0-255, no leading zeros, no trailing dot. */
static int
parse_ipv4_canonical(const char *s, size_t len, struct in_addr *out)
{
	uint32_t v = 0;
	size_t i = 0;
	int part;

	for (part = 0; part < 4; part++) {
		unsigned int oct = 0;
		size_t start = i;

		while (i < len && is_digit((unsigned char)s[i])) {
			oct = oct * 10 + (unsigned int)(s[i] - '0');
			if (oct > 255 || i - start >= 3)
				return -1;
			i++;
		}
		if (i == start)
			return -1;
		if (i - start > 1 && s[start] == '0')
			return -1;
		v = (v << 8) | oct;
		if (part < 3) {
			if (i >= len || s[i] != '.')
				return -1;
			i++;
		}
	}
	if (i != len)
		return -1;
	out->s_addr = htonl(v);
	return 0;
}

int
cf_host_parse(const char *s, size_t len, int flags, struct cf_host *out,
    const char **why)
{
	struct cf_host h;
	size_t i, label = 0;

	memset(&h, 0, sizeof(h));
	if (len == 0)
		return fail(why, "empty host");

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80)
			return fail(why, "raw non-ASCII bytes in host (use the xn-- form)");
		if (c < 0x20 || c == 0x7f)
			return fail(why, "control byte in host");
		if (c == '@')
			return fail(why, "userinfo in authority");
		if (c == '%')
			return fail(why, "%-escape or zone identifier in host");
	}

	if (s[0] == '[') {
		char tmp[INET6_ADDRSTRLEN + 1];
		size_t n;

		if (flags & CF_HOST_NO_IP)
			return fail(why, "IP literal where a name is required");
		if (len < 3 || s[len - 1] != ']')
			return fail(why, "unterminated IPv6 literal");
		n = len - 2;
		if (n >= sizeof(tmp))
			return fail(why, "IPv6 literal too long");
		for (i = 1; i < len - 1; i++) {
			unsigned char c = (unsigned char)s[i];
			if (!is_hex(c) && c != ':' && c != '.')
				return fail(why, "bad character in IPv6 literal");
		}
		memcpy(tmp, s + 1, n);
		tmp[n] = '\0';
		if (inet_pton(AF_INET6, tmp, &h.addr.v6) != 1)
			return fail(why, "malformed IPv6 literal");
		h.kind = CF_HOST_IPV6;
		inet_ntop(AF_INET6, &h.addr.v6, h.name, sizeof(h.name));
		*out = h;
		return 0;
	}

	if (ends_in_number(s, len)) {
		if (flags & CF_HOST_NO_IP)
			return fail(why, "IP literal where a name is required");
		/* A trailing dot on an address is not canonical either. */
		if (parse_ipv4_canonical(s, len, &h.addr.v4) != 0)
			return fail(why, "non-canonical IPv4 literal (only a.b.c.d in decimal)");
		h.kind = CF_HOST_IPV4;
		bs_ipv4_text(&h.addr.v4, h.name);
		*out = h;
		return 0;
	}

	/* One trailing dot is the root, and names the same host. */
	if (s[len - 1] == '.')
		len--;
	if (len == 0)
		return fail(why, "empty host");
	if (len > CF_HOST_MAX - 1)
		return fail(why, "host name longer than 253 characters");

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '.') {
			if (label == 0)
				return fail(why, "empty label in host name");
			if (s[i - 1] == '-')
				return fail(why, "label ends with a hyphen");
			label = 0;
			h.name[i] = '.';
			continue;
		}
		if (!is_alpha(c) && !is_digit(c) && c != '-')
			return fail(why, "character not allowed in a host name (letters, digits, hyphen)");
		if (c == '-' && label == 0)
			return fail(why, "label starts with a hyphen");
		if (++label > 63)
			return fail(why, "label longer than 63 characters");
		h.name[i] = (char)to_lower(c);
	}
	if (label == 0)
		return fail(why, "empty label in host name");
	if (s[len - 1] == '-')
		return fail(why, "label ends with a hyphen");
	h.name[len] = '\0';
	h.kind = CF_HOST_NAME;
	*out = h;
	return 0;
}

int
cf_authority_parse(const char *s, size_t len, int flags, struct cf_host *host,
    uint16_t *port, const char **why)
{
	size_t hostlen = len, i;
	uint16_t p = 0;
	int rc;

	for (i = 0; i < len; i++)
		if (s[i] == '@')
			return fail(why, "userinfo in authority");
	if (len == 0)
		return fail(why, "empty authority");

	if (s[0] == '[') {
		const char *end = memchr(s, ']', len);
		if (end == NULL)
			return fail(why, "unterminated IPv6 literal");
		hostlen = (size_t)(end - s) + 1;
		if (hostlen < len) {
			if (s[hostlen] != ':')
				return fail(why, "trailing bytes after IPv6 literal");
			rc = cf_port_parse(s + hostlen + 1, len - hostlen - 1, &p, why);
			if (rc != 0)
				return rc;
		}
	} else {
		const char *colon = memchr(s, ':', len);
		if (colon != NULL) {
			hostlen = (size_t)(colon - s);
			rc = cf_port_parse(colon + 1, len - hostlen - 1, &p, why);
			if (rc != 0)
				return rc;
		}
	}
	rc = cf_host_parse(s, hostlen, flags, host, why);
	if (rc != 0)
		return rc;
	*port = p;
	return 0;
}

char *
cf_host_format(const struct cf_host *host, char *buf, size_t size)
{
	if (size == 0)
		return buf;
	if (host->kind == CF_HOST_IPV6) {
		size_t n = strlen(host->name);
		if (n + 3 > size) {
			buf[0] = '\0';
			return buf;
		}
		buf[0] = '[';
		memcpy(buf + 1, host->name, n);
		buf[n + 1] = ']';
		buf[n + 2] = '\0';
		return buf;
	}
	strncpy(buf, host->name, size - 1);
	buf[size - 1] = '\0';
	return buf;
}

int
cf_host_equal(const struct cf_host *a, const struct cf_host *b)
{
	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case CF_HOST_IPV4:
		return a->addr.v4.s_addr == b->addr.v4.s_addr;
	case CF_HOST_IPV6:
		return memcmp(&a->addr.v6, &b->addr.v6, sizeof(a->addr.v6)) == 0;
	default:
		return strcmp(a->name, b->name) == 0;
	}
}
