/*
 * proxy/proto/leak.c: the session's own secrets in outbound bytes (leak.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "conf/secmem.h"
#include "proxy/proto/leak.h"

/*
 * The scan reads Q bytes at every STRIDE-th place only.  Each form is
 * filed under the Q bytes at each of its first STRIDE offsets, so that an
 * occurrence, which covers at least Q + STRIDE - 1 bytes (FORM_MIN), has
 * one of them at a place read.
 */
#define Q 8
#define STRIDE 4
#define FORM_MIN (Q + STRIDE - 1)
/* Buckets of the table of keys: 8192 of 2 bytes, 16 KB, kept in cache. */
#define HBITS 13
#define HASH(x) ((unsigned)(((x) * 0x9E3779B97F4A7C15ULL) >> (64 - HBITS)))

struct form {
	unsigned char *s;	/* secure heap */
	size_t len;
	uint8_t needle;
	uint8_t enc;
};

/* One form filed under the Q bytes at OFF in it. */
struct key {
	uint64_t x;
	uint16_t form;
	uint16_t next;		/* the next key in the bucket, plus one */
	uint8_t off;
};

/* The forms looked for in one kind of text. */
struct formset {
	struct form *f;
	size_t n, cap, maxlen;
	struct key *k;		/* STRIDE a form */
	uint16_t head[1u << HBITS];	/* first key of each bucket, plus one */
};

struct px_leak {
	struct formset stream;	/* targets, headers, bodies */
	struct formset host;	/* host names, folded */
	size_t count;
};

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";
static const char hexl[] = "0123456789abcdef";
static const char hexu[] = "0123456789ABCDEF";

struct px_leak *
px_leak_new(void)
{
	return calloc(1, sizeof(struct px_leak));
}

static void
set_free(struct formset *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		OPENSSL_secure_clear_free(fs->f[i].s, fs->f[i].len);
	free(fs->f);
	free(fs->k);
}

void
px_leak_free(struct px_leak *l)
{
	if (l == NULL)
		return;
	set_free(&l->stream);
	set_free(&l->host);
	free(l);
}

size_t
px_leak_count(const struct px_leak *l)
{
	return l != NULL ? l->count : 0;
}

const char *
px_leak_enc_name(enum px_leak_enc enc)
{
	switch (enc) {
	case PX_LEAK_RAW:
		return "raw";
	case PX_LEAK_BASE64:
		return "base64";
	case PX_LEAK_BASE64URL:
		return "base64url";
	case PX_LEAK_HEX:
		return "hex";
	case PX_LEAK_PERCENT:
		return "percent";
	case PX_LEAK_BASE32:
		return "base32";
	case PX_LEAK_PCT_BASE64:
		return "percent+base64";
	case PX_LEAK_PCT_BASE64URL:
		return "percent+base64url";
	case PX_LEAK_PCT_HEX:
		return "percent+hex";
	}
	return "?";
}

size_t
px_leak_span(const struct px_leak *l)
{
	/* A decoded byte comes from at most three ("%XX"). */
	return l != NULL ? 3 * l->stream.maxlen : 0;
}

/* Add the LEN bytes at S to FS as form ENC of needle N, once. */
static int
set_add(struct formset *fs, size_t n, enum px_leak_enc enc, const unsigned char *s, size_t len)
{
	struct form *f;
	size_t i;
	unsigned h;

	if (len < FORM_MIN)
		return 0;
	for (i = 0; i < fs->n; i++)
		if (fs->f[i].needle == n && fs->f[i].len == len && memcmp(fs->f[i].s, s, len) == 0)
			return 0;
	if (STRIDE * (fs->n + 1) >= UINT16_MAX)
		return -ENOSPC;
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 16;
		struct form *nf = reallocarray(fs->f, cap, sizeof(*nf));
		struct key *nk;

		if (nf == NULL)
			return -ENOMEM;
		fs->f = nf;
		if ((nk = reallocarray(fs->k, cap, STRIDE * sizeof(*nk))) == NULL)
			return -ENOMEM;
		fs->k = nk;
		fs->cap = cap;
	}
	f = &fs->f[fs->n];
	if ((f->s = cf_secmem_alloc(len)) == NULL)
		return -ENOMEM;
	memcpy(f->s, s, len);
	f->len = len;
	f->needle = (uint8_t)n;
	f->enc = (uint8_t)enc;
	for (i = 0; i < STRIDE; i++) {
		struct key *k = &fs->k[STRIDE * fs->n + i];

		memcpy(&k->x, s + i, Q);
		k->form = (uint16_t)fs->n;
		k->off = (uint8_t)i;
		h = HASH(k->x);
		k->next = fs->head[h];
		fs->head[h] = (uint16_t)(STRIDE * fs->n + i + 1);
	}
	fs->n++;
	if (len > fs->maxlen)
		fs->maxlen = len;
	return 0;
}

/*
 * Into OUT, the characters of the encoding of S (LEN bytes) in groups of
 * BITS bits (6 or 5) from ALPHA, when S starts SKIP bytes into the
 * encoded text: only the characters all of whose bits come from S, those
 * that are the same whatever surrounds it.  Returns how many.
 */
static size_t
middle(const unsigned char *s, size_t len, unsigned skip, unsigned bits, const char *alpha,
    unsigned char *out)
{
	size_t first = (8 * skip + bits - 1) / bits, end = 8 * (skip + len), j, n = 0;

	for (j = first; bits * (j + 1) <= end; j++) {
		size_t b = bits * j - 8 * skip, k;
		unsigned v = 0;

		for (k = 0; k < bits; k++, b++)
			v = (v << 1) | ((s[b / 8] >> (7 - b % 8)) & 1);
		out[n++] = (unsigned char)alpha[v];
	}
	return n;
}

long
px_leak_add(struct px_leak *l, const void *str, size_t len)
{
	const unsigned char *s = str;
	unsigned char *t;
	size_t i, n, k;
	unsigned a;
	int rc = 0;

	if (len < PX_LEAK_MIN || len > PX_LEAK_MAX)
		return -EINVAL;
	if (l->count == PX_LEAK_NEEDLES)
		return -ENOSPC;
	n = l->count;
	/* The longest form is hex: two bytes a byte. */
	if ((t = cf_secmem_alloc(2 * len)) == NULL)
		return -ENOMEM;
	rc = set_add(&l->stream, n, PX_LEAK_RAW, s, len);
	for (i = 0; i < len; i++) {
		t[2 * i] = (unsigned char)hexl[s[i] >> 4];
		t[2 * i + 1] = (unsigned char)hexl[s[i] & 15];
	}
	if (rc == 0)
		rc = set_add(&l->stream, n, PX_LEAK_HEX, t, 2 * len);
	if (rc == 0)
		rc = set_add(&l->host, n, PX_LEAK_HEX, t, 2 * len);
	for (i = 0; i < len; i++) {
		t[2 * i] = (unsigned char)hexu[s[i] >> 4];
		t[2 * i + 1] = (unsigned char)hexu[s[i] & 15];
	}
	if (rc == 0)
		rc = set_add(&l->stream, n, PX_LEAK_HEX, t, 2 * len);
	for (a = 0; a < 3 && rc == 0; a++) {
		k = middle(s, len, a, 6, b64, t);
		rc = set_add(&l->stream, n, PX_LEAK_BASE64, t, k);
		if (rc == 0) {
			k = middle(s, len, a, 6, b64url, t);
			rc = set_add(&l->stream, n, PX_LEAK_BASE64URL, t, k);
		}
	}
	for (a = 0; a < 5 && rc == 0; a++) {
		k = middle(s, len, a, 5, b32, t);
		rc = set_add(&l->host, n, PX_LEAK_BASE32, t, k);
	}
	/* The needle itself as a host name shows it: folded, no dots. */
	for (i = k = 0; i < len && rc == 0; i++)
		if (s[i] != '.')
			t[k++] = (unsigned char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	if (rc == 0)
		rc = set_add(&l->host, n, PX_LEAK_RAW, t, k);
	OPENSSL_secure_clear_free(t, 2 * len);
	if (rc != 0)
		return rc;
	l->count++;
	return (long)n;
}

/* A form of FS in ACTIVE that P[0..LEN) holds: 1 and *HIT, or 0. */
static int
set_scan(const struct formset *fs, uint64_t active, const unsigned char *p, size_t len,
    struct px_leak_hit *hit)
{
	size_t i;

	if (fs->n == 0 || len < FORM_MIN)
		return 0;
	for (i = 0; i + Q <= len; i += STRIDE) {
		uint64_t x;
		unsigned k;

		memcpy(&x, p + i, Q);
		for (k = fs->head[HASH(x)]; k != 0; k = fs->k[k - 1].next) {
			const struct key *e = &fs->k[k - 1];
			const struct form *f = &fs->f[e->form];
			size_t at = i - e->off;

			if (e->x != x || !(active >> f->needle & 1) || i < e->off || f->len > len - at ||
			    memcmp(p + at, f->s, f->len) != 0)
				continue;
			hit->needle = f->needle;
			hit->enc = (enum px_leak_enc)f->enc;
			return 1;
		}
	}
	return 0;
}

static int
unhex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Is there an escape (%XX) at P[0..LEN)? */
static int
escape_at(const unsigned char *p, size_t len)
{
	return len >= 3 && p[0] == '%' && unhex(p[1]) >= 0 && unhex(p[2]) >= 0;
}

/* Decode every escape of P[0..LEN), needless or not, into D; returns the
 * length. */
static size_t
unescape(const unsigned char *p, size_t len, unsigned char *d)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		if (escape_at(p + i, len - i)) {
			d[n++] = (unsigned char)(unhex(p[i + 1]) << 4 | unhex(p[i + 2]));
			i += 2;
		} else
			d[n++] = p[i];
	}
	return n;
}

int
px_leak_find(const struct px_leak *l, uint64_t active, const void *buf, size_t len,
    struct px_leak_hit *hit)
{
	const unsigned char *p = buf, *pct;
	size_t reach, from, to, at, n;
	unsigned char *d = NULL;
	int r = 0;

	if (l == NULL || l->count == 0 || active == 0)
		return 0;
	if (set_scan(&l->stream, active, p, len, hit))
		return 1;
	/*
	 * What escapes change: an occurrence seen only once they are decoded
	 * holds one, and covers at most REACH bytes.  Only the stretches that
	 * near an escape are decoded and scanned again: all of a text that
	 * is escaped throughout, little of binary data.
	 */
	reach = 3 * l->stream.maxlen;
	for (at = 0; at < len && r == 0; ) {
		if ((pct = memchr(p + at, '%', len - at)) == NULL)
			break;
		at = (size_t)(pct - p);
		if (!escape_at(pct, len - at)) {
			at++;
			continue;
		}
		from = at > reach ? at - reach : 0;
		to = len - at > reach + 3 ? at + 3 + reach : len;
		/* Stretches that meet are one. */
		for (at += 3; at < to; ) {
			if ((pct = memchr(p + at, '%', to - at)) == NULL)
				break;
			at = (size_t)(pct - p);
			if (escape_at(pct, len - at))
				to = len - at > reach + 3 ? at + 3 + reach : len;
			at++;
		}
		at = to;
		if (d == NULL && (d = malloc(len)) == NULL)
			return -ENOMEM;
		n = unescape(p + from, to - from, d);
		r = set_scan(&l->stream, active, d, n, hit);
		OPENSSL_cleanse(d, n);
	}
	free(d);
	if (r) {
		switch (hit->enc) {
		case PX_LEAK_RAW:
			hit->enc = PX_LEAK_PERCENT;
			break;
		case PX_LEAK_BASE64:
			hit->enc = PX_LEAK_PCT_BASE64;
			break;
		case PX_LEAK_BASE64URL:
			hit->enc = PX_LEAK_PCT_BASE64URL;
			break;
		case PX_LEAK_HEX:
			hit->enc = PX_LEAK_PCT_HEX;
			break;
		default:
			break;
		}
	}
	return r;
}

size_t
px_leak_stream(const struct px_leak *l, uint64_t active, const void *buf, size_t len,
    int final, struct px_leak_hit *hit, int *found)
{
	size_t span = px_leak_span(l), hold;

	if ((*found = px_leak_find(l, active, buf, len, hit)) != 0)
		return 0;
	if (final || span == 0)
		return len;
	hold = len < span - 1 ? len : span - 1;
	return len - hold;
}

int
px_leak_feed(const struct px_leak *l, uint64_t active, struct px_leak_carry *st,
    const void *buf, size_t len, struct px_leak_hit *hit)
{
	size_t span = px_leak_span(l), keep, take, total, drop;
	const unsigned char *p = buf;
	int r;

	if (span == 0 || active == 0 || len == 0)
		return 0;
	keep = span - 1;
	if (st->buf == NULL && (st->buf = malloc(2 * keep)) == NULL)
		return -ENOMEM;
	/* What was kept and the head of this piece: an occurrence over the
	 * seam covers at most KEEP bytes each side of it. */
	take = len < keep ? len : keep;
	memcpy(st->buf + st->len, p, take);
	total = st->len + take;
	if ((r = px_leak_find(l, active, st->buf, total, hit)) != 0)
		return r;
	if (len > take && (r = px_leak_find(l, active, p, len, hit)) != 0)
		return r;
	if (len >= keep) {
		memcpy(st->buf, p + len - keep, keep);
		st->len = keep;
	} else {
		drop = total > keep ? total - keep : 0;
		memmove(st->buf, st->buf + drop, total - drop);
		st->len = total - drop;
	}
	return 0;
}

void
px_leak_carry_free(struct px_leak_carry *st)
{
	if (st->buf != NULL) {
		OPENSSL_cleanse(st->buf, st->len);
		free(st->buf);
	}
	st->buf = NULL;
	st->len = 0;
}

int
px_leak_host(const struct px_leak *l, uint64_t active, const char *host, size_t len,
    struct px_leak_hit *hit)
{
	unsigned char *d;
	size_t i, n = 0;
	int r;

	if (l == NULL || l->count == 0 || active == 0 || len == 0)
		return 0;
	if ((d = malloc(len)) == NULL)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		if (host[i] != '.')
			d[n++] = (unsigned char)(host[i] >= 'A' && host[i] <= 'Z' ? host[i] + 32 : host[i]);
	r = set_scan(&l->host, active, d, n, hit);
	free(d);
	return r;
}
