/*
 * proxy/proto/bodyph.h: the session's placeholders replaced by their
 * values where an API carries its key outside the headers: the URL path,
 * a form or JSON request body, the text frames a WebSocket client sends.
 * The proxy does it only for a host a secret is bound to with the
 * "replace" method (conf/inject.h); the caller decides that.
 *
 * Placeholders are found exactly, byte for byte, never by a pattern: a
 * set holds each placeholder with the value already encoded for where it
 * goes (px_bph_encode()).  A stream is rewritten piece by piece: the
 * bytes at the end of a piece that could begin a placeholder (at most the
 * longest less one byte) are held until the next piece or the end.
 *
 * A pure codec: no I/O, no connection.  Its output holds values: the
 * caller wipes it (px_bph_buf_wipe()) once it is passed on.
 */
#ifndef POSTERN_PROXY_BODYPH_H
#define POSTERN_PROXY_BODYPH_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/proto/http.h"

/* How a value is written where it goes. */
enum px_bph_enc {
	PX_BPH_RAW = 0, /* as it is: WebSocket text */
	PX_BPH_PATH,    /* a path segment: pchar kept, the rest %XX (RFC 3986 §3.3) */
	PX_BPH_FORM,    /* a form field: all but unreserved %XX */
	PX_BPH_JSON,    /* inside a JSON string: '"', '\\' and controls escaped */
};

/* The media types whose bodies are rewritten. */
enum px_bph_media {
	PX_BPH_MEDIA_NONE = 0,
	PX_BPH_MEDIA_FORM,      /* application/x-www-form-urlencoded */
	PX_BPH_MEDIA_JSON,      /* application/json, application/ANY+json */
};

/* Placeholders one set holds. */
#define PX_BPH_MAX 16
/* Longest placeholder a set takes, in bytes. */
#define PX_BPH_PH_MAX 256

/* A growing output buffer.  Zero it to start; px_bph_buf_wipe() wipes
 * and frees what it holds. */
struct px_bph_buf {
	unsigned char *p;
	size_t len, cap;
};
void px_bph_buf_wipe(struct px_bph_buf *b);
/* Append N bytes at P.  Returns 0 or -ENOMEM. */
int px_bph_buf_add(struct px_bph_buf *b, const void *p, size_t n);

/* A set of placeholders and what replaces each.  Zero it to start;
 * px_bph_clear() wipes and frees the replacements. */
struct px_bph {
	size_t n;
	size_t hold;    /* the longest placeholder less one byte */
	struct {
		unsigned char ph[PX_BPH_PH_MAX];
		size_t phlen;
		unsigned char *rep;
		size_t replen;
	} v[PX_BPH_MAX];
};
void px_bph_clear(struct px_bph *b);

/*
 * Write the value V (VLEN bytes) as ENC wants it into OUT (SIZE bytes,
 * NUL-terminated).  Returns the length, or -ENOSPC (OUT is then wiped).
 * 3 * VLEN + 1 bytes always suffice; JSON needs at most 6 * VLEN + 1.
 */
long px_bph_encode(enum px_bph_enc enc, const char *v, size_t vlen, char *out, size_t size);

/*
 * Add to B the placeholder PH (PHLEN bytes, 1 to PX_BPH_PH_MAX) replaced
 * by the value V (VLEN bytes) written as ENC.  Returns 0, -EINVAL (bad
 * length, or B full), or -ENOMEM.
 */
int px_bph_add(struct px_bph *b, const char *ph, size_t phlen, const char *v, size_t vlen,
    enum px_bph_enc enc);

/* Where a stream's rewrite stands between two pieces.  Zero it at the
 * stream's start. */
struct px_bph_stream {
	unsigned char held[PX_BPH_PH_MAX];
	size_t nheld;
	size_t replaced;        /* placeholders replaced so far */
};

/*
 * Rewrite IN[0..LEN), the next piece of a stream, into OUT: every whole
 * placeholder of B replaced.  The bytes held from the last piece go first;
 * the tail that could begin a placeholder is held again, unless FINAL (the
 * stream's end).  Returns 0 or -ENOMEM.
 */
int px_bph_stream(const struct px_bph *b, struct px_bph_stream *st, const unsigned char *in,
    size_t len, int final, struct px_bph_buf *out);

/*
 * Rewrite the request target T (LEN bytes): the placeholders of B in its
 * path (up to '?') replaced, the query as it is.  Returns how many were
 * replaced, or -ENOMEM.
 */
long px_bph_path(const struct px_bph *b, const char *t, size_t len, struct px_bph_buf *out);

/* The media type of a Content-Type value V (LEN bytes). */
enum px_bph_media px_bph_media(const char *v, size_t len);

/*
 * Copy the request head H (LEN bytes, as the proxy built it) into OUT with
 * its Content-Length header's value set to CL.  Returns 0, -EINVAL when H
 * has no Content-Length, or -ENOMEM.
 */
int px_bph_set_length(const char *h, size_t len, uint64_t cl, struct px_bph_buf *out);

/*
 * The client-to-server half of a WebSocket connection (RFC 6455 §5), its
 * text messages rewritten: each text frame's payload is gathered whole
 * (at most MAX bytes), unmasked, rewritten as one stream per message,
 * masked again with a fresh key and sent behind a header with its new
 * length.  Binary and control frames pass as they are.  Zero it, then set
 * MAX; px_bph_ws_clear() wipes and frees it.
 */
struct px_bph_ws {
	size_t max;
	unsigned char hdr[14];
	size_t hlen, hneed;
	int in_frame;           /* the header is whole: payload follows */
	int rewrite;            /* this frame's payload is rewritten */
	int fin;
	unsigned opcode;
	uint64_t left;          /* payload bytes still to come */
	unsigned char key[4];
	uint64_t off;           /* payload bytes seen, for the mask */
	int in_msg;             /* a fragmented message goes on */
	int msg_text;           /* ... and it is text */
	struct px_bph_buf frame;
	struct px_bph_stream st;
};
void px_bph_ws_clear(struct px_bph_ws *ws);

/*
 * Rewrite the LEN bytes at IN, the next piece of the client's frames, into
 * OUT (whole frames, or the pieces of a frame that passes as it is).  RND
 * fills a fresh masking key.  Returns 0; -EPROTO with *WHY for frames it
 * will not pass (unmasked, with RSV bits (an extension, compression), a
 * bad opcode, length or fragment order); -EMSGSIZE with *WHY for a text
 * frame over MAX; -ENOMEM.
 */
int px_bph_ws(const struct px_bph *b, struct px_bph_ws *ws, const unsigned char *in, size_t len,
    void (*rnd)(unsigned char key[4]), struct px_bph_buf *out, const char **why);

/*
 * One request's rewrite, as the glue (proxy/flow/replace.c) keeps it in a
 * terminated tunnel: the set, and where the body or the frames stand.
 * px_bph_req_free() wipes and frees it, its scratch buffer too (NULL is a
 * no-op).
 */
enum px_bph_mode {
	PX_BPH_LENGTH = 1,      /* a Content-Length body: head and body held whole */
	PX_BPH_CHUNKED,         /* a chunked body: rewritten chunk by chunk */
	PX_BPH_WEBSOCKET,       /* the client's frames after a 101 */
};
struct px_bph_req {
	enum px_bph_mode mode;
	struct px_bph set;
	struct px_bph_buf head;         /* LENGTH: the head, sent with the body */
	struct px_bph_buf body;         /* LENGTH: the body so far */
	struct px_chunked ch;           /* CHUNKED: the decoder */
	struct px_bph_stream st;        /* CHUNKED */
	struct px_bph_ws ws;            /* WEBSOCKET */
	size_t counted;                 /* replacements counted in the stats */
	const char *secret;             /* the first secret of the set (the snapshot's) */
	struct evbuffer *scratch;       /* the glue's: decoded chunks, rewritten frames */
};
void px_bph_req_free(struct px_bph_req *r);

#endif
