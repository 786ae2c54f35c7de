/*
 * proxy/proto/scrub.h: what a response may not carry back to the sandbox.  The
 * proxy puts a secret's value on requests to its bound hosts; a host that
 * reflects the request (an echo endpoint, a debug page, a redirect that
 * keeps the query) would hand the value to the client.  A scrub is the set
 * of byte strings the proxy produced from the session's values (the value,
 * a Basic credential's base64, a query parameter's percent-encoding); the
 * scan overwrites every whole occurrence with '*', byte for byte, so that
 * no length or framing changes.
 *
 * The scan streams: it says how many bytes at the end of a piece could be
 * the start of an occurrence, and the caller keeps those (at most the
 * longest string less one byte) until the next piece or the end.  Nothing
 * else is held.
 *
 * A pure codec: no I/O, no connection.  A scrub holds copies of values: it
 * lives in OpenSSL's secure heap when there is one, and is wiped when freed.
 */
#ifndef POSTERN_PROXY_SCRUB_H
#define POSTERN_PROXY_SCRUB_H

#include <stddef.h>
#include <stdint.h>

/* Shorter strings are not looked for: they would match ordinary text. */
#define PX_SCRUB_MIN 8

struct px_scrub;

struct px_scrub *px_scrub_new(void);
/* Wipe and free S.  NULL is a no-op. */
void px_scrub_free(struct px_scrub *s);

/* Look for the LEN bytes at STR, found under the secret NAME (copied, for
 * the audit).  A string already in S, or shorter than PX_SCRUB_MIN, is
 * left out.  Returns 0, or -ENOMEM. */
int px_scrub_add(struct px_scrub *s, const char *name, const void *str, size_t len);
/* How many strings S looks for (0 for NULL). */
size_t px_scrub_count(const struct px_scrub *s);

/*
 * Overwrite with '*' every whole occurrence of S's strings in BUF[0..LEN),
 * a piece that is whole (a header).  Returns how many were overwritten;
 * *NAME (when not NULL) is set to the secret of the first one, and left
 * alone when there was none.
 */
size_t px_scrub_mask(const struct px_scrub *s, unsigned char *buf, size_t len,
    const char **name);

/* Where a stream's scan stands between two pieces.  Zero it at the
 * stream's start; treat as opaque. */
struct px_scrub_state {
	size_t carry;	/* bytes of the next piece an occurrence still covers */
};

/*
 * Scan BUF[0..LEN), the next piece of a stream, as px_scrub_mask() does,
 * across pieces: returns how many bytes at BUF may go now; the rest (at
 * most the longest string less one byte, none when FINAL, the stream's
 * end) could begin an occurrence, and the caller keeps it, unchanged, in
 * front of the next piece.  An occurrence that begins in what goes is
 * overwritten whole, in the next piece too.  *MASKED and *NAME as
 * px_scrub_mask() returns and sets them.
 */
size_t px_scrub_stream(const struct px_scrub *s, struct px_scrub_state *st, unsigned char *buf,
    size_t len, int final, size_t *masked, const char **name);

/*
 * The server-to-client half of a WebSocket connection (RFC 6455 §5), for a
 * scan of its payload as one stream.  The state is where the bytes the
 * caller has not yet passed on start: at a frame's header, or LEFT bytes
 * into a payload.  Treat as opaque.
 */
struct px_scrub_ws {
	uint64_t left;
	struct px_scrub_state st;
};

/*
 * Scan the LEN bytes at BUF, which start where WS says, as WebSocket
 * frames from a server: every payload byte (data and control frames alike)
 * is one stream for px_scrub_mask(), masked in BUF in place.  Returns how
 * many bytes at BUF may go now (WS is moved past them): all of them when
 * FINAL (the connection ends), else all but the bytes from where an
 * occurrence could begin, or from a header not yet whole.  *MASKED and
 * *NAME as px_scrub_mask() says.  Returns -1 for frames no scan can read:
 * masked by the server, or compressed (RSV bits set: an extension);
 * -ENOMEM when out of memory.
 */
long px_scrub_ws(const struct px_scrub *s, struct px_scrub_ws *ws, unsigned char *buf,
    size_t len, int final, size_t *masked, const char **name);

#endif
