/*
 * tests/unit/test-scrub.c: the reflection scan (proxy/proto/scrub.h).  A stream
 * cut into random pieces and scanned as the relays scan it (the bytes held
 * back wait in front of the next piece) must come out exactly as one scan
 * of the whole stream: every occurrence overwritten, nothing else changed,
 * never more held than the longest string less one.  The same for the
 * payload of WebSocket frames, with frame headers between the bytes.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/scrub.h"
#include "tests/unit/tap.h"

static const char *needles[] = {
	"sk-ant-api03-Zq8xY2wVb7N1kLm0PqRsTuVw",	/* a value */
	"eC1hY2Nlc3MtdG9rZW46Z2hwX1NlY3JldA==",		/* a Basic credential */
	"abcabcab",					/* periodic: overlaps itself */
	"p%2Bq%2Fr%3Ds%26t",				/* a query's form */
};
#define NNEEDLES (sizeof(needles) / sizeof(needles[0]))

static unsigned
rnd(unsigned n)
{
	return (unsigned)random() % n;
}

static struct px_scrub *
make_scrub(void)
{
	struct px_scrub *s = px_scrub_new();
	size_t i;

	for (i = 0; i < NNEEDLES; i++)
		px_scrub_add(s, "SECRET", needles[i], strlen(needles[i]));
	return s;
}

/* A stream of LEN bytes: filler from a small alphabet, needles, their
 * prefixes and suffixes, at random. */
static void
make_stream(unsigned char *buf, size_t len)
{
	size_t at = 0;

	while (at < len) {
		const char *n = needles[rnd(NNEEDLES)];
		size_t nl = strlen(n), k = 0;

		switch (rnd(4)) {
		case 0:
			k = nl;
			break;
		case 1:
			k = 1 + rnd((unsigned)nl - 1);
			break;
		case 2:
			k = 1 + rnd((unsigned)nl - 1);
			n += nl - k;
			break;
		default:
			k = 0;
			break;
		}
		if (k == 0) {
			buf[at++] = "abc-=x"[rnd(6)];
			continue;
		}
		if (k > len - at)
			k = len - at;
		memcpy(buf + at, n, k);
		at += k;
	}
}

static int
holds_needle(const unsigned char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < NNEEDLES; i++)
		if (memmem(buf, len, needles[i], strlen(needles[i])) != NULL)
			return 1;
	return 0;
}

static void
test_whole(struct px_scrub *s)
{
	char b1[] = "x sk-ant-api03-Zq8xY2wVb7N1kLm0PqRsTuVw y";
	char b2[] = "abcabcabcab";
	char b3[] = "nothing here";
	const char *name = NULL;
	struct px_scrub *t = px_scrub_new();
	size_t n;
	char want[sizeof(b1)];



	memset(want, '*', sizeof(want));
	memcpy(want, "x ", 2);
	memcpy(want + sizeof(want) - 3, " y", 3);
	n = px_scrub_mask(s, (unsigned char *)b1, strlen(b1), &name);
	tap_ok(n == 1 && strcmp(b1, want) == 0 &&
	    name != NULL && strcmp(name, "SECRET") == 0, "a value is overwritten byte for byte, named");
	n = px_scrub_mask(s, (unsigned char *)b2, strlen(b2), NULL);
	tap_ok(n == 2 && strcmp(b2, "***********") == 0, "overlapping occurrences are overwritten whole");
	n = px_scrub_mask(s, (unsigned char *)b3, strlen(b3), NULL);
	tap_ok(n == 0 && strcmp(b3, "nothing here") == 0, "text without one is left alone");
	px_scrub_add(t, "S", "short", 5);
	px_scrub_add(t, "S", "longer-one", 10);
	px_scrub_add(t, "S", "longer-one", 10);
	tap_cmp_int(px_scrub_count(t), "==", 1, "a string under PX_SCRUB_MIN and a second copy are left out");
	px_scrub_free(t);
}

static void
test_hold(struct px_scrub *s)
{
	unsigned char b[] = "data sk-ant-api";
	unsigned char c[] = "data sk-ant-apX";
	struct px_scrub_state st = { 0 };
	size_t hold, m;

	hold = sizeof(b) - 1 - px_scrub_stream(s, &st, b, sizeof(b) - 1, 0, &m, NULL);
	tap_cmp_int(hold, "==", 10, "the start of a value at the end is held (%zu)", hold);
	hold = sizeof(c) - 1 - px_scrub_stream(s, &st, c, sizeof(c) - 1, 0, &m, NULL);
	tap_cmp_int(hold, "==", 0, "what cannot start one is not held (%zu)", hold);
}

/* The stream in random pieces, as forward.c and h2.c scan a body. */
static void
test_stream(struct px_scrub *s)
{
	size_t round, longest = 0, i;
	int same = 1, clean = 1, bounded = 1;

	for (i = 0; i < NNEEDLES; i++)
		if (strlen(needles[i]) > longest)
			longest = strlen(needles[i]);
	for (round = 0; round < 2000; round++) {
		size_t len = 1 + rnd(3000), at = 0, held = 0, outlen = 0;
		struct px_scrub_state st = { 0 };
		unsigned char *in = malloc(len), *model = malloc(len), *win = malloc(len), *out = malloc(len);

		make_stream(in, len);
		memcpy(model, in, len);
		px_scrub_mask(s, model, len, NULL);
		while (at < len) {
			size_t piece = 1 + rnd(rnd(2) ? 40 : 700), hold, wl, m;
			int last;

			if (piece > len - at)
				piece = len - at;
			memcpy(win + held, in + at, piece);
			at += piece;
			wl = held + piece;
			last = at == len;
			hold = wl - px_scrub_stream(s, &st, win, wl, last, &m, NULL);
			if (hold >= longest)
				bounded = 0;
			memcpy(out + outlen, win, wl - hold);
			outlen += wl - hold;
			memmove(win, win + wl - hold, hold);
			held = hold;
		}
		if (outlen != len || memcmp(out, model, len) != 0)
			same = 0;
		if (holds_needle(out, outlen))
			clean = 0;
		free(in);
		free(model);
		free(win);
		free(out);
	}
	tap_ok(same, "2000 streams in random pieces come out as one scan of the whole");
	tap_ok(clean, "no stream carries a whole string out");
	tap_ok(bounded, "never more is held than the longest string less one");
}

/* Frame PAYLOAD[0..LEN) as server frames of random sizes into OUT (big
 * enough), a ping now and then; the payload's places into MAP, where
 * each ping that carries a whole string begins into PINGAT. */
static size_t
frame(const unsigned char *payload, size_t len, unsigned char *out, size_t *map,
    size_t *pingat, size_t *npings)
{
	size_t at = 0, o = 0;

	while (at < len) {
		size_t n = 1 + rnd(rnd(2) ? 30 : 400), k;
		unsigned kind = rnd(3);

		if (n > len - at)
			n = len - at;
		out[o++] = (uint8_t)((at + n == len ? 0x80 : 0) | (at == 0 ? 1 : 0));
		if (kind == 0 && n < 126) {
			out[o++] = (uint8_t)n;
		} else if (kind == 1 || n < 65536) {
			out[o++] = 126;
			out[o++] = (uint8_t)(n >> 8);
			out[o++] = (uint8_t)n;
		} else {
			out[o++] = 127;
			for (k = 0; k < 8; k++)
				out[o++] = (uint8_t)((uint64_t)n >> (56 - 8 * k));
		}
		for (k = 0; k < n; k++) {
			map[at + k] = o;
			out[o++] = payload[at + k];
		}
		at += n;
		if (rnd(8) == 0) {
			/* A ping between two pieces of the message, its
			 * payload scanned on its own (a whole string in it
			 * too). */
			const char *pl = rnd(2) ? "ping" : needles[0];
			size_t pn = strlen(pl);

			out[o++] = 0x89;
			out[o++] = (uint8_t)pn;
			if (pl == needles[0])
				pingat[(*npings)++] = o;
			memcpy(out + o, pl, pn);
			o += pn;
		}
	}
	return o;
}

static void
test_ws(struct px_scrub *s)
{
	size_t round, i;
	int same = 1, clean = 1, frames_kept = 1;

	for (round = 0; round < 1000; round++) {
		size_t len = 1 + rnd(3000), flen, at = 0, held = 0, outlen = 0;
		unsigned char *pay = malloc(len), *model = malloc(len), *framed = malloc(len * 5 + 64),
		    *expect, *win = malloc(len * 5 + 64), *out = malloc(len * 5 + 64);
		size_t *map = malloc(len * sizeof(*map)), *pingat = malloc((len + 1) * sizeof(size_t)),
		    npings = 0;
		struct px_scrub_ws ws = { 0 };

		make_stream(pay, len);
		memcpy(model, pay, len);
		px_scrub_mask(s, model, len, NULL);
		flen = frame(pay, len, framed, map, pingat, &npings);
		expect = malloc(flen);
		memcpy(expect, framed, flen);
		for (i = 0; i < len; i++)
			expect[map[i]] = model[i];
		/* A ping that is a whole string is overwritten whole. */
		for (i = 0; i < npings; i++)
			memset(expect + pingat[i], '*', strlen(needles[0]));
		while (at < flen) {
			size_t piece = 1 + rnd(rnd(2) ? 20 : 900), wl, m;
			long go;
			int last;

			if (piece > flen - at)
				piece = flen - at;
			memcpy(win + held, framed + at, piece);
			at += piece;
			wl = held + piece;
			last = at == flen;
			go = px_scrub_ws(s, &ws, win, wl, last, &m, NULL);
			if (go < 0 || (last && (size_t)go != wl)) {
				same = 0;
				break;
			}
			memcpy(out + outlen, win, (size_t)go);
			outlen += (size_t)go;
			memmove(win, win + go, wl - (size_t)go);
			held = wl - (size_t)go;
		}
		if (outlen != flen || memcmp(out, expect, flen) != 0)
			same = 0;
		/* The headers are the ones sent: only payload bytes change. */
		for (i = 0; i < flen && outlen == flen; i++)
			if (out[i] != framed[i] && out[i] != '*')
				frames_kept = 0;
		{
			unsigned char *p2 = malloc(len);

			for (i = 0; i < len && outlen == flen; i++)
				p2[i] = out[map[i]];
			if (outlen == flen && holds_needle(p2, len))
				clean = 0;
			free(p2);
		}
		free(pay);
		free(model);
		free(framed);
		free(expect);
		free(win);
		free(out);
		free(map);
		free(pingat);
	}
	tap_ok(same, "1000 frame streams in random pieces: payload as one scan of the whole");
	tap_ok(clean, "no payload carries a whole string out, across frames");
	tap_ok(frames_kept, "frame headers pass unchanged");
}

static void
test_ws_refused(struct px_scrub *s)
{
	unsigned char masked[] = { 0x81, 0x82, 1, 2, 3, 4, 'a', 'b' };
	unsigned char rsv[] = { 0xc1, 0x02, 'a', 'b' };
	unsigned char ok[] = { 0x81, 0x02, 'x', 'y' };
	struct px_scrub_ws ws = { 0 };
	size_t m;

	tap_ok(px_scrub_ws(s, &ws, masked, sizeof(masked), 0, &m, NULL) == -1,
	    "a frame the server masked is refused");
	ws.left = 0;
	tap_ok(px_scrub_ws(s, &ws, rsv, sizeof(rsv), 0, &m, NULL) == -1,
	    "a compressed frame (RSV1) is refused");
	ws.left = 0;
	tap_ok(px_scrub_ws(s, &ws, ok, sizeof(ok), 0, &m, NULL) == 4 && ws.left == 0,
	    "a plain frame passes whole");
	ws.left = 0;
	tap_ok(px_scrub_ws(s, &ws, ok, 1, 0, &m, NULL) == 0, "half a header waits");
}

int
main(void)
{
	struct px_scrub *s = make_scrub();

	srandom(4242);
	test_whole(s);
	test_hold(s);
	test_stream(s);
	test_ws(s);
	test_ws_refused(s);
	px_scrub_free(s);
	return tap_done();
}
