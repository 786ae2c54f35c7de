/*
 * proxy/proto/bodyph.c: placeholders replaced by their values in a URL
 * path, a form or JSON body and WebSocket text frames (see bodyph.h).
 */
#include "proxy/proto/bodyph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <openssl/crypto.h>

void
px_bph_buf_wipe(struct px_bph_buf *b)
{
	if (b->p != NULL) {
		OPENSSL_cleanse(b->p, b->cap);
		free(b->p);
	}
	memset(b, 0, sizeof(*b));
}

int
px_bph_buf_add(struct px_bph_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (b->len + n < b->len)
		return -ENOMEM;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *np;

		while (cap < b->len + n) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		/* Not realloc(3): the old block may hold a value, and is
		 * wiped before it goes. */
		if ((np = malloc(cap)) == NULL)
			return -ENOMEM;
		if (b->len > 0)
			memcpy(np, b->p, b->len);
		if (b->p != NULL) {
			OPENSSL_cleanse(b->p, b->cap);
			free(b->p);
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

void
px_bph_clear(struct px_bph *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		OPENSSL_cleanse(b->v[i].rep, b->v[i].replen);
		free(b->v[i].rep);
	}
	memset(b, 0, sizeof(*b));
}

/* RFC 3986 §2.3 unreserved. */
static int
unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 §3.3 pchar, less pct-encoded: what a path segment holds as it is. */
static int
pchar(unsigned char c)
{
	return unreserved(c) || (c != '\0' && strchr("!$&'()*+,;=:@", c) != NULL);
}

long
px_bph_encode(enum px_bph_enc enc, const char *v, size_t vlen, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i, o = 0;

	for (i = 0; i < vlen; i++) {
		unsigned char c = (unsigned char)v[i];
		char e[7];
		size_t en;

		switch (enc) {
		case PX_BPH_PATH:
		case PX_BPH_FORM:
			if (enc == PX_BPH_PATH ? pchar(c) : unreserved(c)) {
				e[0] = (char)c;
				en = 1;
			} else {
				e[0] = '%';
				e[1] = hex[c >> 4];
				e[2] = hex[c & 15];
				en = 3;
			}
			break;
		case PX_BPH_JSON:
			/* RFC 8259 §7: '"', '\\' and U+0000..U+001F. */
			if (c == '"' || c == '\\') {
				e[0] = '\\';
				e[1] = (char)c;
				en = 2;
			} else if (c < 0x20) {
				memcpy(e, "\\u00", 4);
				e[4] = hex[c >> 4];
				e[5] = hex[c & 15];
				en = 6;
			} else {
				e[0] = (char)c;
				en = 1;
			}
			break;
		default:
			e[0] = (char)c;
			en = 1;
			break;
		}
		if (o + en + 1 > size) {
			OPENSSL_cleanse(out, size);
			return -ENOSPC;
		}
		memcpy(out + o, e, en);
		o += en;
	}
	if (o + 1 > size) {
		OPENSSL_cleanse(out, size);
		return -ENOSPC;
	}
	out[o] = '\0';
	return (long)o;
}

int
px_bph_add(struct px_bph *b, const char *ph, size_t phlen, const char *v, size_t vlen,
    enum px_bph_enc enc)
{
	size_t size = 6 * vlen + 1;
	char *rep;
	long r;

	if (b->n >= PX_BPH_MAX || phlen == 0 || phlen > PX_BPH_PH_MAX || vlen > SIZE_MAX / 8)
		return -EINVAL;
	if ((rep = malloc(size)) == NULL)
		return -ENOMEM;
	if ((r = px_bph_encode(enc, v, vlen, rep, size)) < 0) {
		free(rep);
		return -EINVAL;
	}
	memcpy(b->v[b->n].ph, ph, phlen);
	b->v[b->n].phlen = phlen;
	b->v[b->n].rep = (unsigned char *)rep;
	b->v[b->n].replen = (size_t)r;
	if (phlen - 1 > b->hold)
		b->hold = phlen - 1;
	b->n++;
	return 0;
}

/*
 * At P (AVAIL bytes to the end of what is known): the index of the
 * placeholder that starts there whole, or -1; *PARTIAL is set when one
 * could start there but runs past AVAIL.
 */
static long
match_at(const struct px_bph *b, const unsigned char *p, size_t avail, int *partial)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		size_t pl = b->v[i].phlen;

		if (p[0] != b->v[i].ph[0])
			continue;
		if (pl <= avail) {
			if (memcmp(p, b->v[i].ph, pl) == 0)
				return (long)i;
		} else if (memcmp(p, b->v[i].ph, avail) == 0)
			*partial = 1;
	}
	return -1;
}

/* Rewrite D[0..N) into OUT; returns how many bytes of D were decided (the
 * rest could begin a placeholder: none when FINAL), or -ENOMEM. */
static long
rewrite(const struct px_bph *b, const unsigned char *d, size_t n, int final,
    struct px_bph_buf *out, size_t *replaced)
{
	size_t i = 0, run = 0;

	if (n == 0)
		return 0;
	while (i < n) {
		int partial = 0;
		long m = match_at(b, d + i, n - i, &partial);

		if (m < 0 && !(partial && !final)) {
			i++;
			run++;
			continue;
		}
		if (px_bph_buf_add(out, d + i - run, run) != 0)
			return -ENOMEM;
		run = 0;
		if (m < 0)
			return (long)i; /* a partial one: held from here */
		if (px_bph_buf_add(out, b->v[m].rep, b->v[m].replen) != 0)
			return -ENOMEM;
		(*replaced)++;
		i += b->v[m].phlen;
	}
	if (px_bph_buf_add(out, d + i - run, run) != 0)
		return -ENOMEM;
	return (long)n;
}

int
px_bph_stream(const struct px_bph *b, struct px_bph_stream *st, const unsigned char *in,
    size_t len, int final, struct px_bph_buf *out)
{
	const unsigned char *d = in;
	unsigned char *joined = NULL;
	size_t n = len, h;
	long used;

	/* The held bytes go first: joined with the piece in one copy (the
	 * held part is shorter than the longest placeholder). */
	if (st->nheld > 0) {
		if (len > SIZE_MAX - st->nheld || (joined = malloc(st->nheld + len)) == NULL)
			return -ENOMEM;
		memcpy(joined, st->held, st->nheld);
		if (len > 0)
			memcpy(joined + st->nheld, in, len);
		d = joined;
		n = st->nheld + len;
		st->nheld = 0;
	}
	used = rewrite(b, d, n, final, out, &st->replaced);
	if (used >= 0) {
		h = n - (size_t)used;
		if (h > sizeof(st->held))
			used = -ENOMEM; /* cannot be: a partial match is shorter */
		else {
			if (h > 0)
				memcpy(st->held, d + used, h);
			st->nheld = h;
		}
	}
	if (joined != NULL) {
		OPENSSL_cleanse(joined, n);
		free(joined);
	}
	return used < 0 ? -ENOMEM : 0;
}

long
px_bph_path(const struct px_bph *b, const char *t, size_t len, struct px_bph_buf *out)
{
	const char *q = memchr(t, '?', len);
	size_t pl = q != NULL ? (size_t)(q - t) : len;
	struct px_bph_stream st;

	memset(&st, 0, sizeof(st));
	if (px_bph_stream(b, &st, (const unsigned char *)t, pl, 1, out) != 0 ||
	    px_bph_buf_add(out, t + pl, len - pl) != 0)
		return -ENOMEM;
	return (long)st.replaced;
}

enum px_bph_media
px_bph_media(const char *v, size_t len)
{
	size_t i = 0, end;

	while (i < len && (v[i] == ' ' || v[i] == '\t'))
		i++;
	for (end = i; end < len && v[end] != ';' && v[end] != ' ' && v[end] != '\t'; end++)
		;
	len = end - i;
	v += i;
	if (len == 33 && strncasecmp(v, "application/x-www-form-urlencoded", 33) == 0)
		return PX_BPH_MEDIA_FORM;
	if (len == 16 && strncasecmp(v, "application/json", 16) == 0)
		return PX_BPH_MEDIA_JSON;
	/* RFC 6839 §3.1: a structured syntax suffix. */
	if (len > 17 && strncasecmp(v, "application/", 12) == 0 &&
	    strncasecmp(v + len - 5, "+json", 5) == 0 && memchr(v + 12, '/', len - 12) == NULL)
		return PX_BPH_MEDIA_JSON;
	return PX_BPH_MEDIA_NONE;
}

int
px_bph_set_length(const char *h, size_t len, uint64_t cl, struct px_bph_buf *out)
{
	size_t i = 0;
	char num[24];
	int nl;

	/* Line by line from the second: the first is the request line. */
	while (i < len) {
		const char *eol = memchr(h + i, '\n', len - i);
		size_t next = eol != NULL ? (size_t)(eol - h) + 1 : len, v, e;

		if (i > 0 && next - i > 15 && strncasecmp(h + i, "content-length:", 15) == 0) {
			v = i + 15;
			e = next;
			while (e > v && (h[e - 1] == '\n' || h[e - 1] == '\r'))
				e--;
			nl = snprintf(num, sizeof(num), " %llu", (unsigned long long)cl);
			if (px_bph_buf_add(out, h, v) != 0 || px_bph_buf_add(out, num, (size_t)nl) != 0 ||
			    px_bph_buf_add(out, h + e, len - e) != 0)
				return -ENOMEM;
			return 0;
		}
		i = next;
	}
	return -EINVAL;
}

/* ---- WebSocket client frames ------------------------------------------- */

void
px_bph_ws_clear(struct px_bph_ws *ws)
{
	size_t max = ws->max;

	px_bph_buf_wipe(&ws->frame);
	OPENSSL_cleanse(ws, sizeof(*ws));
	ws->max = max;
}

/* Append a frame: FIN, OPCODE, the payload P (N bytes, plain) masked with
 * a fresh key. */
static int
ws_emit(struct px_bph_buf *out, int fin, unsigned opcode, unsigned char *p, size_t n,
    void (*rnd)(unsigned char key[4]))
{
	unsigned char h[14], key[4];
	size_t hl, i;

	h[0] = (unsigned char)((fin ? 0x80 : 0) | (opcode & 0x0f));
	if (n < 126) {
		h[1] = (unsigned char)(0x80 | n);
		hl = 2;
	} else if (n <= 0xffff) {
		h[1] = 0x80 | 126;
		h[2] = (unsigned char)(n >> 8);
		h[3] = (unsigned char)n;
		hl = 4;
	} else {
		h[1] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			h[2 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
		hl = 10;
	}
	rnd(key);
	memcpy(h + hl, key, 4);
	hl += 4;
	for (i = 0; i < n; i++)
		p[i] ^= key[i & 3];
	return px_bph_buf_add(out, h, hl) != 0 || px_bph_buf_add(out, p, n) != 0 ? -ENOMEM : 0;
}

/* The header in WS->hdr is whole: check it and start its payload. */
static int
ws_header(struct px_bph_ws *ws, const char **why)
{
	unsigned char *h = ws->hdr;
	uint64_t len = h[1] & 0x7f;
	size_t i;
	int control;

	if (!(h[1] & 0x80))
		return *why = "an unmasked frame from the client (RFC 6455 §5.1)", -EPROTO;
	if (h[0] & 0x70)
		return *why = "a frame with RSV bits set (an extension, such as compression, "
		    "that the proxy did not negotiate)", -EPROTO;
	ws->fin = (h[0] & 0x80) != 0;
	ws->opcode = h[0] & 0x0f;
	if (len == 126)
		len = (uint64_t)h[2] << 8 | h[3];
	else if (len == 127) {
		if (h[2] & 0x80)
			return *why = "a frame length over 2^63", -EPROTO;
		for (len = 0, i = 0; i < 8; i++)
			len = len << 8 | h[2 + i];
	}
	memcpy(ws->key, h + ws->hlen - 4, 4);
	ws->left = len;
	ws->off = 0;
	control = ws->opcode >= 8;
	if (control) {
		if (ws->opcode > 10)
			return *why = "a reserved opcode", -EPROTO;
		if (!ws->fin || len > 125)
			return *why = "a fragmented or long control frame", -EPROTO;
		ws->rewrite = 0;
	} else if (ws->opcode == 0) {
		if (!ws->in_msg)
			return *why = "a continuation frame outside a message", -EPROTO;
		ws->rewrite = ws->msg_text;
		ws->in_msg = !ws->fin;
	} else if (ws->opcode == 1 || ws->opcode == 2) {
		if (ws->in_msg)
			return *why = "a new message inside a fragmented one", -EPROTO;
		ws->msg_text = ws->opcode == 1;
		ws->rewrite = ws->msg_text;
		ws->in_msg = !ws->fin;
		if (ws->msg_text)
			memset(&ws->st, 0, sizeof(ws->st));
	} else
		return *why = "a reserved opcode", -EPROTO;
	if (ws->rewrite && len > ws->max)
		return *why = "a text frame longer than the bound on what the proxy gathers", -EMSGSIZE;
	ws->in_frame = 1;
	return 0;
}

/* The rewritten frame's payload is whole in WS->frame: rewrite it and send. */
static int
ws_frame_done(const struct px_bph *b, struct px_bph_ws *ws, void (*rnd)(unsigned char key[4]),
    struct px_bph_buf *out)
{
	struct px_bph_buf nb;
	int rc;

	memset(&nb, 0, sizeof(nb));
	/* The message's end flushes what was held; a fragment's tail waits
	 * for the next fragment (control frames may come between). */
	if (px_bph_stream(b, &ws->st, ws->frame.p, ws->frame.len, ws->fin, &nb) != 0) {
		px_bph_buf_wipe(&nb);
		return -ENOMEM;
	}
	rc = ws_emit(out, ws->fin, ws->opcode, nb.p, nb.len, rnd);
	px_bph_buf_wipe(&nb);
	ws->frame.len = 0;
	return rc;
}

int
px_bph_ws(const struct px_bph *b, struct px_bph_ws *ws, const unsigned char *in, size_t len,
    void (*rnd)(unsigned char key[4]), struct px_bph_buf *out, const char **why)
{
	size_t i = 0;
	int rc;

	while (i < len || (ws->in_frame && ws->left == 0)) {
		if (!ws->in_frame) {
			if (ws->hlen < 2) {
				ws->hdr[ws->hlen++] = in[i++];
				if (ws->hlen == 2) {
					unsigned l = ws->hdr[1] & 0x7f;
					ws->hneed = 2 + (l == 126 ? 2 : l == 127 ? 8 : 0) +
					    ((ws->hdr[1] & 0x80) ? 4 : 0);
					if (!(ws->hdr[1] & 0x80))
						return *why = "an unmasked frame from the client "
						    "(RFC 6455 §5.1)", -EPROTO;
				}
				continue;
			}
			ws->hdr[ws->hlen++] = in[i++];
			if (ws->hlen < ws->hneed)
				continue;
			if ((rc = ws_header(ws, why)) != 0)
				return rc;
			if (!ws->rewrite && px_bph_buf_add(out, ws->hdr, ws->hlen) != 0)
				return -ENOMEM;
			ws->hlen = 0;
			continue;
		}
		if (ws->left > 0) {
			size_t n = len - i < ws->left ? len - i : (size_t)ws->left, k;

			if (!ws->rewrite) {
				if (px_bph_buf_add(out, in + i, n) != 0)
					return -ENOMEM;
			} else {
				size_t at = ws->frame.len;
				if (px_bph_buf_add(&ws->frame, in + i, n) != 0)
					return -ENOMEM;
				for (k = 0; k < n; k++)
					ws->frame.p[at + k] ^= ws->key[(ws->off + k) & 3];
			}
			ws->off += n;
			ws->left -= n;
			i += n;
		}
		if (ws->left == 0) {
			if (ws->rewrite && (rc = ws_frame_done(b, ws, rnd, out)) != 0)
				return rc;
			ws->in_frame = 0;
		}
	}
	return 0;
}

void
px_bph_req_free(struct px_bph_req *r)
{
	if (r == NULL)
		return;
	px_bph_clear(&r->set);
	px_bph_buf_wipe(&r->head);
	px_bph_buf_wipe(&r->body);
	px_bph_ws_clear(&r->ws);
	if (r->scratch != NULL)
		evbuffer_free(r->scratch);
	OPENSSL_cleanse(r, sizeof(*r));
	free(r);
}
