/*
 * proxy/proto/scrub.c: the reflection scan (scrub.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "conf/secmem.h"
#include "proxy/proto/scrub.h"

/* Strings per scrub: a session's secrets bound to one host, each in its
 * forms, before and after reloads. */
#define SCRUB_MAX 64

struct needle {
	unsigned char *str;	/* secure heap */
	size_t len;
	char name[72];		/* the secret's name */
};

struct px_scrub {
	struct needle n[SCRUB_MAX];
	size_t count;
};

struct px_scrub *
px_scrub_new(void)
{
	return calloc(1, sizeof(struct px_scrub));
}

void
px_scrub_free(struct px_scrub *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->count; i++)
		OPENSSL_secure_clear_free(s->n[i].str, s->n[i].len);
	free(s);
}

int
px_scrub_add(struct px_scrub *s, const char *name, const void *str, size_t len)
{
	struct needle *n;
	size_t i;

	if (len < PX_SCRUB_MIN)
		return 0;
	for (i = 0; i < s->count; i++)
		if (s->n[i].len == len && memcmp(s->n[i].str, str, len) == 0)
			return 0;
	if (s->count == SCRUB_MAX)
		return -ENOMEM;
	n = &s->n[s->count];
	if ((n->str = cf_secmem_alloc(len)) == NULL)
		return -ENOMEM;
	memcpy(n->str, str, len);
	n->len = len;
	snprintf(n->name, sizeof(n->name), "%s", name);
	s->count++;
	return 0;
}

size_t
px_scrub_count(const struct px_scrub *s)
{
	return s != NULL ? s->count : 0;
}

/* The longest end of BUF[0..LEN) that N begins with (shorter than N). */
static size_t
partial(const struct needle *n, const unsigned char *buf, size_t len)
{
	size_t from = len >= n->len ? len - n->len + 1 : 0;
	const unsigned char *p = buf + from, *end = buf + len;

	while ((p = memchr(p, n->str[0], (size_t)(end - p))) != NULL) {
		if (memcmp(p, n->str, (size_t)(end - p)) == 0)
			return (size_t)(end - p);
		p++;
	}
	return 0;
}

/*
 * Overwrite every occurrence of N in BUF[0..LEN) that begins before CUT,
 * as far as CUT; returns how many.  *END (when not NULL) grows to the end
 * of the last one, which may lie past CUT.
 */
static size_t
mask_one(const struct needle *n, unsigned char *buf, size_t len, size_t cut, size_t *end)
{
	unsigned char *p = buf, *stop = buf + len, *from = NULL, *to = NULL;
	size_t found = 0;

	/* Every occurrence is found before any is overwritten, so that
	 * overlapping ones are overwritten whole. */
	while (n->len <= (size_t)(stop - p) &&
	    (p = memmem(p, (size_t)(stop - p), n->str, n->len)) != NULL && (size_t)(p - buf) < cut) {
		if (from != NULL && p > to) {
			memset(from, '*', (size_t)(to - from));
			from = NULL;
		}
		if (from == NULL)
			from = p;
		to = p + n->len;
		found++;
		p++;
	}
	if (from != NULL) {
		if (end != NULL && (size_t)(to - buf) > *end)
			*end = (size_t)(to - buf);
		if (to > buf + cut)
			to = buf + cut;
		memset(from, '*', (size_t)(to - from));
	}
	return found;
}

/* Every string's occurrences that begin before CUT; *NAME the first's. */
static size_t
mask_all(const struct px_scrub *s, unsigned char *buf, size_t len, size_t cut, size_t *end,
    const char **name)
{
	size_t i, found = 0;

	for (i = 0; s != NULL && i < s->count; i++) {
		size_t n = mask_one(&s->n[i], buf, len, cut, end);

		if (n > 0 && found == 0 && name != NULL)
			*name = s->n[i].name;
		found += n;
	}
	return found;
}

size_t
px_scrub_mask(const struct px_scrub *s, unsigned char *buf, size_t len, const char **name)
{
	return mask_all(s, buf, len, len, NULL, name);
}

size_t
px_scrub_stream(const struct px_scrub *s, struct px_scrub_state *st, unsigned char *buf,
    size_t len, int final, size_t *masked, const char **name)
{
	size_t i, k, cut = len, end, left = 0;

	if (!final) {
		/* The end that may begin an occurrence waits. */
		for (i = 0; s != NULL && i < s->count; i++)
			if ((k = partial(&s->n[i], buf, len)) > len - cut)
				cut = len - k;
	}
	end = cut;
	*masked = mask_all(s, buf, len, cut, &end, name);
	/* What an earlier piece's occurrence still covers. */
	memset(buf, '*', st->carry < cut ? st->carry : cut);
	if (st->carry > cut && st->carry - cut > left)
		left = st->carry - cut;
	if (end - cut > left)
		left = end - cut;
	st->carry = final ? 0 : left;
	return cut;
}

/* ---- WebSocket frames --------------------------------------------------- */

/* Payload pieces of one scan, their place in BUF. */
#define WS_SEGS 256

struct seg {
	size_t at, len;		/* in BUF */
	uint64_t rest;		/* payload bytes of its frame after this piece */
	int ctl;		/* a control frame's payload: whole, apart */
};

/*
 * Walk the frames of BUF[0..LEN) from WS's state: the payload pieces into
 * SEG (at most WS_SEGS), and *STOP where the walk stopped: LEN, the
 * start of a header not yet whole, or (*FULL set) the end of the last
 * piece that fitted.
 * Returns the number of pieces, or -1 for a frame no scan can read.
 */
static long
ws_walk(const struct px_scrub_ws *ws, const unsigned char *buf, size_t len,
    struct seg *seg, size_t *stop, int *full)
{
	size_t at = 0, nseg = 0;
	uint64_t left = ws->left;
	int ctl = 0;

	*full = 0;

	for (;;) {
		if (left > 0) {
			size_t n = left < (uint64_t)(len - at) ? (size_t)left : len - at;

			if (nseg == WS_SEGS) {
				*full = 1;
				break;
			}
			seg[nseg].at = at;
			seg[nseg].len = n;
			seg[nseg].rest = left - n;
			seg[nseg].ctl = ctl;
			nseg++;
			at += n;
			left -= n;
		}
		if (at == len || left > 0)
			break;
		{
			size_t need = 2, k;
			uint64_t plen;

			if (len - at < 2)
				break;
			/* RFC 6455 §5.1: a server never masks; RSV bits mean
			 * an extension (compression), which hides the bytes. */
			if ((buf[at] & 0x70) != 0 || (buf[at + 1] & 0x80) != 0)
				return -1;
			plen = buf[at + 1] & 0x7f;
			if (plen == 126)
				need += 2;
			else if (plen == 127)
				need += 8;
			if (len - at < need)
				break;
			if (need > 2)
				for (plen = 0, k = 2; k < need; k++)
					plen = plen << 8 | buf[at + k];
			/* A control frame (at most 125 bytes, never cut in
			 * pieces) may come between two pieces of a message:
			 * it is scanned whole, on its own. */
			ctl = (buf[at] & 0x08) != 0;
			if (ctl && (plen > 125 || len - at - need < plen))
				break;
			at += need;
			left = plen;
		}
	}
	*stop = at;
	return (long)nseg;
}

/* One walk of px_scrub_ws(): *FULL when the table's room ended it. */
static long
ws_once(const struct px_scrub *s, struct px_scrub_ws *ws, unsigned char *buf,
    size_t len, int final, size_t *masked, const char **name, int *full)
{
	struct seg seg[WS_SEGS];
	unsigned char *flat;
	size_t stop = 0, total = 0, hold = 0, i, go, pos;
	long nseg = ws_walk(ws, buf, len, seg, &stop, full);

	*masked = 0;
	if (nseg < 0)
		return -1;
	/* At the end, a header cut short carries nothing; pieces past the
	 * table's room are the next walk's. */
	if (*full)
		final = 0;
	else if (final)
		stop = len;
	for (i = 0; i < (size_t)nseg; i++)
		if (seg[i].ctl)
			*masked += px_scrub_mask(s, buf + seg[i].at, seg[i].len, name);
		else
			total += seg[i].len;
	/* The messages' payload as one piece, scanned, and written back. */
	if (total > 0) {
		size_t m = 0;

		if ((flat = malloc(total)) == NULL)
			return -ENOMEM;
		for (pos = 0, i = 0; i < (size_t)nseg; i++)
			if (!seg[i].ctl) {
				memcpy(flat + pos, buf + seg[i].at, seg[i].len);
				pos += seg[i].len;
			}
		hold = total - px_scrub_stream(s, &ws->st, flat, total, final, &m, name);
		for (pos = 0, i = 0; i < (size_t)nseg; i++)
				if (!seg[i].ctl) {
					memcpy(buf + seg[i].at, flat + pos, seg[i].len);
					pos += seg[i].len;
				}
		*masked += m;
		OPENSSL_cleanse(flat, total);
		free(flat);
	}
	/* What may go: up to the first byte held, else to where the walk
	 * stopped; the state moves to that point. */
	go = stop;
	ws->left = 0;
	for (pos = 0, i = 0; i < (size_t)nseg; pos += seg[i].ctl ? 0 : seg[i].len, i++) {
		if (seg[i].ctl)
			continue;
		if (hold > 0 && pos + seg[i].len > total - hold) {
			size_t in = total - hold - pos;

			go = seg[i].at + in;
			ws->left = seg[i].len - in + seg[i].rest;
			return (long)go;
		}
		if (seg[i].at + seg[i].len == stop)
			ws->left = seg[i].rest;
	}
	if (final)
		ws->left = 0;
	return (long)go;
}

long
px_scrub_ws(const struct px_scrub *s, struct px_scrub_ws *ws, unsigned char *buf,
    size_t len, int final, size_t *masked, const char **name)
{
	size_t done = 0, m;
	long r;
	int full;

	*masked = 0;
	do {
		if ((r = ws_once(s, ws, buf + done, len - done, final, &m, name, &full)) < 0)
			return r == -ENOMEM ? -ENOMEM : -1;
		*masked += m;
		done += (size_t)r;
	} while (full && r > 0 && done < len);
	return (long)done;
}
