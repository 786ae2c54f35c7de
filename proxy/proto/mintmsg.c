/*
 * proxy/proto/mintmsg.c: token endpoint codecs (see mintmsg.h).
 */
#include "proxy/proto/mintmsg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

/* ---- URL ----------------------------------------------------------------- */

int
px_mint_url_parse(const char *url, struct px_mint_url *out, const char **why)
{
	const char *h, *end, *colon, *p;
	size_t hl;

	memset(out, 0, sizeof(*out));
	if (strncasecmp(url, "https://", 8) != 0) {
		*why = "is not an https:// URL";
		return -1;
	}
	h = url + 8;
	end = h + strcspn(h, "/?#");
	if (memchr(h, '@', (size_t)(end - h)) != NULL || strchr(url, '#') != NULL) {
		*why = "has user info or a fragment";
		return -1;
	}
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));
		if (rb == NULL) {
			*why = "has an unclosed [";
			return -1;
		}
		hl = (size_t)(rb - h - 1);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (colon == NULL && rb + 1 != end) {
			*why = "has a bad host";
			return -1;
		}
		h++;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hl = (size_t)((colon != NULL ? colon : end) - h);
	}
	if (hl == 0 || hl >= sizeof(out->host)) {
		*why = "has no host, or one too long";
		return -1;
	}
	for (p = h; p < h + hl; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != ':' && *p != '_') {
			*why = "has a bad character in its host";
			return -1;
		}
	memcpy(out->host, h, hl);
	for (p = out->host; *p; p++)
		out->host[p - out->host] = (char)tolower((unsigned char)*p);
	out->port = 443;
	if (colon != NULL) {
		unsigned long v = 0;
		for (p = colon + 1; p < end; p++) {
			if (!isdigit((unsigned char)*p) || (v = v * 10 + (unsigned)(*p - '0')) > 65535) {
				*why = "has a bad port";
				return -1;
			}
		}
		if (p == colon + 1 || v == 0) {
			*why = "has a bad port";
			return -1;
		}
		out->port = (uint16_t)v;
	}
	if (*end == '\0')
		snprintf(out->path, sizeof(out->path), "/");
	else if (snprintf(out->path, sizeof(out->path), "%s%s", *end == '?' ? "/" : "", end) >=
	    (int)sizeof(out->path)) {
		*why = "has a path too long";
		return -1;
	}
	for (p = out->path; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
			*why = "has a space or control character in its path";
			return -1;
		}
	return 0;
}

/* ---- JSON ---------------------------------------------------------------- */

struct js {
	const char *p, *end;
	int depth;
};

static void
js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * A string at J (its opening quote), decoded into OUT (SIZE bytes, NUL
 * added) when OUT is not NULL; *LEN its decoded length, counted past what
 * fits (*LEN >= SIZE then).  \u escapes become UTF-8.  Returns 0 or -1.
 */
static int
js_string(struct js *j, char *out, size_t size, size_t *len)
{
	size_t n = 0;

	if (j->p >= j->end || *j->p != '"')
		return -1;
	j->p++;
	for (;;) {
		unsigned char buf[4];
		size_t k, bl = 1;
		int c;

		if (j->p >= j->end)
			return -1;
		c = (unsigned char)*j->p++;
		if (c == '"')
			break;
		if (c < 0x20)
			return -1;
		buf[0] = (unsigned char)c;
		if (c == '\\') {
			if (j->p >= j->end)
				return -1;
			c = *j->p++;
			switch (c) {
			case '"': case '\\': case '/': buf[0] = (unsigned char)c; break;
			case 'b': buf[0] = '\b'; break;
			case 'f': buf[0] = '\f'; break;
			case 'n': buf[0] = '\n'; break;
			case 'r': buf[0] = '\r'; break;
			case 't': buf[0] = '\t'; break;
			case 'u': {
				unsigned long u = 0;
				int i;
				if (j->end - j->p < 4)
					return -1;
				for (i = 0; i < 4; i++) {
					int h = hexval((unsigned char)j->p[i]);
					if (h < 0)
						return -1;
					u = u * 16 + (unsigned)h;
				}
				j->p += 4;
				/* A surrogate stands for itself: no token has one. */
				if (u < 0x80) {
					buf[0] = (unsigned char)u;
				} else if (u < 0x800) {
					buf[0] = (unsigned char)(0xc0 | (u >> 6));
					buf[1] = (unsigned char)(0x80 | (u & 0x3f));
					bl = 2;
				} else {
					buf[0] = (unsigned char)(0xe0 | (u >> 12));
					buf[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
					buf[2] = (unsigned char)(0x80 | (u & 0x3f));
					bl = 3;
				}
				break;
			}
			default:
				return -1;
			}
		}
		for (k = 0; k < bl; k++, n++)
			if (out != NULL && n + 1 < size)
				out[n] = (char)buf[k];
	}
	if (out != NULL && size > 0)
		out[n < size ? n : size - 1] = '\0';
	*len = n;
	return 0;
}

static int js_value(struct js *j);

/* Skip a number, true, false or null. */
static int
js_scalar(struct js *j, long long *num, int *isnum)
{
	const char *s = j->p;

	*isnum = 0;
	if (j->end - j->p >= 4 && (memcmp(j->p, "true", 4) == 0 || memcmp(j->p, "null", 4) == 0)) {
		j->p += 4;
		return 0;
	}
	if (j->end - j->p >= 5 && memcmp(j->p, "false", 5) == 0) {
		j->p += 5;
		return 0;
	}
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || !isdigit((unsigned char)*j->p))
		return -1;
	*num = 0;
	while (j->p < j->end && isdigit((unsigned char)*j->p)) {
		if (*num < 1000000000000LL)
			*num = *num * 10 + (*j->p - '0');
		j->p++;
	}
	*isnum = 1;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return -1;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return -1;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
		*isnum = 0;     /* 3e2 seconds: not an integer we take */
	}
	if (*s == '-')
		*num = -*num;
	return 0;
}

/* Skip an object or array at J (its opening bracket). */
static int
js_container(struct js *j)
{
	char close = *j->p == '{' ? '}' : ']';
	int first = 1;

	if (++j->depth > 16)
		return -1;
	j->p++;
	for (;;) {
		js_ws(j);
		if (j->p < j->end && *j->p == close && first) {
			j->p++;
			break;
		}
		if (close == '}') {
			size_t l;
			if (js_string(j, NULL, 0, &l) != 0)
				return -1;
			js_ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return -1;
		}
		if (js_value(j) != 0)
			return -1;
		js_ws(j);
		first = 0;
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			js_ws(j);
			if (j->p < j->end && *j->p == close)
				return -1;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			break;
		}
		return -1;
	}
	j->depth--;
	return 0;
}

static int
js_value(struct js *j)
{
	long long n;
	size_t l;
	int isnum;

	js_ws(j);
	if (j->p >= j->end)
		return -1;
	if (*j->p == '"')
		return js_string(j, NULL, 0, &l);
	if (*j->p == '{' || *j->p == '[')
		return js_container(j);
	return js_scalar(j, &n, &isnum);
}

/* A token: 1-4096 bytes, printable ASCII without space. */
static int
token_ok(const char *t, size_t n)
{
	size_t i;

	if (n == 0 || n > PX_MINT_TOKEN_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
			return 0;
	return 1;
}

/* Printable ASCII only: the rest of S becomes '?'. */
static void
printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

int
px_mint_token_parse(const char *buf, size_t len, struct px_mint_token *out, const char **why)
{
	struct js j = { buf, buf + len, 1 };
	int first = 1;

	out->access_token[0] = out->refresh_token[0] = out->token_type[0] = '\0';
	out->expires_at[0] = '\0';
	out->error[0] = out->error_description[0] = '\0';
	out->expires_in = -1;
	*why = "is not a JSON object";
	js_ws(&j);
	if (j.p >= j.end || *j.p++ != '{')
		return -1;
	for (;;) {
		char key[32];
		size_t kl, vl;
		char *dst = NULL;
		size_t dsz = 0;

		js_ws(&j);
		if (first && j.p < j.end && *j.p == '}') {
			j.p++;
			break;
		}
		if (js_string(&j, key, sizeof(key), &kl) != 0)
			return -1;
		if (kl >= sizeof(key))
			key[0] = '\0';
		js_ws(&j);
		if (j.p >= j.end || *j.p++ != ':')
			return -1;
		js_ws(&j);
		if (strcmp(key, "access_token") == 0 || strcmp(key, "token") == 0) {
			dst = out->access_token;
			dsz = sizeof(out->access_token);
		} else if (strcmp(key, "refresh_token") == 0) {
			dst = out->refresh_token;
			dsz = sizeof(out->refresh_token);
		} else if (strcmp(key, "token_type") == 0) {
			dst = out->token_type;
			dsz = sizeof(out->token_type);
		} else if (strcmp(key, "expires_at") == 0) {
			dst = out->expires_at;
			dsz = sizeof(out->expires_at);
		} else if (strcmp(key, "error") == 0) {
			dst = out->error;
			dsz = sizeof(out->error);
		} else if (strcmp(key, "error_description") == 0 || (strcmp(key, "message") == 0 &&
		    out->error_description[0] == '\0')) {
			dst = out->error_description;
			dsz = sizeof(out->error_description);
		}
		if (dst != NULL && j.p < j.end && *j.p == '"') {
			if (js_string(&j, dst, dsz, &vl) != 0)
				return -1;
			if (dst == out->access_token || dst == out->refresh_token) {
				if (!token_ok(dst, vl)) {
					*why = "holds a token that is empty, too long or not printable ASCII";
					return -1;
				}
			} else {
				printable(dst);
			}
		} else if (strcmp(key, "expires_in") == 0 && j.p < j.end && *j.p != '"' && *j.p != '{' &&
		    *j.p != '[') {
			long long n = 0;
			int isnum;
			if (js_scalar(&j, &n, &isnum) != 0)
				return -1;
			out->expires_in = isnum && n >= 0 ? n : -1;
		} else if (strcmp(key, "expires_in") == 0 && j.p < j.end && *j.p == '"') {
			/* Some endpoints send the number as a string. */
			char num[24];
			char *e;
			long long n;
			if (js_string(&j, num, sizeof(num), &vl) != 0)
				return -1;
			n = strtoll(num, &e, 10);
			out->expires_in = vl > 0 && vl < sizeof(num) && *e == '\0' && n >= 0 ? n : -1;
		} else if (js_value(&j) != 0) {
			return -1;
		}
		js_ws(&j);
		first = 0;
		if (j.p < j.end && *j.p == ',') {
			j.p++;
			continue;
		}
		if (j.p < j.end && *j.p == '}') {
			j.p++;
			break;
		}
		return -1;
	}
	js_ws(&j);
	if (j.p != j.end) {
		*why = "has bytes after its JSON object";
		return -1;
	}
	return 0;
}

/* ---- HTTP/1.1 answer ----------------------------------------------------- */

int
px_mint_response_parse(const char *buf, size_t len, int eof, int *status, const char **body,
    size_t *blen, char *scratch, size_t scratchsz, const char **why)
{
	const char *he, *p, *line, *le;
	long long clen = -1;
	int chunked = 0;

	*why = "is not an HTTP/1.x answer";
	he = NULL;
	for (p = buf; p + 3 < buf + len; p++)
		if (memcmp(p, "\r\n\r\n", 4) == 0) {
			he = p + 4;
			break;
		}
	if (he == NULL) {
		if (len >= 8 && memcmp(buf, "HTTP/1.", 7) != 0)
			return -1;
		if (eof) {
			*why = "ended inside its head";
			return -1;
		}
		return 0;
	}
	if (he - buf < 14 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ' ||
	    !isdigit((unsigned char)buf[9]) || !isdigit((unsigned char)buf[10]) ||
	    !isdigit((unsigned char)buf[11]) || (buf[12] != ' ' && buf[12] != '\r'))
		return -1;
	*status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	line = (const char *)memchr(buf, '\n', (size_t)(he - buf)) + 1;
	for (; line < he - 2; line = le + 1) {
		const char *colon, *v;
		size_t nl;

		le = memchr(line, '\n', (size_t)(he - line));
		if (le == NULL || le == line || le[-1] != '\r')
			return -1;
		colon = memchr(line, ':', (size_t)(le - line));
		if (colon == NULL)
			return -1;
		nl = (size_t)(colon - line);
		for (v = colon + 1; v < le && (*v == ' ' || *v == '\t'); v++)
			;
		if (nl == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
			long long n = 0;
			const char *q;
			for (q = v; q < le - 1; q++) {
				if (!isdigit((unsigned char)*q) || (n = n * 10 + (*q - '0')) > PX_MINT_RESPONSE_MAX) {
					*why = "has a bad or too large Content-Length";
					return -1;
				}
			}
			if (q == v || (clen >= 0 && clen != n)) {
				*why = "has a bad Content-Length";
				return -1;
			}
			clen = n;
		} else if (nl == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0) {
			if ((size_t)(le - 1 - v) >= 7 && strncasecmp(le - 8, "chunked", 7) == 0)
				chunked = 1;
			else {
				*why = "has a transfer coding other than chunked";
				return -1;
			}
		}
	}
	if (chunked && clen >= 0) {
		*why = "has both Content-Length and chunked";
		return -1;
	}
	if (chunked) {
		size_t used = 0;

		p = he;
		for (;;) {
			unsigned long long n = 0;
			int digits = 0;

			while (p < buf + len && hexval((unsigned char)*p) >= 0) {
				n = n * 16 + (unsigned)hexval((unsigned char)*p++);
				if (++digits > 8) {
					*why = "has a chunk too large";
					return -1;
				}
			}
			while (p < buf + len && *p != '\n')
				p++; /* chunk extensions */
			if (p >= buf + len)
				goto more;
			if (digits == 0 || p[-1] != '\r') {
				*why = "has a bad chunk";
				return -1;
			}
			p++;
			if (n == 0) {
				/* Trailers are not kept; the answer ends at the
				 * empty line. */
				for (;;) {
					const char *e = memchr(p, '\n', (size_t)(buf + len - p));
					if (e == NULL)
						goto more;
					if (e == p + 1 && *p == '\r')
						break;
					p = e + 1;
				}
				*body = scratch;
				*blen = used;
				return 1;
			}
			if (n > scratchsz - used) {
				*why = "has a body too large";
				return -1;
			}
			if ((size_t)(buf + len - p) < n + 2)
				goto more;
			memcpy(scratch + used, p, (size_t)n);
			used += (size_t)n;
			p += n;
			if (p[0] != '\r' || p[1] != '\n') {
				*why = "has a bad chunk";
				return -1;
			}
			p += 2;
		}
more:
		if (eof) {
			*why = "ended inside its chunked body";
			return -1;
		}
		return 0;
	}
	*body = he;
	if (clen >= 0) {
		if ((size_t)(buf + len - he) < (size_t)clen) {
			if (eof) {
				*why = "ended before its Content-Length";
				return -1;
			}
			return 0;
		}
		*blen = (size_t)clen;
		return 1;
	}
	if (*status == 204 || *status == 304) {
		*blen = 0;
		return 1;
	}
	if (!eof)
		return 0;
	*blen = (size_t)(buf + len - he);
	return 1;
}

/* ---- the form body --------------------------------------------------------- */

int
px_mint_form_add(char *out, size_t size, size_t *used, const char *key, const char *value,
    size_t vlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t u = *used, i;
	int w;

	w = snprintf(out + u, size - u, "%s%s=", u > 0 ? "&" : "", key);
	if (w < 0 || (size_t)w >= size - u)
		goto full;
	u += (size_t)w;
	for (i = 0; i < vlen; i++) {
		unsigned char c = (unsigned char)value[i];
		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			if (u + 1 >= size)
				goto full;
			out[u++] = (char)c;
		} else {
			if (u + 3 >= size)
				goto full;
			out[u++] = '%';
			out[u++] = hex[c >> 4];
			out[u++] = hex[c & 15];
		}
	}
	out[u] = '\0';
	*used = u;
	return 0;
full:
	if (size > *used)
		out[*used] = '\0';
	return -1;
}

/* ---- GitHub Apps -------------------------------------------------------- */

/* base64url without padding (RFC 7515 §2) of the N bytes at IN into OUT
 * (room for 4 * ((N + 2) / 3) + 1).  Returns its length. */
static size_t
b64url(const unsigned char *in, size_t n, char *out)
{
	int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	int i;

	while (len > 0 && out[len - 1] == '=')
		len--;
	for (i = 0; i < len; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	out[len] = '\0';
	return (size_t)len;
}

long
px_mint_jwt(const char *pem, size_t pemlen, const char *app_id, time_t now, char *out,
    size_t size, const char **why)
{
	static const char header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
	char claims[128];
	unsigned char sig[1024];
	size_t used, siglen = sizeof(sig);
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	BIO *bio;
	long rc = -1;
	int n;

	*why = "out of memory";
	n = snprintf(claims, sizeof(claims), "{\"iat\":%lld,\"exp\":%lld,\"iss\":\"%s\"}",
	    (long long)now - 60, (long long)now + 540, app_id);
	if (n < 0 || (size_t)n >= sizeof(claims) || strspn(app_id, "0123456789") != strlen(app_id)) {
		*why = "the app id is not a number";
		return -1;
	}
	/* header.claims.signature: at most 4/3 of each, and the dots. */
	if (size < 4 * (sizeof(header) + (size_t)n + sizeof(sig)) / 3 + 16) {
		*why = "no room for the JWT";
		return -1;
	}
	used = b64url((const unsigned char *)header, sizeof(header) - 1, out);
	out[used++] = '.';
	used += b64url((const unsigned char *)claims, (size_t)n, out + used);
	if ((bio = BIO_new_mem_buf(pem, (int)pemlen)) == NULL)
		return -1;
	key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (key == NULL || EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
		*why = "the private key is not an RSA key in PEM";
		goto out;
	}
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)out, used) != 1) {
		*why = "the JWT could not be signed";
		goto out;
	}
	out[used++] = '.';
	used += b64url(sig, siglen, out + used);
	rc = (long)used;
out:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	return rc;
}

int
px_mint_time_parse(const char *s, time_t *out)
{
	struct tm tm;
	int y, mo, d, h, mi, se;
	char z;

	if (strlen(s) != 20 || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &z) != 7 ||
	    z != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
	    y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 ||
	    h < 0 || mi < 0 || se < 0)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	*out = timegm(&tm);
	return 0;
}

/* Append the N bytes at S to OUT (SIZE) at *USED; -1 when full. */
static int
put(char *out, size_t size, size_t *used, const char *s, size_t n)
{
	if (n >= size - *used)
		return -1;
	memcpy(out + *used, s, n);
	*used += n;
	out[*used] = '\0';
	return 0;
}

long
px_mint_github_body(const char *repos, const char *perms, char *out, size_t size)
{
	size_t used = 0;
	const char *p, *e;
	int first = 1;

	if (size == 0 || put(out, size, &used, "{\"repositories\":[", 17) < 0)
		return -1;
	/* The names were checked at load: letters, digits, '-', '_', '.'. */
	for (p = repos; *p; p = *e ? e + 1 : e) {
		const char *slash;
		e = p + strcspn(p, ",");
		slash = memchr(p, '/', (size_t)(e - p));
		if (slash == NULL)
			return -1;
		if ((!first && put(out, size, &used, ",", 1) < 0) || put(out, size, &used, "\"", 1) < 0 ||
		    put(out, size, &used, slash + 1, (size_t)(e - slash - 1)) < 0 ||
		    put(out, size, &used, "\"", 1) < 0)
			return -1;
		first = 0;
	}
	if (put(out, size, &used, "]", 1) < 0)
		return -1;
	if (perms != NULL && *perms) {
		first = 1;
		if (put(out, size, &used, ",\"permissions\":{", 16) < 0)
			return -1;
		for (p = perms; *p; p = *e ? e + 1 : e) {
			const char *colon;
			e = p + strcspn(p, ",");
			colon = memchr(p, ':', (size_t)(e - p));
			if (colon == NULL)
				return -1;
			if ((!first && put(out, size, &used, ",", 1) < 0) || put(out, size, &used, "\"", 1) < 0 ||
			    put(out, size, &used, p, (size_t)(colon - p)) < 0 ||
			    put(out, size, &used, "\":\"", 3) < 0 ||
			    put(out, size, &used, colon + 1, (size_t)(e - colon - 1)) < 0 ||
			    put(out, size, &used, "\"", 1) < 0)
				return -1;
			first = 0;
		}
		if (put(out, size, &used, "}", 1) < 0)
			return -1;
	}
	if (put(out, size, &used, "}", 1) < 0)
		return -1;
	return (long)used;
}

/* One segment of a GitHub name: letters, digits, '-', '_', '.', not "."
 * or "..". */
static int
name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 100 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return 0;
	return 1;
}

int
px_mint_github_repo(const char *path, size_t len, int api, char *out, size_t size)
{
	const char *end = path + len, *p = path, *o, *oe, *r, *re;
	const char *q = memchr(path, '?', len);

	if (q != NULL)
		end = q;
	if (memchr(path, '%', (size_t)(end - path)) != NULL)
		return -1;
	if (p >= end || *p != '/')
		return 0;
	p++;
	if (api) {
		if ((size_t)(end - p) < 6 || memcmp(p, "repos/", 6) != 0)
			return 0;
		p += 6;
	}
	o = p;
	oe = memchr(o, '/', (size_t)(end - o));
	if (oe == NULL)
		return api ? -1 : 0;
	r = oe + 1;
	re = memchr(r, '/', (size_t)(end - r));
	if (re == NULL)
		re = end;
	if (!api && (size_t)(re - r) > 4 && memcmp(re - 4, ".git", 4) == 0)
		re -= 4;
	if (!name_ok(o, (size_t)(oe - o)) || !name_ok(r, (size_t)(re - r)))
		return -1;
	if ((size_t)(oe - o) + 1 + (size_t)(re - r) + 1 > size)
		return -1;
	memcpy(out, o, (size_t)(oe - o));
	out[oe - o] = '/';
	memcpy(out + (oe - o) + 1, r, (size_t)(re - r));
	out[(oe - o) + 1 + (re - r)] = '\0';
	return 1;
}

int
px_mint_repo_listed(const char *list, const char *repo)
{
	size_t n = strlen(repo);
	const char *p, *e;

	for (p = list; *p; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		if ((size_t)(e - p) == n && strncasecmp(p, repo, n) == 0)
			return 1;
	}
	return 0;
}
