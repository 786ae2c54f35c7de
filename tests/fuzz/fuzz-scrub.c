/*
 * tests/fuzz/fuzz-scrub.c: the reflection scan (proxy/proto/scrub.h) over
 * arbitrary responses.  The input is "STRING\nCUTS\nBYTES": STRING is
 * looked for, each byte of CUTS is the length of the next piece BYTES is
 * fed in.  Invariants: a stream scanned in those pieces, held bytes in
 * front of the next piece, comes out the same length and exactly as one
 * scan of the whole, with no whole STRING in it; never more is held than
 * the string less one byte.  The same BYTES read as a server's WebSocket
 * frames: the walk never passes the bytes given, holds nothing at the end,
 * changes no byte but to '*', and no data frame's payload joined across
 * frames holds the string.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/scrub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *
field(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));

	if (nl == NULL)
		return NULL;
	*len = (size_t)(nl - s);
	*p = nl + 1;
	return s;
}

static size_t
piece(const uint8_t *cuts, size_t ncuts, size_t *k)
{
	size_t n = ncuts > 0 ? cuts[(*k)++ % ncuts] : 0;

	return n == 0 ? 4096 : n;
}

static void
stream(const struct px_scrub *s, const uint8_t *str, size_t slen, const uint8_t *cuts,
    size_t ncuts, const uint8_t *in, size_t len)
{
	unsigned char *model = malloc(len + 1), *win = malloc(len + 1), *out = malloc(len + 1);
	size_t at = 0, held = 0, outlen = 0, k = 0;
	struct px_scrub_state st = { 0 };

	memcpy(model, in, len);
	px_scrub_mask(s, model, len, NULL);
	while (at < len) {
		size_t n = piece(cuts, ncuts, &k), hold, wl, m;
		int last;

		if (n > len - at)
			n = len - at;
		memcpy(win + held, in + at, n);
		at += n;
		wl = held + n;
		last = at == len;
		hold = wl - px_scrub_stream(s, &st, win, wl, last, &m, NULL);
		if (hold > wl || (hold > 0 && hold >= slen))
			abort();
		memcpy(out + outlen, win, wl - hold);
		outlen += wl - hold;
		memmove(win, win + wl - hold, hold);
		held = hold;
	}
	if (outlen != len || memcmp(out, model, len) != 0)
		abort();
	if (len >= slen && memmem(out, len, str, slen) != NULL)
		abort();
	free(model);
	free(win);
	free(out);
}

static void
frames(const struct px_scrub *s, const uint8_t *str, size_t slen, const uint8_t *cuts,
    size_t ncuts, const uint8_t *in, size_t len)
{
	unsigned char *win = malloc(len + 1), *out = malloc(len + 1);
	struct px_scrub_ws ws = { 0 };
	size_t at = 0, held = 0, outlen = 0, k = 0, i;

	while (at < len) {
		size_t n = piece(cuts, ncuts, &k), wl, m;
		long go;

		if (n > len - at)
			n = len - at;
		memcpy(win + held, in + at, n);
		at += n;
		wl = held + n;
		go = px_scrub_ws(s, &ws, win, wl, at == len, &m, NULL);
		if (go < 0)
			goto done;	/* masked or compressed: the relay closes */
		if ((size_t)go > wl || (at == len && (size_t)go != wl))
			abort();
		memcpy(out + outlen, win, (size_t)go);
		outlen += (size_t)go;
		memmove(win, win + go, wl - (size_t)go);
		held = wl - (size_t)go;
	}
	if (outlen != len)
		abort();
	for (i = 0; i < len; i++)
		if (out[i] != in[i] && out[i] != '*')
			abort();
	{
		/* Every data frame's payload, joined: no whole string. */
		unsigned char *pay = malloc(len + 1);
		size_t p = 0, pl = 0;

		while (p + 2 <= len) {
			uint64_t n = out[p + 1] & 0x7f;
			size_t h = 2, j;
			int ctl = (out[p] & 0x08) != 0;

			if (n == 126)
				h = 4;
			else if (n == 127)
				h = 10;
			if (p + h > len)
				break;
			if (h > 2)
				for (n = 0, j = 2; j < h; j++)
					n = n << 8 | out[p + j];
			p += h;
			if (n > len - p)
				n = len - p;
			if (!ctl) {
				memcpy(pay + pl, out + p, (size_t)n);
				pl += (size_t)n;
			}
			p += (size_t)n;
		}
		if (pl >= slen && memmem(pay, pl, str, slen) != NULL)
			abort();
		free(pay);
	}
done:
	free(win);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *str, *cuts;
	size_t slen, ncuts;
	struct px_scrub *s;

	if ((str = field(&p, end, &slen)) == NULL || (cuts = field(&p, end, &ncuts)) == NULL)
		return 0;
	if (slen < PX_SCRUB_MIN || (s = px_scrub_new()) == NULL)
		return 0;
	if (px_scrub_add(s, "S", str, slen) == 0 && px_scrub_count(s) == 1) {
		stream(s, str, slen, cuts, ncuts, p, (size_t)(end - p));
		frames(s, str, slen, cuts, ncuts, p, (size_t)(end - p));
	}
	px_scrub_free(s);
	return 0;
}
