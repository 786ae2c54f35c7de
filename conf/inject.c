/*
 * conf/inject.c: one binding of a secret (see inject.h): the parser of an
 * inject line and the rendering of what it puts on a request.  It holds no
 * value: the caller passes it in and wipes what is rendered.
 */
#include "conf/inject.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base/text.h"
#include "conf/rule.h"

/* Blank between words: space, tab or CR (as the config reader's). */
static int
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* RFC 9110 §5.6.2 tchar. */
static int
is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* RFC 3986 §2.3 unreserved. */
static int
is_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '.' || c == '_' || c == '~';
}

/*
 * Header names a secret may never set: the hop-by-hop ones (RFC 9110
 * §7.6.1, and Proxy-Connection, Keep-Alive), the ones that frame or route
 * the message (Host, Content-Length, Transfer-Encoding: setting them would
 * smuggle a request), and the proxy's own (Proxy-Authorization).
 */
static const char *const forbidden_headers[] = {
	"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
	"upgrade", "host", "content-length", "proxy-authorization", "proxy-authenticate", NULL,
};

static int
fail(const char **why, const char *msg)
{
	if (why != NULL)
		*why = msg;
	return -EINVAL;
}

void
cf_inject_clear(struct cf_inject *inj)
{
	if (inj == NULL)
		return;
	free((char *)inj->path);
	free((char *)inj->name);
	free((char *)inj->format);
	free((char *)inj->user);
	free((char *)inj->text);
	memset(inj, 0, sizeof(*inj));
}

/* The next word of *P (up to a blank), its length in *N; skips blanks. */
static const char *
word(const char **p, size_t *n)
{
	const char *w;

	while (blank(**p))
		(*p)++;
	w = *p;
	while (**p != '\0' && !blank(**p))
		(*p)++;
	*n = (size_t)(*p - w);
	return w;
}

/* The set of places "path,body,websocket" (N bytes at W) names, or 0 for
 * an empty list, an unknown name or one named twice. */
static unsigned
replace_where(const char *w, size_t n)
{
	static const struct {
		const char *name;
		unsigned bit;
	} places[] = {
		{ "path", CF_REPLACE_PATH }, { "body", CF_REPLACE_BODY },
		{ "websocket", CF_REPLACE_WEBSOCKET },
	};
	const char *end = w + n, *comma;
	unsigned set = 0, bit;
	size_t k, l;

	if (n == 0)
		return 0;
	for (; w <= end; w = comma + 1) {
		if ((comma = memchr(w, ',', (size_t)(end - w))) == NULL)
			comma = end;
		l = (size_t)(comma - w);
		for (bit = 0, k = 0; k < sizeof(places) / sizeof(places[0]); k++)
			if (strlen(places[k].name) == l && memcmp(w, places[k].name, l) == 0)
				bit = places[k].bit;
		if (bit == 0 || (set & bit))
			return 0;
		set |= bit;
	}
	return set;
}

int
cf_inject_parse(const char *s, struct cf_inject *out, const char **why)
{
	const char *p = s, *w, *m, *a;
	size_t wn, mn, an, i;
	struct cf_rule r;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	w = word(&p, &wn);
	if (wn == 0)
		return fail(why, "a binding is HOST[:PORT][/PATH] header NAME [\"FORMAT\"], basic USER or query PARAM "
		    "(or replace WHERE[,WHERE...])");
	/* The target is a host pattern like an allow rule's, narrowed to one
	 * host and one port: the same strictness of names and path prefixes. */
	if (cf_rule_parse(w, wn, CF_RULE_ALLOW, &r, why) != 0)
		return -EINVAL;
	rc = -EINVAL;
	if (r.taken_as != NULL) {
		fail(why, "write the binding's target as HOST[:PORT][/PATH], not a URL");
		goto out;
	}
	if (r.kind != CF_PAT_EXACT) {
		fail(why, "a binding names one host by name, not a pattern or an address");
		goto out;
	}
	if (r.port_given && r.port_lo != r.port_hi) {
		fail(why, "a binding names one port, not a range");
		goto out;
	}
	memcpy(out->host, r.name, sizeof(out->host));
	out->port = r.port_given ? r.port_lo : 443;
	out->path = r.path;
	r.path = NULL;

	m = word(&p, &mn);
	a = word(&p, &an);
	if (mn == 6 && memcmp(m, "header", 6) == 0) {
		if (an == 0 || an > 64) {
			fail(why, "header takes a header name");
			goto out;
		}
		for (i = 0; i < an; i++)
			if (!is_tchar((unsigned char)a[i])) {
				fail(why, "a header name is a token (RFC 9110 §5.6.2)");
				goto out;
			}
		out->kind = CF_INJECT_HEADER;
		if ((out->name = strndup(a, an)) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		for (i = 0; forbidden_headers[i] != NULL; i++)
			if (strcasecmp(out->name, forbidden_headers[i]) == 0) {
				fail(why, "a secret may not set a hop-by-hop header, Host, Content-Length, "
				    "Transfer-Encoding or Proxy-Authorization");
				goto out;
			}
		while (blank(*p))
			p++;
		if (*p != '\0') {
			const char *f = p + 1, *close;
			size_t fn, pct = 0;
			if (*p != '"' || (close = strchr(f, '"')) == NULL) {
				fail(why, "a header's format is written in double quotes: \"Bearer %s\"");
				goto out;
			}
			fn = (size_t)(close - f);
			for (i = 0; i < fn; i++) {
				unsigned char c = (unsigned char)f[i];
				if (c < 0x20 || c >= 0x7f || c == '\\') {
					fail(why, "a format holds printable characters only");
					goto out;
				}
				if (c == '%') {
					if (i + 1 < fn && f[i + 1] == 's' && pct == 0)
						pct++, i++;
					else {
						fail(why, "a format holds exactly one %s and no other %");
						goto out;
					}
				}
			}
			if (pct != 1) {
				fail(why, "a format holds exactly one %s and no other %");
				goto out;
			}
			p = close + 1;
			while (blank(*p))
				p++;
			if (*p != '\0') {
				fail(why, "nothing may follow a header's format");
				goto out;
			}
			if ((out->format = strndup(f, fn)) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
		}
	} else if (mn == 5 && memcmp(m, "basic", 5) == 0) {
		/* RFC 7617 §2: the user-id may hold no ':'. */
		if (an == 0 || an > 255) {
			fail(why, "basic takes a user name");
			goto out;
		}
		for (i = 0; i < an; i++)
			if ((unsigned char)a[i] < 0x21 || (unsigned char)a[i] >= 0x7f || a[i] == ':') {
				fail(why, "a Basic user name is printable, without ':'");
				goto out;
			}
		out->kind = CF_INJECT_BASIC;
		out->name = strdup("Authorization");
		out->user = strndup(a, an);
		if (out->name == NULL || out->user == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	} else if (mn == 5 && memcmp(m, "query", 5) == 0) {
		if (an == 0 || an > 64) {
			fail(why, "query takes a parameter name");
			goto out;
		}
		for (i = 0; i < an; i++)
			if (!is_unreserved((unsigned char)a[i])) {
				fail(why, "a query parameter's name holds unreserved characters only "
				    "(letters, digits, - . _ ~)");
				goto out;
			}
		out->kind = CF_INJECT_QUERY;
		if ((out->name = strndup(a, an)) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	} else if (mn == 7 && memcmp(m, "replace", 7) == 0) {
		if ((out->where = replace_where(a, an)) == 0) {
			fail(why, "replace takes where: path, body or websocket, or a list of them "
			    "with commas (path,body)");
			goto out;
		}
		out->kind = CF_INJECT_REPLACE;
		if ((out->name = strdup("replace")) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	} else {
		fail(why, "the method is header, basic or query (or replace: path, body, websocket)");
		goto out;
	}
	if (out->kind != CF_INJECT_HEADER) {
		word(&p, &an);
		if (an != 0) {
			fail(why, out->kind == CF_INJECT_REPLACE ? "replace takes one word: path,body,websocket "
			    "with commas, no spaces" : "basic and query take one word");
			goto out;
		}
	}
	if ((out->text = strdup(s)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = 0;
out:
	cf_rule_clear(&r);
	if (rc != 0)
		cf_inject_clear(out);
	return rc;
}

long
cf_inject_render(const struct cf_inject *inj, const char *value, size_t vlen, char *out,
    size_t size)
{
	size_t o = 0, i;

	if (size == 0)
		return -ENOSPC;
	switch (inj->kind) {
	case CF_INJECT_HEADER: {
		const char *f = inj->format != NULL ? inj->format : "%s";
		const char *pct = strstr(f, "%s");
		size_t before = (size_t)(pct - f), after = strlen(pct + 2);
		if (before + vlen + after + 1 > size)
			goto nospc;
		memcpy(out, f, before);
		if (vlen > 0)
			memcpy(out + before, value, vlen);
		memcpy(out + before + vlen, pct + 2, after);
		o = before + vlen + after;
		break;
	}
	case CF_INJECT_BASIC: {
		/* RFC 7617 §2: "Basic " base64(user-id ":" password). */
		size_t ul = strlen(inj->user), n = ul + 1 + vlen, enc = 4 * ((n + 2) / 3);
		unsigned char *raw;
		if (6 + enc + 1 > size)
			goto nospc;
		if ((raw = malloc(n)) == NULL)
			return -ENOMEM;
		memcpy(raw, inj->user, ul);
		raw[ul] = ':';
		if (vlen > 0)
			memcpy(raw + ul + 1, value, vlen);
		memcpy(out, "Basic ", 6);
		o = 6 + (size_t)EVP_EncodeBlock((unsigned char *)out + 6, raw, (int)n);
		OPENSSL_cleanse(raw, n);
		free(raw);
		break;
	}
	case CF_INJECT_QUERY: {
		static const char hex[] = "0123456789ABCDEF";
		size_t nl = strlen(inj->name);
		if (nl + 2 > size)
			goto nospc;
		memcpy(out, inj->name, nl);
		out[nl] = '=';
		o = nl + 1;
		for (i = 0; i < vlen; i++) {
			unsigned char c = (unsigned char)value[i];
			if (is_unreserved(c)) {
				if (o + 2 > size)
					goto nospc;
				out[o++] = (char)c;
			} else {
				if (o + 4 > size)
					goto nospc;
				out[o++] = '%';
				out[o++] = hex[c >> 4];
				out[o++] = hex[c & 15];
			}
		}
		break;
	}
	case CF_INJECT_REPLACE:
		/* The value as it is; where it goes writes it as it needs. */
		if (vlen + 1 > size)
			goto nospc;
		memcpy(out, value, vlen);
		o = vlen;
		break;
	default:
		return -EINVAL;
	}
	out[o] = '\0';
	return (long)o;
nospc:
	OPENSSL_cleanse(out, size);
	return -ENOSPC;
}

/* Is the header value V (N bytes) "Basic base64(USER:PH)"? */
static int
basic_carries(const char *v, size_t n, const char *ph, size_t phlen)
{
	/* A user name is at most 255 bytes and a placeholder at most
	 * CF_SECRET_MAX + 16 bytes longer than its value. */
	unsigned char raw[256 + 2 * 4096 + 64];
	const unsigned char *colon;
	size_t i = 0, end = n;
	long r;
	int hit = 0;

	while (i < n && (v[i] == ' ' || v[i] == '\t'))
		i++;
	while (end > i && (v[end - 1] == ' ' || v[end - 1] == '\t'))
		end--;
	if (end - i < 6 || strncasecmp(v + i, "basic", 5) != 0 || v[i + 5] != ' ')
		return 0;
	i += 6;
	while (i < end && v[i] == ' ')
		i++;
	r = bs_b64_decode(v + i, end - i, raw, sizeof(raw));
	if (r <= 0)
		return 0;
	colon = memchr(raw, ':', (size_t)r);
	if (colon != NULL && (size_t)(raw + r - (colon + 1)) == phlen &&
	    memcmp(colon + 1, ph, phlen) == 0)
		hit = 1;
	OPENSSL_cleanse(raw, (size_t)r);
	return hit;
}

/* Does the target T (N bytes) have a parameter NAME whose value holds PH? */
static int
query_carries(const char *name, const char *t, size_t n, const char *ph, size_t phlen)
{
	const char *q = memchr(t, '?', n), *end = t + n, *p, *amp, *eq;
	size_t nl = strlen(name);

	if (q == NULL)
		return 0;
	for (p = q + 1; p < end; p = amp + 1) {
		if ((amp = memchr(p, '&', (size_t)(end - p))) == NULL)
			amp = end;
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq != NULL && (size_t)(eq - p) == nl && memcmp(p, name, nl) == 0 &&
		    memmem(eq + 1, (size_t)(amp - eq - 1), ph, phlen) != NULL)
			return 1;
	}
	return 0;
}

int
cf_inject_carries(const struct cf_inject *inj, const char *val, size_t len, const char *ph,
    size_t phlen)
{
	if (val == NULL || ph == NULL || phlen == 0)
		return 0;
	switch (inj->kind) {
	case CF_INJECT_HEADER:
		return len >= phlen && memmem(val, len, ph, phlen) != NULL;
	case CF_INJECT_BASIC:
		return basic_carries(val, len, ph, phlen);
	case CF_INJECT_QUERY:
		return query_carries(inj->name, val, len, ph, phlen);
	case CF_INJECT_REPLACE:
		return len >= phlen && memmem(val, len, ph, phlen) != NULL;
	default:
		return 0;
	}
}
