/*
 * tests/fuzz/fuzz-bodyph.c: placeholders replaced in streams and WebSocket
 * client frames (proxy/proto/bodyph.h) over arbitrary bytes.  The input is
 * "PLACEHOLDER\nVALUE\nCUTS\nBYTES": each byte of CUTS is the length of
 * the next piece BYTES is fed in.  Invariants: a stream rewritten in those
 * pieces comes out exactly as one rewrite of the whole, never holding more
 * than the placeholder less one byte, and unchanged when it holds none; the path and the media type readers stay in bounds.
 * BYTES read as client frames: every frame out is masked and well formed,
 * and a rewriter that refuses says why.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/bodyph.h"

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
key(unsigned char k[4])
{
	memcpy(k, "\x01\x02\x03\x04", 4);
}

static void
stream(const struct px_bph *b, const uint8_t *ph, size_t phlen, const uint8_t *v, size_t vlen,
    const uint8_t *cuts, size_t ncuts, const uint8_t *in, size_t len)
{
	struct px_bph_stream st;
	struct px_bph_buf one, out;
	size_t at = 0, k = 0;

	memset(&st, 0, sizeof(st));
	memset(&one, 0, sizeof(one));
	memset(&out, 0, sizeof(out));
	if (px_bph_stream(b, &st, in, len, 1, &one) != 0 || st.nheld != 0)
		abort();
	memset(&st, 0, sizeof(st));
	while (at < len) {
		size_t n = piece(cuts, ncuts, &k);

		if (n > len - at)
			n = len - at;
		if (px_bph_stream(b, &st, in + at, n, 0, &out) != 0 || st.nheld >= phlen)
			abort();
		at += n;
	}
	if (px_bph_stream(b, &st, NULL, 0, 1, &out) != 0 || st.nheld != 0)
		abort();
	if (out.len != one.len || (out.len > 0 && memcmp(out.p, one.p, out.len) != 0))
		abort();
	/* No placeholder in: the bytes come out as they went in. */
	if ((len < phlen || memmem(in, len, ph, phlen) == NULL) &&
	    (out.len != len || (len > 0 && memcmp(out.p, in, len) != 0)))
		abort();
	(void)v;
	(void)vlen;
	px_bph_buf_wipe(&one);
	px_bph_buf_wipe(&out);
}

static void
frames(const struct px_bph *b, const uint8_t *cuts, size_t ncuts, const uint8_t *in, size_t len)
{
	struct px_bph_ws ws;
	struct px_bph_buf out;
	const char *why = NULL;
	size_t at = 0, k = 0, p = 0;
	int rc = 0;

	memset(&ws, 0, sizeof(ws));
	memset(&out, 0, sizeof(out));
	ws.max = 1024;
	while (at < len && rc == 0) {
		size_t n = piece(cuts, ncuts, &k);

		if (n > len - at)
			n = len - at;
		rc = px_bph_ws(b, &ws, in + at, n, key, &out, &why);
		at += n;
	}
	if (rc != 0 && rc != -EPROTO && rc != -EMSGSIZE)
		abort();
	if (rc != 0 && why == NULL)
		abort();
	/* What went out: masked frames, each whole but maybe the last of a
	 * frame passed as it is. */
	while (p + 2 <= out.len) {
		uint64_t n = out.p[p + 1] & 0x7f;
		size_t h = 2, j;

		if (!(out.p[p + 1] & 0x80))
			abort();
		if (n == 126)
			h = 4;
		else if (n == 127)
			h = 10;
		if (p + h + 4 > out.len)
			break;
		if (h > 2)
			for (n = 0, j = 2; j < h; j++)
				n = n << 8 | out.p[p + j];
		p += h + 4;
		if (n > out.len - p)
			break;
		p += (size_t)n;
	}
	px_bph_ws_clear(&ws);
	px_bph_buf_wipe(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *ph, *v, *cuts;
	size_t phlen, vlen, ncuts;
	struct px_bph b;
	struct px_bph_buf out;
	enum px_bph_enc enc;

	if ((ph = field(&p, end, &phlen)) == NULL || (v = field(&p, end, &vlen)) == NULL ||
	    (cuts = field(&p, end, &ncuts)) == NULL)
		return 0;
	if (phlen == 0 || phlen > PX_BPH_PH_MAX || vlen > 4096)
		return 0;
	memset(&b, 0, sizeof(b));
	enc = (enum px_bph_enc)(size % 4);
	if (px_bph_add(&b, (const char *)ph, phlen, (const char *)v, vlen, enc) != 0)
		abort();
	stream(&b, ph, phlen, v, vlen, cuts, ncuts, p, (size_t)(end - p));
	frames(&b, cuts, ncuts, p, (size_t)(end - p));
	memset(&out, 0, sizeof(out));
	if (px_bph_path(&b, (const char *)p, (size_t)(end - p), &out) < 0)
		abort();
	px_bph_buf_wipe(&out);
	(void)px_bph_set_length((const char *)p, (size_t)(end - p), 12345, &out);
	px_bph_buf_wipe(&out);
	(void)px_bph_media((const char *)p, (size_t)(end - p));
	px_bph_clear(&b);
	return 0;
}
