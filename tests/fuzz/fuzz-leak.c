/*
 * tests/fuzz/fuzz-leak.c: the leak scan (proxy/proto/leak.h) over arbitrary
 * bytes.  The input is "NEEDLE\nCUTS\nBYTES": NEEDLE is looked for, each byte
 * of CUTS is the length of the next piece BYTES is fed in.  Invariants: a
 * needle in BYTES found by one scan of the whole is found by the carry and
 * by the hold-back when fed in those pieces; never more is held than the
 * span less one byte, and nothing when the piece is the last; BYTES as a
 * host name and the needle itself (whole) never crash nor miss it.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/leak.h"

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *needle, *cuts;
	size_t nlen, ncuts, len, at = 0, k = 0, held = 0, span;
	struct px_leak_carry st = { 0 };
	struct px_leak_hit hit;
	struct px_leak *l;
	unsigned char *win;
	int whole, fed = 0, streamed = 0, r;

	if ((needle = field(&p, end, &nlen)) == NULL || (cuts = field(&p, end, &ncuts)) == NULL)
		return 0;
	len = (size_t)(end - p);
	if ((l = px_leak_new()) == NULL)
		return 0;
	if (px_leak_add(l, needle, nlen) != 0) {
		if (nlen >= PX_LEAK_MIN && nlen <= PX_LEAK_MAX)
			abort();
		px_leak_free(l);
		return 0;
	}
	span = px_leak_span(l);
	if (px_leak_find(l, 1, needle, nlen, &hit) != 1 || hit.needle != 0)
		abort();
	whole = px_leak_find(l, 1, p, len, &hit);
	(void)px_leak_host(l, 1, (const char *)p, len, &hit);
	win = malloc(len + 1);
	while (at < len) {
		size_t n = ncuts > 0 ? cuts[k++ % ncuts] : 0, go, wl;
		int found;

		if (n == 0)
			n = 4096;
		if (n > len - at)
			n = len - at;
		if (!fed && (r = px_leak_feed(l, 1, &st, p + at, n, &hit)) == 1)
			fed = 1;
		if (!streamed) {
			memcpy(win + held, p + at, n);
			wl = held + n;
			go = px_leak_stream(l, 1, win, wl, at + n == len, &hit, &found);
			if (found == 1)
				streamed = 1;
			else if (wl - go >= span || (at + n == len && go != wl))
				abort();
			held = wl - go;
			memmove(win, win + go, held);
		}
		at += n;
	}
	if (whole == 1 && (!fed || !streamed))
		abort();
	free(win);
	px_leak_carry_free(&st);
	px_leak_free(l);
	return 0;
}
