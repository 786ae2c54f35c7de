/*
 * proxy/proto/sigv4.c: AWS Signature Version 4 (see sigv4.h): the two
 * signed forms, the canonical request, the signing key and signature.
 */
#include "proxy/proto/sigv4.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

/* ---- a growing string ----------------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
	int failed;
};

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *np;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->failed = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* ---- encoding --------------------------------------------------------------- */

static int
unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '.' || c == '_' || c == '~';
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Append S (N bytes) encoded: all but unreserved (and '/' when SLASH). */
static void
sb_encode(struct sbuf *b, const char *s, size_t n, int slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (unreserved(c) || (slash && c == '/')) {
			sb_add(b, (const char *)&c, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };
			sb_add(b, e, 3);
		}
	}
}

/* Append S (N bytes) with %XX decoded, then encoded again: one spelling
 * for each parameter, whatever the client chose. */
static void
sb_reencode(struct sbuf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];
		int h, l;
		if (c == '%' && i + 2 < n &&
		    (h = hexval(s[i + 1])) >= 0 && (l = hexval(s[i + 2])) >= 0) {
			c = (char)(h << 4 | l);
			i += 2;
		}
		sb_encode(b, &c, 1, 0);
	}
}

long
px_sigv4_encode(const char *s, size_t len, char *out, size_t size)
{
	struct sbuf b = { 0 };
	long r;

	sb_encode(&b, s, len, 0);
	if (b.failed || b.len + 1 > size)
		r = -ENOSPC;
	else {
		memcpy(out, b.p != NULL ? b.p : "", b.len + 1);
		r = (long)b.len;
	}
	free(b.p);
	return r;
}

/* Decode %XX in S (N bytes) into OUT (SIZE bytes).  Returns the length,
 * or -1 when it does not fit or a '%' is not followed by two hex digits. */
static long
pct_decode(const char *s, size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			int h, l;
			if (i + 2 >= n)
				return -1;
			if ((h = hexval(s[i + 1])) < 0 || (l = hexval(s[i + 2])) < 0)
				return -1;
			c = (char)(h << 4 | l);
			i += 2;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return (long)o;
}

/* ---- parsing ----------------------------------------------------------------- */

static int
is_hex_lower(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int
all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

/* A scope part: letters, digits and '-', 1 to MAX. */
static int
scope_part_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > PX_SIGV4_SCOPE_PART_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/* KEYID/YYYYMMDD/REGION/SERVICE/aws4_request (N bytes at S, decoded). */
static int
parse_cred(const char *s, size_t n, struct px_sigv4_cred *c, const char **why)
{
	const char *part[5];
	size_t plen[5], k = 0, i, start = 0;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '/')
			continue;
		if (k == 5) {
			*why = "the credential has more than five parts";
			return -EINVAL;
		}
		part[k] = s + start;
		plen[k++] = i - start;
		start = i + 1;
	}
	if (k != 5) {
		*why = "the credential is not KEYID/DATE/REGION/SERVICE/aws4_request";
		return -EINVAL;
	}
	if (plen[0] == 0 || plen[0] > PX_SIGV4_KEYID_MAX) {
		*why = "the credential's access key id is empty or too long";
		return -EINVAL;
	}
	for (i = 0; i < plen[0]; i++)
		if (!((part[0][i] >= 'A' && part[0][i] <= 'Z') || (part[0][i] >= 'a' && part[0][i] <= 'z') ||
		    (part[0][i] >= '0' && part[0][i] <= '9'))) {
			*why = "the credential's access key id is not letters and digits";
			return -EINVAL;
		}
	if (plen[1] != 8 || !all_digits(part[1], 8)) {
		*why = "the credential's date is not YYYYMMDD";
		return -EINVAL;
	}
	if (!scope_part_ok(part[2], plen[2]) || !scope_part_ok(part[3], plen[3])) {
		*why = "the credential's region or service is not letters, digits and '-'";
		return -EINVAL;
	}
	if (plen[4] != 12 || memcmp(part[4], "aws4_request", 12) != 0) {
		*why = "the credential does not end in aws4_request";
		return -EINVAL;
	}
	memcpy(c->key_id, part[0], plen[0]);
	c->key_id[plen[0]] = '\0';
	memcpy(c->date, part[1], 8);
	c->date[8] = '\0';
	memcpy(c->region, part[2], plen[2]);
	c->region[plen[2]] = '\0';
	memcpy(c->service, part[3], plen[3]);
	c->service[plen[3]] = '\0';
	return 0;
}

/* Lower-case names separated by ';', host among them, each once. */
static int
signed_ok(const char *s, size_t n, const char **why)
{
	size_t i, start = 0;
	int host = 0;

	if (n == 0 || n > PX_SIGV4_SIGNED_MAX) {
		*why = "SignedHeaders is empty or too long";
		return -EINVAL;
	}
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != ';') {
			unsigned char c = (unsigned char)s[i];
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    strchr("!#$%&'*+-.^_`|~", c) != NULL) || c == 0) {
				*why = "SignedHeaders is not lower-case header names separated by ';'";
				return -EINVAL;
			}
			continue;
		}
		if (i == start) {
			*why = "SignedHeaders has an empty name";
			return -EINVAL;
		}
		if (i - start == 4 && memcmp(s + start, "host", 4) == 0)
			host++;
		start = i + 1;
	}
	if (host != 1) {
		*why = "SignedHeaders does not name host once";
		return -EINVAL;
	}
	return 0;
}

int
px_sigv4_parse_header(const char *v, size_t len, struct px_sigv4_auth *out, const char **why)
{
	static const char algo[] = PX_SIGV4_ALGORITHM;
	size_t al = sizeof(algo) - 1;
	int have_c = 0, have_s = 0, have_sig = 0;
	const char *p, *end = v + len;

	while (len > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		len--;
	}
	if (len < al || strncasecmp(v, algo, al) != 0 || (len > al && v[al] != ' ' && v[al] != '\t'))
		return 0;
	if (strncmp(v, algo, al) != 0) {
		*why = "the algorithm is not written AWS4-HMAC-SHA256";
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	p = v + al;
	while (p < end) {
		const char *comma, *eq, *val;
		size_t nl, vl;

		while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
			p++;
		if (p == end)
			break;
		comma = memchr(p, ',', (size_t)(end - p));
		if (comma == NULL)
			comma = end;
		eq = memchr(p, '=', (size_t)(comma - p));
		if (eq == NULL) {
			*why = "a part of the Authorization header is not NAME=VALUE";
			return -EINVAL;
		}
		nl = (size_t)(eq - p);
		val = eq + 1;
		vl = (size_t)(comma - val);
		while (vl > 0 && (val[vl - 1] == ' ' || val[vl - 1] == '\t'))
			vl--;
		if (nl == 10 && memcmp(p, "Credential", 10) == 0) {
			if (have_c++ || parse_cred(val, vl, &out->cred, why) != 0) {
				if (have_c > 1)
					*why = "Credential is given twice";
				return -EINVAL;
			}
		} else if (nl == 13 && memcmp(p, "SignedHeaders", 13) == 0) {
			if (have_s++) {
				*why = "SignedHeaders is given twice";
				return -EINVAL;
			}
			if (signed_ok(val, vl, why) != 0)
				return -EINVAL;
			memcpy(out->signed_headers, val, vl);
			out->signed_headers[vl] = '\0';
		} else if (nl == 9 && memcmp(p, "Signature", 9) == 0) {
			if (have_sig++) {
				*why = "Signature is given twice";
				return -EINVAL;
			}
			if (vl != 64 || !is_hex_lower(val, vl)) {
				*why = "the Signature is not 64 lower-case hex digits";
				return -EINVAL;
			}
			memcpy(out->signature, val, 64);
			out->signature[64] = '\0';
		} else {
			*why = "the Authorization header has a part other than Credential, SignedHeaders "
			    "and Signature";
			return -EINVAL;
		}
		p = comma;
	}
	if (!have_c || !have_s || !have_sig) {
		*why = "the Authorization header lacks Credential, SignedHeaders or Signature";
		return -EINVAL;
	}
	return 1;
}

int
px_sigv4_parse_query(const char *t, size_t len, struct px_sigv4_auth *out, const char **why)
{
	const char *q = memchr(t, '?', len), *end = t + len, *p, *amp;
	int seen_algo = 0, seen_cred = 0, seen_date = 0, seen_sh = 0, seen_sig = 0, seen_tok = 0;
	char buf[PX_SIGV4_SIGNED_MAX + 1];

	if (q == NULL)
		return 0;
	memset(out, 0, sizeof(*out));
	for (p = q + 1; p < end; p = amp + 1) {
		const char *eq, *val;
		size_t l, nl, vl;
		long dl;

		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		l = (size_t)(amp - p);
		eq = memchr(p, '=', l);
		nl = eq != NULL ? (size_t)(eq - p) : l;
		val = eq != NULL ? eq + 1 : amp;
		vl = (size_t)(amp - val);
#define IS(s) (nl == sizeof(s) - 1 && memcmp(p, s, nl) == 0)
		if (!(IS("X-Amz-Algorithm") || IS("X-Amz-Credential") || IS("X-Amz-Date") ||
		    IS("X-Amz-SignedHeaders") || IS("X-Amz-Signature") || IS("X-Amz-Security-Token")))
			continue;
		if (IS("X-Amz-Security-Token")) {
			if (seen_tok++) {
				*why = "X-Amz-Security-Token is given twice";
				return -EINVAL;
			}
			out->has_token = 1;
			continue;
		}
		dl = pct_decode(val, vl, buf, sizeof(buf));
		if (dl < 0) {
			*why = "a presigned parameter is too long or badly percent-encoded";
			return -EINVAL;
		}
		if (IS("X-Amz-Algorithm")) {
			if (seen_algo++ || strcmp(buf, PX_SIGV4_ALGORITHM) != 0) {
				*why = "X-Amz-Algorithm is not AWS4-HMAC-SHA256 once";
				return -EINVAL;
			}
		} else if (IS("X-Amz-Credential")) {
			if (seen_cred++) {
				*why = "X-Amz-Credential is given twice";
				return -EINVAL;
			}
			if (parse_cred(buf, (size_t)dl, &out->cred, why) != 0)
				return -EINVAL;
		} else if (IS("X-Amz-Date")) {
			if (seen_date++ || dl != 16 || !all_digits(buf, 8) || buf[8] != 'T' ||
			    !all_digits(buf + 9, 6) || buf[15] != 'Z') {
				*why = "X-Amz-Date is not YYYYMMDDTHHMMSSZ once";
				return -EINVAL;
			}
			memcpy(out->amz_date, buf, 17);
		} else if (IS("X-Amz-SignedHeaders")) {
			if (seen_sh++) {
				*why = "X-Amz-SignedHeaders is given twice";
				return -EINVAL;
			}
			if (signed_ok(buf, (size_t)dl, why) != 0)
				return -EINVAL;
			memcpy(out->signed_headers, buf, (size_t)dl + 1);
		} else {
			if (seen_sig++ || dl != 64 || !is_hex_lower(buf, 64)) {
				*why = "X-Amz-Signature is not 64 lower-case hex digits once";
				return -EINVAL;
			}
			memcpy(out->signature, buf, 65);
		}
#undef IS
	}
	if (!seen_algo && !seen_cred && !seen_sig) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (!seen_algo || !seen_cred || !seen_date || !seen_sh || !seen_sig) {
		*why = "a presigned request needs X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, "
		    "X-Amz-SignedHeaders and X-Amz-Signature";
		return -EINVAL;
	}
	if (memcmp(out->amz_date, out->cred.date, 8) != 0) {
		*why = "X-Amz-Date is not on the credential's date";
		return -EINVAL;
	}
	out->presigned = 1;
	return 1;
}

int
px_sigv4_payload_ok(const char *payload, size_t len)
{
	return (len == 64 && is_hex_lower(payload, 64)) ||
	    (len == sizeof(PX_SIGV4_UNSIGNED) - 1 && memcmp(payload, PX_SIGV4_UNSIGNED, len) == 0) ||
	    (len == sizeof(PX_SIGV4_UNSIGNED_TRAILER) - 1 &&
	    memcmp(payload, PX_SIGV4_UNSIGNED_TRAILER, len) == 0);
}

/* ---- the canonical request ------------------------------------------------- */

/* The path as AWS services other than S3 see it (botocore's
 * remove_dot_segments(): empty and "." segments go, ".." removes one). */
static void
sb_normal_path(struct sbuf *b, const char *p, size_t n)
{
	size_t *seg = NULL, *segl = NULL, ns = 0, i, start = 0;

	if (n == 0) {
		sb_add(b, "/", 1);
		return;
	}
	seg = calloc(n + 1, sizeof(*seg));
	segl = calloc(n + 1, sizeof(*segl));
	if (seg == NULL || segl == NULL) {
		b->failed = 1;
		goto out;
	}
	for (i = 0; i <= n; i++) {
		size_t l;
		if (i < n && p[i] != '/')
			continue;
		l = i - start;
		if (l == 0 || (l == 1 && p[start] == '.')) {
			/* dropped */
		} else if (l == 2 && p[start] == '.' && p[start + 1] == '.') {
			if (ns > 0)
				ns--;
		} else {
			seg[ns] = start;
			segl[ns++] = l;
		}
		start = i + 1;
	}
	if (p[0] == '/')
		sb_add(b, "/", 1);
	for (i = 0; i < ns; i++) {
		if (i > 0)
			sb_add(b, "/", 1);
		sb_encode(b, p + seg[i], segl[i], 0);
	}
	if (p[n - 1] == '/' && ns > 0)
		sb_add(b, "/", 1);
out:
	free(seg);
	free(segl);
}

struct qparam {
	char *k, *v;
};

static int
qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a, *y = b;
	int r = strcmp(x->k, y->k);

	return r != 0 ? r : strcmp(x->v, y->v);
}

static void
sb_query(struct sbuf *b, const char *q, size_t n, int presigned)
{
	struct qparam *v = NULL;
	size_t nv = 0, cap = 0, i;
	const char *p, *end = q + n, *amp;

	for (p = q; p < end; p = amp + 1) {
		const char *eq;
		size_t l, nl;
		struct sbuf kb = { 0 }, vb = { 0 };

		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		l = (size_t)(amp - p);
		if (l == 0)
			continue;
		eq = memchr(p, '=', l);
		nl = eq != NULL ? (size_t)(eq - p) : l;
		if (presigned && nl == 15 && memcmp(p, "X-Amz-Signature", 15) == 0)
			continue;
		sb_reencode(&kb, p, nl);
		sb_add(&kb, "", 0);
		if (eq != NULL)
			sb_reencode(&vb, eq + 1, (size_t)(amp - eq - 1));
		sb_add(&vb, "", 0);
		if (kb.failed || vb.failed) {
			free(kb.p);
			free(vb.p);
			b->failed = 1;
			goto out;
		}
		if (nv == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct qparam *nq = realloc(v, nc * sizeof(*nq));
			if (nq == NULL) {
				free(kb.p);
				free(vb.p);
				b->failed = 1;
				goto out;
			}
			v = nq;
			cap = nc;
		}
		v[nv].k = kb.p;
		v[nv++].v = vb.p;
	}
	if (nv > 0)
		qsort(v, nv, sizeof(*v), qparam_cmp);
	for (i = 0; i < nv; i++) {
		if (i > 0)
			sb_add(b, "&", 1);
		sb_str(b, v[i].k);
		sb_add(b, "=", 1);
		sb_str(b, v[i].v);
	}
out:
	for (i = 0; i < nv; i++) {
		free(v[i].k);
		free(v[i].v);
	}
	free(v);
}

/* The values of every header named NAME (NL bytes) in H, trimmed, runs of
 * spaces made one, joined by ','.  Returns how many there were. */
static size_t
sb_header(struct sbuf *b, const struct px_sigv4_header *h, size_t nh, const char *name, size_t nl)
{
	size_t i, j, found = 0;

	for (i = 0; i < nh; i++) {
		const char *v = h[i].value;
		size_t vl = h[i].value_len;
		int sp = 0;

		if (h[i].name_len != nl || strncasecmp(h[i].name, name, nl) != 0)
			continue;
		if (found++ > 0)
			sb_add(b, ",", 1);
		while (vl > 0 && (*v == ' ' || *v == '\t')) {
			v++;
			vl--;
		}
		while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
		for (j = 0; j < vl; j++) {
			if (v[j] == ' ' || v[j] == '\t') {
				sp = 1;
				continue;
			}
			if (sp)
				sb_add(b, " ", 1);
			sp = 0;
			sb_add(b, &v[j], 1);
		}
	}
	return found;
}

char *
px_sigv4_canonical(const char *m, size_t mlen, const char *t, size_t tlen,
    const struct px_sigv4_header *h, size_t nh, const char *signed_headers,
    const char *payload, int s3, int presigned, size_t *len, const char **why)
{
	struct sbuf b = { 0 };
	const char *q = memchr(t, '?', tlen), *p, *semi;
	size_t pl = q != NULL ? (size_t)(q - t) : tlen;

	sb_add(&b, m, mlen);
	sb_add(&b, "\n", 1);
	if (s3)
		sb_add(&b, pl > 0 ? t : "/", pl > 0 ? pl : 1);
	else
		sb_normal_path(&b, t, pl);
	sb_add(&b, "\n", 1);
	if (q != NULL)
		sb_query(&b, q + 1, tlen - pl - 1, presigned);
	sb_add(&b, "\n", 1);
	for (p = signed_headers; *p != '\0'; p = semi + (*semi == ';')) {
		semi = strchr(p, ';');
		if (semi == NULL)
			semi = p + strlen(p);
		sb_add(&b, p, (size_t)(semi - p));
		sb_add(&b, ":", 1);
		if (sb_header(&b, h, nh, p, (size_t)(semi - p)) == 0) {
			*why = "a header SignedHeaders names is not in the request";
			free(b.p);
			return NULL;
		}
		sb_add(&b, "\n", 1);
	}
	sb_add(&b, "\n", 1);
	sb_str(&b, signed_headers);
	sb_add(&b, "\n", 1);
	sb_str(&b, payload);
	if (b.failed) {
		*why = "out of memory";
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

/* ---- signing -------------------------------------------------------------------- */

static int
hmac(const unsigned char *key, size_t klen, const void *msg, size_t mlen, unsigned char out[32])
{
	unsigned int n = 0;

	return HMAC(EVP_sha256(), key, (int)klen, msg, mlen, out, &n) != NULL && n == 32 ? 0 : -EIO;
}

static void
hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

int
px_sigv4_sign(const char *secret, size_t slen, const char *amz_date,
    const struct px_sigv4_cred *cred, const char *cr, size_t crlen, char sig[65])
{
	unsigned char kbuf[4 + 256], k1[32], k2[32], k3[32], k4[32], h[32], s[32];
	char sts[64 + 17 + 3 * (PX_SIGV4_SCOPE_PART_MAX + 1) + 80 + 65], hh[65];
	int n, rc = -EIO;

	if (slen > sizeof(kbuf) - 4 || strlen(amz_date) != 16 || memcmp(amz_date, cred->date, 8) != 0)
		return -EINVAL;
	memcpy(kbuf, "AWS4", 4);
	memcpy(kbuf + 4, secret, slen);
	if (SHA256((const unsigned char *)cr, crlen, h) == NULL)
		goto out;
	hex(h, 32, hh);
	n = snprintf(sts, sizeof(sts), "%s\n%s\n%s/%s/%s/aws4_request\n%s", PX_SIGV4_ALGORITHM, amz_date,
	    cred->date, cred->region, cred->service, hh);
	if (n < 0 || (size_t)n >= sizeof(sts)) {
		rc = -EINVAL;
		goto out;
	}
	if (hmac(kbuf, 4 + slen, cred->date, strlen(cred->date), k1) != 0 ||
	    hmac(k1, 32, cred->region, strlen(cred->region), k2) != 0 ||
	    hmac(k2, 32, cred->service, strlen(cred->service), k3) != 0 ||
	    hmac(k3, 32, "aws4_request", 12, k4) != 0 ||
	    hmac(k4, 32, sts, (size_t)n, s) != 0)
		goto out;
	hex(s, 32, sig);
	rc = 0;
out:
	OPENSSL_cleanse(kbuf, sizeof(kbuf));
	OPENSSL_cleanse(k1, sizeof(k1));
	OPENSSL_cleanse(k2, sizeof(k2));
	OPENSSL_cleanse(k3, sizeof(k3));
	OPENSSL_cleanse(k4, sizeof(k4));
	return rc;
}

long
px_sigv4_auth_value(const struct px_sigv4_cred *cred, const char *signed_headers,
    const char *sig, char *out, size_t size)
{
	int n = snprintf(out, size, "%s Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
	    PX_SIGV4_ALGORITHM, cred->key_id, cred->date, cred->region, cred->service, signed_headers, sig);

	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

char *
px_sigv4_set_param(const char *t, size_t len, const char *name, const char *value, size_t *outlen)
{
	struct sbuf b = { 0 };
	const char *q = memchr(t, '?', len), *end = t + len, *p, *amp;
	size_t nl = strlen(name);
	int first = 1, put = 0;

	sb_add(&b, t, q != NULL ? (size_t)(q - t) : len);
	for (p = q != NULL ? q + 1 : end; p < end; p = amp + 1) {
		const char *eq;
		size_t l, kl;

		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		l = (size_t)(amp - p);
		if (l == 0)
			continue;
		eq = memchr(p, '=', l);
		kl = eq != NULL ? (size_t)(eq - p) : l;
		sb_add(&b, first ? "?" : "&", 1);
		if (kl == nl && memcmp(p, name, nl) == 0) {
			if (value == NULL || put) {
				b.len--; /* the separator just added */
				continue;
			}
			sb_str(&b, name);
			sb_add(&b, "=", 1);
			sb_str(&b, value);
			put = 1;
		} else {
			sb_add(&b, p, l);
		}
		first = 0;
	}
	if (value != NULL && !put) {
		sb_add(&b, first ? "?" : "&", 1);
		sb_str(&b, name);
		sb_add(&b, "=", 1);
		sb_str(&b, value);
	}
	sb_add(&b, "", 0);
	if (b.failed || b.p == NULL) {
		free(b.p);
		return NULL;
	}
	b.p[b.len] = '\0';
	*outlen = b.len;
	return b.p;
}
