/*
 * conf/rule.c: the host-pattern grammar and matcher (see rule.h).
 *
 * Names are only ever compared in the normal form that conf/host.c
 * produces, so "*.example.com" is a suffix test on ".example.com" over a
 * lower-case, dot-trimmed, LDH-only name: "evilexample.com" and
 * "example.com.evil.net" cannot match it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>

#include "base/cursor.h"
#include "base/text.h"
#include "conf/host.h"
#include "conf/ranges.h"
#include "conf/rule.h"

static int
fail(const char **why, const char *msg)
{
	if (why != NULL)
		*why = msg;
	return -EINVAL;
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "443", "8000-8099" or "*". */
static int
parse_portspec(const char *s, size_t len, struct cf_rule *r, const char **why)
{
	const char *dash;

	if (len == 1 && s[0] == '*') {
		r->port_lo = 1;
		r->port_hi = 65535;
		r->port_given = 1;
		return 0;
	}
	dash = memchr(s, '-', len);
	if (dash != NULL) {
		size_t l1 = (size_t)(dash - s);
		if (cf_port_parse(s, l1, &r->port_lo, why) != 0 ||
		    cf_port_parse(dash + 1, len - l1 - 1, &r->port_hi, why) != 0)
			return -EINVAL;
		if (r->port_lo > r->port_hi)
			return fail(why, "port range runs backwards");
	} else {
		if (cf_port_parse(s, len, &r->port_lo, why) != 0)
			return -EINVAL;
		r->port_hi = r->port_lo;
	}
	r->port_given = 1;
	return 0;
}

static int
parse_prefix(const char *s, size_t len, int max, int *out, const char **why)
{
	uint64_t v;
	int rc;

	if (len == 0 || len > 3)
		return fail(why, "bad prefix length");
	if (len > 1 && s[0] == '0')
		return fail(why, "prefix length with a leading zero");
	rc = bs_num_parse(s, len, (uint64_t)max, 0, &v);
	if (rc == -ERANGE)
		return fail(why, "prefix length too long for the address family");
	if (rc < 0)
		return fail(why, "bad prefix length");
	*out = (int)v;
	return 0;
}

/* Clear host bits; refuse a network written with host bits set, since the
 * admin probably meant something else. */
static int
mask_net(struct cf_rule *r, const char **why)
{
	uint8_t *b;
	int bytes, i;
	uint8_t orig[16];

	if (r->kind == CF_PAT_NET4) {
		b = (uint8_t *)&r->net.v4;
		bytes = 4;
	} else {
		b = r->net.v6.s6_addr;
		bytes = 16;
	}
	memcpy(orig, b, (size_t)bytes);
	for (i = 0; i < bytes; i++) {
		int bit = i * 8;
		if (bit >= r->prefix)
			b[i] = 0;
		else if (bit + 8 > r->prefix)
			b[i] &= (uint8_t)(0xff << (8 - (r->prefix - bit)));
	}
	if (memcmp(orig, b, (size_t)bytes) != 0)
		return fail(why, "network address has host bits set");
	return 0;
}

/* A path prefix for plain-HTTP rules: "/" then visible ASCII, no dot
 * segments, no escapes: the rule must mean what it says. */
static int
parse_path(const char *s, size_t len, struct cf_rule *r, const char **why)
{
	size_t i;

	if (len == 0 || s[0] != '/')
		return fail(why, "path prefix must start with /");
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f || c == '%' || c == '\\' || c == '?' || c == '#' ||
		    c == ';')
			return fail(why, "path prefix may hold only plain path characters");
	}
	if (cf_rule_match_path(NULL, s, len) == 0)
		return fail(why, "path prefix with a dot segment");
	r->path = strndup(s, len);
	if (r->path == NULL)
		return -ENOMEM;
	return 0;
}

static int
parse_pattern(const char *s, size_t len, struct cf_rule *r, const char **why)
{
	const char *end = s + len, *p;
	int rc;

	if (len == 0)
		return fail(why, "empty pattern");

	if (s[0] == '[') {
		/* [v6], [v6/len], [v6]/len, each with an optional :ports. */
		char tmp[INET6_ADDRSTRLEN + 1];
		const char *close = memchr(s, ']', len), *slash;
		size_t alen;

		if (close == NULL)
			return fail(why, "unterminated [ in pattern");
		slash = memchr(s, '/', (size_t)(close - s));
		alen = (size_t)((slash ? slash : close) - s - 1);
		if (alen == 0 || alen >= sizeof(tmp))
			return fail(why, "bad IPv6 address");
		memcpy(tmp, s + 1, alen);
		tmp[alen] = '\0';
		for (p = tmp; *p; p++)
			if (*p == '%')
				return fail(why, "zone identifiers are not allowed");
		if (inet_pton(AF_INET6, tmp, &r->net.v6) != 1)
			return fail(why, "bad IPv6 address");
		r->kind = CF_PAT_NET6;
		r->prefix = 128;
		if (slash != NULL &&
		    parse_prefix(slash + 1, (size_t)(close - slash - 1), 128, &r->prefix, why) != 0)
			return -EINVAL;
		p = close + 1;
		if (p < end && *p == '/') {
			const char *q = p + 1;
			if (slash != NULL)
				return fail(why, "two prefix lengths");
			while (q < end && *q != ':')
				q++;
			if (parse_prefix(p + 1, (size_t)(q - p - 1), 128, &r->prefix, why) != 0)
				return -EINVAL;
			p = q;
		}
		if (mask_net(r, why) != 0)
			return -EINVAL;
		if (p < end) {
			if (*p != ':')
				return fail(why, "unexpected text after IPv6 address");
			p++;
			{
				const char *q = memchr(p, '/', (size_t)(end - p));
				rc = parse_portspec(p, (size_t)((q ? q : end) - p), r, why);
				if (rc != 0)
					return rc;
				if (q != NULL)
					return parse_path(q, (size_t)(end - q), r, why);
			}
		}
		return 0;
	}

	/* Unbracketed IPv6 (two or more colons): no port possible. */
	{
		int colons = 0;
		for (p = s; p < end; p++)
			colons += (*p == ':');
		if (colons >= 2) {
			char tmp[INET6_ADDRSTRLEN + 1];
			const char *slash = memchr(s, '/', len);
			size_t alen = (size_t)((slash ? slash : end) - s);

			if (alen >= sizeof(tmp))
				return fail(why, "bad IPv6 address");
			memcpy(tmp, s, alen);
			tmp[alen] = '\0';
			if (inet_pton(AF_INET6, tmp, &r->net.v6) != 1)
				return fail(why, "bad IPv6 address (write [addr]:port for a port)");
			r->kind = CF_PAT_NET6;
			r->prefix = 128;
			if (slash != NULL &&
			    parse_prefix(slash + 1, (size_t)(end - slash - 1), 128, &r->prefix, why) != 0)
				return -EINVAL;
			return mask_net(r, why);
		}
	}

	/* host[/len][:ports][/path] */
	{
		const char *hend = s, *portp = NULL, *portend = NULL, *pathp = NULL;
		struct cf_host h;
		const char *base = s;
		size_t baselen;

		while (hend < end && *hend != ':' && *hend != '/')
			hend++;
		baselen = (size_t)(hend - s);
		p = hend;

		if (baselen >= 2 && s[0] == '*' && s[1] == '.') {
			r->kind = CF_PAT_WILDCARD;
			base = s + 2;
			baselen -= 2;
		} else if (baselen >= 1 && s[0] == '.') {
			r->kind = CF_PAT_DOMAIN;
			base = s + 1;
			baselen -= 1;
		} else {
			r->kind = CF_PAT_EXACT;
		}
		if (len == 1 && s[0] == '*')
			return fail(why, "a bare * would allow everything");
		if (memchr(base, '*', baselen) != NULL)
			return fail(why, "wildcards only as a whole leading label (*.example.com)");
		if (baselen == 0)
			return fail(why, "empty host in pattern");
		rc = cf_host_parse(base, baselen, r->kind == CF_PAT_EXACT ? 0 : CF_HOST_NO_IP, &h, why);
		if (rc != 0)
			return rc;
		if (r->kind != CF_PAT_EXACT && strchr(h.name, '.') == NULL)
			return fail(why, "wildcard directly over a top-level label");

		if (h.kind == CF_HOST_IPV4) {
			r->kind = CF_PAT_NET4;
			r->net.v4 = h.addr.v4;
			r->prefix = 32;
			if (p < end && *p == '/' && p + 1 < end && is_digit(p[1])) {
				const char *q = p + 1;
				while (q < end && *q != ':' && *q != '/')
					q++;
				if (parse_prefix(p + 1, (size_t)(q - p - 1), 32, &r->prefix, why) != 0)
					return -EINVAL;
				p = q;
			}
			if (mask_net(r, why) != 0)
				return -EINVAL;
		} else if (h.kind == CF_HOST_IPV6) {
			return fail(why, "bad IPv6 pattern");
		} else {
			memcpy(r->name, h.name, sizeof(r->name));
		}

		if (p < end && *p == ':') {
			portp = p + 1;
			portend = portp;
			while (portend < end && *portend != '/')
				portend++;
			rc = parse_portspec(portp, (size_t)(portend - portp), r, why);
			if (rc != 0)
				return rc;
			p = portend;
		}
		if (p < end) {
			pathp = p;
			return parse_path(pathp, (size_t)(end - pathp), r, why);
		}
	}
	return 0;
}

/*
 * A URL pasted where a pattern is expected (https://github.com): its scheme
 * gives an allow rule the port when it names none (443, 80), and a
 * plain-HTTP path is the rule's path prefix.  Writes the pattern it stands for to BUF and returns
 * 1 (*HTTPS set when the scheme is https); returns 0 when S is no URL,
 * -EINVAL with *WHY when it is one that no rule can mean.  An https:// URL
 * with a path is refused unless INSPECT: the path travels inside TLS,
 * where the proxy sees it only in a tunnel it terminates, so a rule that
 * seemed to allow only that path would otherwise allow the whole host.
 */
static int
url_to_pattern(const char *s, size_t len, int deny, int inspect, char *buf, size_t size,
    int *is_https, const char **why)
{
	const char *end = s + len, *auth, *aend, *host_end, *path;
	size_t plen, hlen;
	int https;
	const char *port = NULL;
	size_t portlen = 0;

	if (len >= 8 && strncasecmp(s, "https://", 8) == 0)
		https = 1, auth = s + 8;
	else if (len >= 7 && strncasecmp(s, "http://", 7) == 0)
		https = 0, auth = s + 7;
	else {
		const char *q;
		for (q = s; q + 3 <= end; q++)
			if (memcmp(q, "://", 3) == 0)
				return fail(why, "only http:// and https:// URLs can stand for a host");
		return 0;
	}
	for (aend = auth; aend < end && *aend != '/' && *aend != '?' && *aend != '#'; aend++)
		if (*aend == '@')
			return fail(why, "a URL with a user name cannot be a rule");
	if (aend == auth)
		return fail(why, "empty host in URL");
	/* The port is after the last ':' past a bracketed IPv6 literal. */
	host_end = aend;
	{
		const char *q = auth;
		if (*q == '[') {
			q = memchr(auth, ']', (size_t)(aend - auth));
			if (q == NULL)
				return fail(why, "unterminated [ in URL");
			q++;
		}
		for (; q < aend; q++)
			if (*q == ':')
				host_end = q;
	}
	if (host_end < aend) {
		port = host_end + 1;
		portlen = (size_t)(aend - port);
		if (portlen == 0)
			return fail(why, "empty port in URL");
	}
	path = aend;
	plen = (size_t)(end - path);
	if (memchr(path, '#', plen) != NULL)
		plen = (size_t)((const char *)memchr(path, '#', plen) - path);
	if (memchr(path, '?', plen) != NULL)
		return fail(why, "a URL with a query cannot be a rule (allow its path prefix)");
	if (plen == 1)
		plen = 0; /* "https://host/" is the host */
	*is_https = https;
	if (https && plen > 0 && !inspect)
		return fail(why, "an https:// rule with a path needs the \"inspect\" flag: the path is "
		    "inside TLS, which the proxy sees only when it terminates the tunnel (add inspect, "
		    "allow the whole host, or use http:// for plain HTTP)");
	hlen = (size_t)(host_end - auth);
	/* A deny rule is never narrowed by the scheme: without a port of
	 * its own it denies every port, as a bare host does. */
	if (deny && port == NULL) {
		if ((size_t)snprintf(buf, size, "%.*s", (int)hlen, auth) >= size)
			return fail(why, "URL too long");
		return 1;
	}
	if ((size_t)snprintf(buf, size, "%.*s:%.*s%.*s", (int)hlen, auth,
	    port ? (int)portlen : 3, port ? port : https ? "443" : "80", (int)plen, path) >= size)
		return fail(why, "URL too long");
	return 1;
}

/*
 * What a method of a methods= flag is made of: a method is an RFC 9110
 * §5.6.2 token, compared case-sensitively (§9.1), and every method in
 * IANA's registry is upper-case letters and '-'.  Narrower than a token on
 * purpose: a host name that a missing blank after a comma runs into the
 * list ("methods=GET,example.com") is refused, not taken as a method.
 */
static int
is_method_char(char c)
{
	return (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '_';
}

size_t
cf_rule_item_len(const char *s)
{
	const char *p = s, *tok = s;

	for (; *p != '\0'; p++) {
		if (is_space(*p))
			tok = p + 1;
		else if (*p == ',' && !((size_t)(p - tok) >= 8 && memcmp(tok, "methods=", 8) == 0 &&
		    p[1] != '\0' && !is_space(p[1]) && p[1] != ','))
			break;
	}
	return (size_t)(p - s);
}

/* The list of "methods=GET,HEAD" (LEN bytes at S, after the '='). */
static int
parse_methods(const char *s, size_t len, struct cf_rule *r, const char **why)
{
	const char *end = s + len, *m = s, *q;

	if (r->methods != NULL)
		return fail(why, "methods= given twice");
	if (len == 0)
		return fail(why, "methods= needs a list of methods (methods=GET,HEAD)");
	while (m <= end) {
		const char *e = memchr(m, ',', (size_t)(end - m));
		size_t ml;
		if (e == NULL)
			e = end;
		ml = (size_t)(e - m);
		if (ml == 0)
			return fail(why, "empty method in methods= (write methods=GET,HEAD)");
		if (ml > CF_METHOD_MAX)
			return fail(why, "method in methods= too long");
		for (q = m; q < e; q++)
			if (!is_method_char(*q))
				return fail(why, "a method in methods= is upper-case letters, digits, - and _ "
				    "(methods are case-sensitive: GET, not get)");
		/* RFC 9110 §9.3.6: CONNECT opens a tunnel, which a rule
		 * narrowed by method never admits (the methods inside an
		 * opaque tunnel are not the proxy's to see). */
		if (ml == 7 && memcmp(m, "CONNECT", 7) == 0)
			return fail(why, "CONNECT in methods=: a rule narrowed by method never admits a tunnel");
		for (q = s; q < m; ) {
			const char *qe = memchr(q, ',', (size_t)(m - q));
			if ((size_t)(qe - q) == ml && memcmp(q, m, ml) == 0)
				return fail(why, "a method named twice in methods=");
			q = qe + 1;
		}
		m = e + 1;
	}
	r->methods = strndup(s, len);
	if (r->methods == NULL)
		return -ENOMEM;
	return 0;
}

/*
 * "up=SIZE/WINDOW" (LEN bytes at S, after the '='): SIZE is a decimal
 * count of bytes with an optional k, M or G (powers of 1024, as the sizes
 * of files and buffers people compare it with); WINDOW an optional count
 * and a unit s, m, h or d ("h" is "1h").  A lower-case m is minutes, never
 * a size: "up=1m/h" is refused rather than guessed.
 */
static int
parse_up(const char *s, size_t len, struct cf_rule *r, const char **why)
{
	const char *slash = memchr(s, '/', len), *w;
	size_t nl, wl;
	uint64_t mult = 1, n, wn = 1, unit;
	int rc;

	if (r->up_max != 0)
		return fail(why, "up= given twice");
	if (slash == NULL)
		return fail(why, "up= needs a window: up=SIZE/WINDOW (up=1M/h, up=64k/10m)");
	nl = (size_t)(slash - s);
	if (nl > 0 && !is_digit(s[nl - 1])) {
		switch (s[nl - 1]) {
		case 'k': case 'K': mult = UINT64_C(1) << 10; break;
		case 'M': mult = UINT64_C(1) << 20; break;
		case 'G': mult = UINT64_C(1) << 30; break;
		default:
			return fail(why, "unknown size unit in up= (bytes, or k, M, G: powers of 1024)");
		}
		nl--;
	}
	if (nl == 0)
		return fail(why, "up= needs a size: up=SIZE/WINDOW (up=1M/h)");
	rc = bs_num_parse(s, nl, CF_BUDGET_UP_MAX / mult, 0, &n);
	if (rc == -ERANGE)
		return fail(why, "up= size too large (at most 1024T, 2^50 bytes)");
	if (rc < 0)
		return fail(why, "bad size in up= (digits with an optional k, M or G)");
	if (n == 0)
		return fail(why, "up= of zero bytes allows nothing: remove the rule instead");
	w = slash + 1;
	wl = len - nl - (mult != 1) - 1;
	if (wl == 0)
		return fail(why, "up= needs a window after the / (s, m, h or d, e.g. 10m)");
	switch (w[wl - 1]) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	default:
		return fail(why, "unknown window unit in up= (s, m, h or d, e.g. up=1M/h, up=64k/10m)");
	}
	if (wl > 1) {
		rc = bs_num_parse(w, wl - 1, CF_BUDGET_WINDOW_MAX / unit, 0, &wn);
		if (rc == -ERANGE)
			return fail(why, "up= window too long (at most 366d)");
		if (rc < 0)
			return fail(why, "bad window in up= (a count and s, m, h or d, e.g. 10m)");
		if (wn == 0)
			return fail(why, "up= window of zero length");
	}
	r->up_max = n * mult;
	r->up_window = (uint32_t)(wn * unit);
	return 0;
}

/* "rps=N" or "conns=N": NAME for the errors, the value at S. */
static int
parse_count(const char *name, const char *s, size_t len, uint32_t *out, const char **why)
{
	uint64_t v;
	int rc;

	if (*out != 0)
		return fail(why, name[0] == 'r' ? "rps= given twice" : "conns= given twice");
	rc = bs_num_parse(s, len, CF_BUDGET_N_MAX, 0, &v);
	if (rc == -ERANGE)
		return fail(why, name[0] == 'r' ? "rps= too large (at most 1000000)" :
		    "conns= too large (at most 1000000)");
	if (rc < 0)
		return fail(why, name[0] == 'r' ? "bad number in rps= (rps=5)" :
		    "bad number in conns= (conns=4)");
	if (v == 0)
		return fail(why, name[0] == 'r' ? "rps=0 allows nothing: remove the rule instead" :
		    "conns=0 allows nothing: remove the rule instead");
	*out = (uint32_t)v;
	return 0;
}

int
cf_rule_has_budget(const struct cf_rule *r)
{
	return r->up_max != 0 || r->rps != 0 || r->conns != 0;
}

/* N bytes as the grammar writes them, in the largest unit that divides it. */
static void
size_text(uint64_t n, char *buf, size_t size)
{
	static const char units[] = "kMG";
	int u = -1;

	while (u < 2 && n >= 1024 && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	snprintf(buf, size, "%llu%s%.*s", (unsigned long long)n, u >= 0 ? "" : " bytes",
	    u >= 0 ? 1 : 0, u >= 0 ? &units[u] : "");
}

static void
window_text(uint32_t s, char *buf, size_t size)
{
	if (s % 86400 == 0)
		snprintf(buf, size, "%ud", s / 86400);
	else if (s % 3600 == 0)
		snprintf(buf, size, "%uh", s / 3600);
	else if (s % 60 == 0)
		snprintf(buf, size, "%um", s / 60);
	else
		snprintf(buf, size, "%us", s);
}

char *
cf_rule_budget_text(const struct cf_rule *r, char *buf, size_t size)
{
	char sz[32], win[16], rps[32] = "", conns[32] = "";
	size_t n = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (r->up_max != 0) {
		size_text(r->up_max, sz, sizeof(sz));
		window_text(r->up_window, win, sizeof(win));
		n = (size_t)snprintf(buf, size, "up %s per %s", sz, win);
	}
	if (r->rps != 0)
		snprintf(rps, sizeof(rps), "%s%u requests/s", n > 0 ? ", " : "", r->rps);
	if (r->conns != 0)
		snprintf(conns, sizeof(conns), "%s%u at once", n > 0 || r->rps ? ", " : "", r->conns);
	if (n < size)
		snprintf(buf + n, size - n, "%s%s", rps, conns);
	return buf;
}

int
cf_rule_parse(const char *s, size_t len, enum cf_rule_type type, struct cf_rule *out,
    const char **why)
{
	struct cf_rule r;
	const char *p = s, *end = s + len, *tok, *pat, *pat_end;
	int rc, https = 0, is_url = 0;

	memset(&r, 0, sizeof(r));
	r.type = type;

	while (p < end && is_space(*p))
		p++;
	while (end > p && is_space(end[-1]))
		end--;
	if (p == end)
		return fail(why, "empty item");
	for (tok = p; tok < end; tok++) {
		unsigned char c = (unsigned char)*tok;
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return fail(why, "control or non-ASCII byte in rule");
	}

	pat = p;
	while (p < end && !is_space(*p))
		p++;
	pat_end = p;

	/* The flags first: "inspect" decides what an https:// URL may say. */
	rc = 0;
	while (p < end) {
		size_t tl;
		while (p < end && is_space(*p))
			p++;
		tok = p;
		while (p < end && !is_space(*p))
			p++;
		if (p == tok)
			break;
		tl = (size_t)(p - tok);
		if (tl == 7 && memcmp(tok, "private", 7) == 0) {
			r.private_ok = 1;
		} else if (tl == 7 && memcmp(tok, "inspect", 7) == 0) {
			r.inspect = 1;
		} else if (tl >= 8 && memcmp(tok, "methods=", 8) == 0) {
			rc = parse_methods(tok + 8, tl - 8, &r, why);
			if (rc != 0)
				goto out;
		} else if (tl >= 3 && memcmp(tok, "up=", 3) == 0) {
			rc = parse_up(tok + 3, tl - 3, &r, why);
			if (rc != 0)
				goto out;
		} else if (tl >= 4 && memcmp(tok, "rps=", 4) == 0) {
			rc = parse_count("rps", tok + 4, tl - 4, &r.rps, why);
			if (rc != 0)
				goto out;
		} else if (tl >= 6 && memcmp(tok, "conns=", 6) == 0) {
			rc = parse_count("conns", tok + 6, tl - 6, &r.conns, why);
			if (rc != 0)
				goto out;
		} else {
			rc = fail(why, "unknown flag (the flags are \"private\", \"inspect\", "
			    "\"methods=GET,HEAD\", \"up=1M/h\", \"rps=5\" and \"conns=4\")");
			goto out;
		}
	}
	if (type == CF_RULE_DENY && r.private_ok) {
		rc = fail(why, "\"private\" widens an allow rule; a deny rule cannot have it");
		goto out;
	}
	if (type == CF_RULE_DENY && r.inspect) {
		rc = fail(why, "\"inspect\" belongs on an allow rule; a deny rule cannot have it");
		goto out;
	}
	if (type == CF_RULE_DENY && r.methods != NULL) {
		rc = fail(why, "methods= narrows an allow rule; a deny rule cannot have it");
		goto out;
	}
	if (type == CF_RULE_DENY && cf_rule_has_budget(&r)) {
		rc = fail(why, "a budget (up=, rps=, conns=) limits what an allow rule admits; a deny "
		    "rule cannot have one");
		goto out;
	}

	{
		char url[CF_HOST_MAX + 600];
		rc = url_to_pattern(pat, (size_t)(pat_end - pat), type == CF_RULE_DENY, r.inspect,
		    url, sizeof(url), &https, why);
		if (rc < 0)
			goto out;
		if (rc == 1) {
			is_url = 1;
			r.taken_as = strdup(url);
			if (r.taken_as == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			rc = parse_pattern(url, strlen(url), &r, why);
		} else
			rc = parse_pattern(pat, (size_t)(pat_end - pat), &r, why);
	}
	if (rc != 0)
		goto out;

	if (type == CF_RULE_DENY && r.path != NULL) {
		rc = fail(why, "a path prefix narrows an allow rule; a deny rule cannot have one");
		goto out;
	}
	/* The session CA's X.509 name constraints (RFC 5280 §4.2.1.10) list
	 * exactly the names it terminates, so "inspect" names one host: a
	 * pattern would need a constraint as wide as itself, and an address
	 * has no name to put in the leaf.  One port: a range or "*" would
	 * terminate tunnels that carry no TLS at all. */
	if (r.inspect && r.kind != CF_PAT_EXACT) {
		rc = fail(why, "\"inspect\" needs one exact host name (no wildcard, domain or address): "
		    "the session CA's name constraints list each terminated name");
		goto out;
	}
	if (r.inspect && r.port_given && r.port_lo != r.port_hi) {
		rc = fail(why, "\"inspect\" terminates TLS on one port: name it (host:8443), or none for 443");
		goto out;
	}
	if (r.inspect && is_url && !https) {
		rc = fail(why, "\"inspect\" is about TLS: an http:// URL is plain HTTP, which the proxy "
		    "judges request by request already (write https://)");
		goto out;
	}
	r.text = strndup(s, len);
	if (r.text == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	{
		/* Keep the item as written, minus the surrounding blanks. */
		size_t off = 0, n = strlen(r.text);
		while (off < n && is_space(r.text[off]))
			off++;
		memmove(r.text, r.text + off, n - off + 1);
		n -= off;
		while (n > 0 && is_space(r.text[n - 1]))
			r.text[--n] = '\0';
	}
	*out = r;
	return 0;
out:
	cf_rule_clear(&r);
	return rc;
}

void
cf_rule_clear(struct cf_rule *r)
{
	if (r == NULL)
		return;
	free(r->path);
	free(r->text);
	free(r->taken_as);
	free(r->methods);
	r->methods = NULL;
	r->path = NULL;
	r->text = NULL;
	r->taken_as = NULL;
}

static int
net_contains4(const struct cf_rule *r, const struct in_addr *a)
{
	uint32_t mask = r->prefix == 0 ? 0 : 0xffffffffu << (32 - r->prefix);
	return (ntohl(a->s_addr) & mask) == ntohl(r->net.v4.s_addr);
}

static int
net_contains6(const struct cf_rule *r, const struct in6_addr *a)
{
	int full = r->prefix / 8, rem = r->prefix % 8;

	if (memcmp(a->s6_addr, r->net.v6.s6_addr, (size_t)full) != 0)
		return 0;
	if (rem == 0)
		return 1;
	return (a->s6_addr[full] & (uint8_t)(0xff << (8 - rem))) == r->net.v6.s6_addr[full];
}

int
cf_rule_match_host(const struct cf_rule *r, const struct cf_host *h)
{
	size_t nl, bl;

	switch (r->kind) {
	case CF_PAT_NET4:
		return h->kind == CF_HOST_IPV4 && net_contains4(r, &h->addr.v4);
	case CF_PAT_NET6:
		return h->kind == CF_HOST_IPV6 && net_contains6(r, &h->addr.v6);
	case CF_PAT_EXACT:
		return h->kind == CF_HOST_NAME && strcmp(h->name, r->name) == 0;
	case CF_PAT_WILDCARD:
	case CF_PAT_DOMAIN:
		if (h->kind != CF_HOST_NAME)
			return 0;
		nl = strlen(h->name);
		bl = strlen(r->name);
		if (r->kind == CF_PAT_DOMAIN && nl == bl && memcmp(h->name, r->name, bl) == 0)
			return 1;
		/* Strictly below: ".base" must be a suffix on a label boundary. */
		return nl > bl + 1 && h->name[nl - bl - 1] == '.' &&
		    memcmp(h->name + nl - bl, r->name, bl) == 0;
	}
	return 0;
}

int
cf_rule_match_port(const struct cf_rule *r, enum cf_mode mode, uint16_t port)
{
	if (!r->port_given) {
		if (r->type == CF_RULE_DENY)
			return 1;
		return port == (mode == CF_MODE_HTTP ? 80 : 443);
	}
	return port >= r->port_lo && port <= r->port_hi;
}

int
cf_rule_match_sockaddr(const struct cf_rule *r, const struct sockaddr *sa)
{
	struct sockaddr_in tmp;

	/* ::ffff:10.0.0.1 reaches 10.0.0.1: an IPv4 rule must see it as such. */
	if (r->kind == CF_PAT_NET4 && sa->sa_family == AF_INET6)
		sa = cf_sockaddr_unmap(sa, &tmp);
	if (r->kind == CF_PAT_NET4 && sa->sa_family == AF_INET)
		return net_contains4(r, &((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	if (r->kind == CF_PAT_NET6 && sa->sa_family == AF_INET6)
		return net_contains6(r, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return 0;
}

/* RFC 3986 §2.3 unreserved, less '.': the only bytes an escape may stand
 * for in a path under a prefix rule ("%2e" is a dot, refused as one). */
static int
escape_is_plain(char a, char b)
{
	int hi = cf_hex_value((unsigned char)a), lo = cf_hex_value((unsigned char)b), c;

	if (hi < 0 || lo < 0)
		return 0;
	c = hi * 16 + lo;
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '~';
}

/*
 * Is PATH free of anything an upstream could resolve outside a prefix?
 * RFC 3986 §5.2.4 removes "." and ".." segments; servers also decode %2e and
 * %2f, and some treat "\\" as "/".  Back ends go further, each its own way:
 * Tomcat and Spring drop ";params" from a segment before resolving it, so
 * "/hooks/..;/admin" is "/admin" there; servers that decode twice read
 * "%252e" as "."; lenient UTF-8 decoders (IIS among them) read the overlong
 * "%c0%ae" as "."; some normalise the full-width dot "%ef%bc%8e" (NFKC) to
 * "."; "%00" ends the path for C back ends.  Rather than chase each decoder,
 * the path part admits no ";" at all and no escape other than of an
 * unreserved character (RFC 3986 §2.3: such an escape means the same as the
 * bare character to every back end).  The query is the back end's business,
 * not the path's, and is not looked at.  A path with any of these is never
 * admitted by a prefix rule (it is refused, not normalised: we forward bytes
 * as sent).
 */
static int
path_is_plain(const char *path, size_t len)
{
	size_t i, seg = 0;

	for (i = 0; i <= len; i++) {
		char c = i < len ? path[i] : '/';
		if (c == '?' || c == '#') {
			len = i;
			c = '/';
		}
		if (c == '\\' || c == ';')
			return 0;
		if (c == '%' && (i + 2 >= len || !escape_is_plain(path[i + 1], path[i + 2])))
			return 0;
		if (c == '/') {
			size_t slen = i - seg;
			if ((slen == 1 && path[seg] == '.') ||
			    (slen == 2 && path[seg] == '.' && path[seg + 1] == '.'))
				return 0;
			seg = i + 1;
		}
		if (i == len)
			break;
	}
	return 1;
}

int
cf_rule_match_path(const struct cf_rule *r, const char *path, size_t len)
{
	size_t pl;

	if (r == NULL)
		return path_is_plain(path, len);
	if (r->path == NULL)
		return 1;
	if (!path_is_plain(path, len))
		return 0;
	pl = strlen(r->path);
	if (len < pl || memcmp(path, r->path, pl) != 0)
		return 0;
	/* "/hooks" admits "/hooks", "/hooks/x" and "/hooks?q", not "/hooksx". */
	if (r->path[pl - 1] != '/' && len > pl && path[pl] != '/' && path[pl] != '?')
		return 0;
	return 1;
}

int
cf_rule_match_method(const struct cf_rule *r, const char *method)
{
	const char *m;
	size_t ml;

	if (r->methods == NULL)
		return 1;
	if (method == NULL)
		return 0;
	ml = strlen(method);
	for (m = r->methods;;) {
		const char *e = strchr(m, ',');
		size_t l = e != NULL ? (size_t)(e - m) : strlen(m);
		/* RFC 9110 §9.1: the method token is case-sensitive. */
		if (l == ml && memcmp(m, method, ml) == 0)
			return 1;
		if (e == NULL)
			return 0;
		m = e + 1;
	}
}

int
cf_rule_shadows(const struct cf_rule *deny, const struct cf_rule *allow)
{
	struct cf_host h;

	memset(&h, 0, sizeof(h));
	switch (allow->kind) {
	case CF_PAT_EXACT:
		h.kind = CF_HOST_NAME;
		memcpy(h.name, allow->name, sizeof(h.name));
		if (!cf_rule_match_host(deny, &h))
			return 0;
		break;
	case CF_PAT_WILDCARD:
	case CF_PAT_DOMAIN:
		if (deny->kind != CF_PAT_WILDCARD && deny->kind != CF_PAT_DOMAIN)
			return 0;
		h.kind = CF_HOST_NAME;
		memcpy(h.name, allow->name, sizeof(h.name));
		/* deny covers every name below allow's base (and the base itself
		 * when allow is a DOMAIN pattern). */
		if (!(strcmp(deny->name, allow->name) == 0 &&
		    (deny->kind == CF_PAT_DOMAIN || allow->kind == CF_PAT_WILDCARD)) &&
		    !cf_rule_match_host(deny, &h))
			return 0;
		break;
	case CF_PAT_NET4:
	case CF_PAT_NET6:
		if (deny->kind != allow->kind || deny->prefix > allow->prefix)
			return 0;
		h.kind = allow->kind == CF_PAT_NET4 ? CF_HOST_IPV4 : CF_HOST_IPV6;
		h.addr.v6 = allow->net.v6;
		if (allow->kind == CF_PAT_NET4)
			h.addr.v4 = allow->net.v4;
		if (!cf_rule_match_host(deny, &h))
			return 0;
		break;
	}
	if (!deny->port_given)
		return 1;
	if (!allow->port_given)
		return (deny->port_lo <= 443 && deny->port_hi >= 443) &&
		    (deny->port_lo <= 80 && deny->port_hi >= 80);
	return deny->port_lo <= allow->port_lo && deny->port_hi >= allow->port_hi;
}

char *
cf_rule_at(const struct cf_rule *r, char *buf, size_t size)
{
	struct bs_str b;

	bs_str_init(&b, buf, size);
	bs_str_add(&b, r->file);
	bs_str_addn(&b, ":", 1);
	bs_str_int(&b, r->line);
	return buf;
}
