/*
 * tests/unit/test-leak.c: the session's own secrets in outbound bytes
 * (proxy/proto/leak.h).  Each needle is encoded here by other means
 * (OpenSSL's base64, printf's hex, escapes by hand) inside text around it
 * of every length, so that base64 meets it at every alignment; the scan
 * must find it, name the needle and the encoding, in one piece and cut at
 * every offset; and find nothing in megabytes of random bytes.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "proxy/proto/leak.h"
#include "tests/unit/tap.h"

static const char *needles[] = {
	"sk-ant-api03-Zq8xY2wVb7N1kLm0PqRsTuVwXyZa0b1C2d3E4f5G6h7I8j9K0l1M2n3O4p5Q6r7S8t9U0v1W2x3Y4z5A6b7C8dAA",
	"ghp_Q2w3E4r5T6y7U8i9O0pAsDfGhJkL",
	"real-value-\xff\xfe\x01 with bytes",
	"123456789012",
};
#define NNEEDLES (sizeof(needles) / sizeof(needles[0]))

static unsigned
rnd(unsigned n)
{
	return (unsigned)random() % n;
}

static struct px_leak *
make_leak(void)
{
	struct px_leak *l = px_leak_new();
	size_t i;

	for (i = 0; i < NNEEDLES; i++)
		if (px_leak_add(l, needles[i], strlen(needles[i])) != (long)i)
			return NULL;
	return l;
}

/* Into OUT: PRE random bytes, the needle, POST random bytes. */
static size_t
surround(const char *n, size_t pre, size_t post, unsigned char *out)
{
	size_t i, nl = strlen(n);

	for (i = 0; i < pre; i++)
		out[i] = (unsigned char)rnd(256);
	memcpy(out + pre, n, nl);
	for (i = 0; i < post; i++)
		out[pre + nl + i] = (unsigned char)rnd(256);
	return pre + nl + post;
}

enum form { F_RAW, F_B64, F_B64URL, F_HEXL, F_HEXU, F_PCT_ALL, F_PCT_SOME, F_PCT_B64, NFORMS };
static const char *form_name[] = { "raw", "base64", "base64url", "hex", "hex", "percent",
    "percent", "percent+base64" };

/* Encode IN[0..LEN) into OUT as FORM; returns the length. */
static size_t
encode(enum form form, const unsigned char *in, size_t len, char *out)
{
	size_t i, n = 0;
	char *tmp;

	switch (form) {
	case F_RAW:
		memcpy(out, in, len);
		return len;
	case F_B64:
		return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)len);
	case F_B64URL:
		n = (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)len);
		for (i = 0; i < n; i++)
			out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
		while (n > 0 && out[n - 1] == '=')
			n--;
		return n;
	case F_HEXL:
	case F_HEXU:
		for (i = 0; i < len; i++)
			n += (size_t)sprintf(out + n, form == F_HEXL ? "%02x" : "%02X", in[i]);
		return n;
	case F_PCT_ALL:
		/* Every byte, needless or not, in either case. */
		for (i = 0; i < len; i++)
			n += (size_t)sprintf(out + n, i % 2 ? "%%%02x" : "%%%02X", in[i]);
		return n;
	case F_PCT_SOME:
		for (i = 0; i < len; i++) {
			if (rnd(2) || in[i] == '%')
				n += (size_t)sprintf(out + n, "%%%02X", in[i]);
			else
				out[n++] = (char)in[i];
		}
		return n;
	case F_PCT_B64:
		tmp = malloc(4 * len + 8);
		len = (size_t)EVP_EncodeBlock((unsigned char *)tmp, in, (int)len);
		for (i = 0; i < len; i++) {
			if (tmp[i] == '+' || tmp[i] == '/' || tmp[i] == '=')
				n += (size_t)sprintf(out + n, "%%%02X", (unsigned char)tmp[i]);
			else
				out[n++] = tmp[i];
		}
		free(tmp);
		return n;
	default:
		return 0;
	}
}

/* Every needle in every form, at every base64 alignment, with text of
 * every length around it: found, named, in one piece. */
static void
test_forms(struct px_leak *l)
{
	unsigned char src[512];
	char *enc = malloc(4096);
	size_t i, pre, post;
	int f, all = 1, named = 1, right_enc = 1;

	for (i = 0; i < NNEEDLES; i++)
		for (f = 0; f < NFORMS; f++)
			for (pre = 0; pre < 6; pre++)
				for (post = 0; post < 4; post++) {
					struct px_leak_hit hit = { 99, 99 };
					size_t sl = surround(needles[i], pre, post, src);
					size_t el = encode(f, src, sl, enc);
					int r = px_leak_find(l, ~0ULL, enc, el, &hit);

					if (r != 1) {
						if (all)
							tap_diag("not found: needle %zu form %d pre %zu post %zu",
							    i, f, pre, post);
						all = 0;
						continue;
					}
					if (hit.needle != i)
						named = 0;
					/* Random text around raw may itself hold escapes. */
					/* A base64 middle without '+', '/' or '-', '_'
					 * is base64url's, and needs no escape. */
					if (strcmp(px_leak_enc_name(hit.enc), form_name[f]) != 0 &&
					    !(f == F_RAW || f == F_PCT_SOME) &&
					    !((f == F_B64URL || f == F_PCT_B64) && hit.enc == PX_LEAK_BASE64)) {
						if (right_enc)
							tap_diag("needle %zu form %d found as %s", i, f,
							    px_leak_enc_name(hit.enc));
						right_enc = 0;
					}
				}
	tap_ok(all, "every needle in every form at every alignment is found");
	tap_ok(named, "the hit names the needle");
	tap_ok(right_enc, "and the encoding");
	free(enc);
}

/* A form cut in two at every offset, fed as two pieces. */
static void
test_split(struct px_leak *l)
{
	unsigned char src[256];
	char *enc = malloc(4096);
	size_t i, k, sl, el;
	int f, all = 1, stream_ok = 1, bounded = 1;
	size_t span = px_leak_span(l);

	for (i = 0; i < NNEEDLES; i++)
		for (f = 0; f < NFORMS; f++) {
			sl = surround(needles[i], 1 + rnd(5), 1 + rnd(5), src);
			el = encode(f, src, sl, enc);
			for (k = 0; k <= el; k++) {
				struct px_leak_carry st = { 0 };
				struct px_leak_hit hit;
				char *win = malloc(el + span);
				size_t held, go;
				int r, found;

				r = px_leak_feed(l, ~0ULL, &st, enc, k, &hit);
				if (r == 0)
					r = px_leak_feed(l, ~0ULL, &st, enc + k, el - k, &hit);
				if (r != 1 || hit.needle != i)
					all = 0;
				px_leak_carry_free(&st);
				/* The same with the hold-back: what is held is fed again. */
				go = px_leak_stream(l, ~0ULL, enc, k, 0, &hit, &found);
				held = k - go;
				if (held >= span)
					bounded = 0;
				if (!found) {
					memcpy(win, enc + go, held);
					memcpy(win + held, enc + k, el - k);
					(void)px_leak_stream(l, ~0ULL, win, held + el - k, 1, &hit, &found);
				}
				if (found != 1 || hit.needle != i)
					stream_ok = 0;
				free(win);
			}
		}
	tap_ok(all, "cut at every offset, the carry finds it when its last byte comes");
	tap_ok(stream_ok, "cut at every offset, the hold-back finds it");
	tap_ok(bounded, "never more is held than the span less one (%zu)", span - 1);
	free(enc);
}

/* Byte by byte through the carry, and the hold-back in random pieces. */
static void
test_pieces(struct px_leak *l)
{
	unsigned char src[256];
	char *enc = malloc(4096);
	size_t i, k, el;
	int f, all = 1;

	for (i = 0; i < NNEEDLES; i++)
		for (f = 0; f < NFORMS; f++) {
			struct px_leak_carry st = { 0 };
			struct px_leak_hit hit;
			int r = 0;

			el = encode(f, src, surround(needles[i], rnd(4), rnd(4), src), enc);
			for (k = 0; k < el && r == 0; k++)
				r = px_leak_feed(l, ~0ULL, &st, enc + k, 1, &hit);
			if (r != 1 || hit.needle != i)
				all = 0;
			px_leak_carry_free(&st);
		}
	tap_ok(all, "byte by byte, through the carry, every form is found");
	free(enc);
}

static void
test_mask_and_limits(struct px_leak *l)
{
	struct px_leak *t = px_leak_new();
	struct px_leak_hit hit;
	char b[64];
	int i, ok = 1;

	tap_cmp_int(px_leak_find(l, ~0ULL & ~(1ULL << 1), needles[1], strlen(needles[1]), &hit), "==",
	    0, "a needle not in the active mask is not reported");
	tap_cmp_int(px_leak_find(l, 1ULL << 1, needles[1], strlen(needles[1]), &hit), "==", 1,
	    "and is when it is");
	tap_cmp_int(px_leak_add(t, "short", 5), "==", -EINVAL, "a needle under PX_LEAK_MIN is refused");
	for (i = 0; i < PX_LEAK_NEEDLES; i++) {
		snprintf(b, sizeof(b), "needle-number-%04d", i);
		if (px_leak_add(t, b, strlen(b)) != i)
			ok = 0;
	}
	tap_ok(ok, "PX_LEAK_NEEDLES needles are taken");
	tap_cmp_int(px_leak_add(t, "one-more-needle", 15), "==", -ENOSPC, "one more is refused");
	tap_cmp_int(px_leak_find(t, ~0ULL, "xx needle-number-0063 xx", 24, &hit), "==", 1,
	    "the last one is found");
	tap_cmp_int(hit.needle, "==", 63, "under its index");
	px_leak_free(t);
}

static size_t
base32(const unsigned char *in, size_t len, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	size_t i, n = 0, bits = 0;
	unsigned v = 0;

	for (i = 0; i < len; i++) {
		v = (v << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			out[n++] = a[(v >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		out[n++] = a[(v << (5 - bits)) & 31];
	return n;
}

/* Host names: labels of at most 63, any case. */
static void
test_host(struct px_leak *l)
{
	unsigned char src[256];
	char enc[1024], host[1200];
	struct px_leak_hit hit;
	size_t i, pre, el, k, n;
	int hexok = 1, b32ok = 1;

	for (i = 0; i < NNEEDLES; i++)
		for (pre = 0; pre < 5; pre++) {
			size_t sl = surround(needles[i], pre, rnd(3), src);

			for (k = 0; k < 2; k++) {
				el = k == 0 ? encode(F_HEXU, src, sl, enc) : base32(src, sl, enc);
				for (n = 0; n < el; n += 50) {
					size_t m = el - n < 50 ? el - n : 50;
					memcpy(host + n + n / 50, enc + n, m);
					host[n + n / 50 + m] = '.';
				}
				n = el + (el + 49) / 50;
				memcpy(host + n, "evil.example", 12);
				if (px_leak_host(l, ~0ULL, host, n + 12, &hit) != 1 || hit.needle != i ||
				    strcmp(px_leak_enc_name(hit.enc), k == 0 ? "hex" : "base32") != 0) {
					if (k == 0)
						hexok = 0;
					else
						b32ok = 0;
				}
			}
		}
	tap_ok(hexok, "hex in labels, upper case, is found in a host name");
	tap_ok(b32ok, "base32 at every alignment, in labels, is found in a host name");
	tap_cmp_int(px_leak_host(l, ~0ULL, "api.example.com", 15, &hit), "==", 0,
	    "an ordinary name is not");
	tap_cmp_int(px_leak_host(l, ~0ULL, "GHP_q2w3e4r5t6y7u8i9o0pasdfghjkl.x", 34, &hit), "==", 1,
	    "the needle itself, in another case, is");
}

/* Megabytes of random bytes: no false match; the rate, for information. */
static void
test_bulk(struct px_leak *l)
{
	size_t len = 16u << 20, i, bad = 0;
	unsigned char *b = malloc(len);
	struct px_leak_carry st = { 0 };
	struct px_leak_hit hit;
	struct timespec t0, t1;
	double s;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)rnd(256);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < len; i += 16384)
		if (px_leak_feed(l, ~0ULL, &st, b + i, 16384, &hit) != 0)
			bad++;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	tap_cmp_int(bad, "==", 0, "16 MB of random bytes in 16 KB pieces: no false match");
	tap_diag("random bytes: %.0f MB/s", (double)len / s / 1e6);
	/* Text: base64 and hex of random bytes, the likeliest to look alike. */
	for (i = 0; i < len / 2; i++)
		b[i] = (unsigned char)"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[rnd(64)];
	for (; i < len; i++)
		b[i] = (unsigned char)"0123456789abcdef%"[rnd(17)];
	bad = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < len; i += 16384)
		if (px_leak_feed(l, ~0ULL, &st, b + i, 16384, &hit) != 0)
			bad++;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	tap_cmp_int(bad, "==", 0, "16 MB of random base64, hex and escapes: no false match");
	tap_diag("base64, hex and escapes: %.0f MB/s", (double)len / s / 1e6);
	px_leak_carry_free(&st);
	free(b);
}

int
main(void)
{
	struct px_leak *l;

	srandom(42);
	l = make_leak();
	if (!tap_ok(l != NULL, "the needles are taken"))
		return tap_done();
	test_forms(l);
	test_split(l);
	test_pieces(l);
	test_mask_and_limits(l);
	test_host(l);
	test_bulk(l);
	px_leak_free(l);
	return tap_done();
}
