/*
 * proxy/proto/leak.h: the session's own secrets in outbound bytes.  A leak
 * scan holds needles (a secret's placeholder, its value, a canary) and finds
 * any of them in a stream of bytes in these encodings: raw; base64 and
 * base64url at each of the three alignments; hex, lower or upper case; and
 * percent-encoding (every %XX is decoded, needless escapes such as %61 for
 * 'a' included, and the needle and its encodings are looked for in what
 * that gives).  A host name has forms of its own (px_leak_host()).
 *
 * base64 of a needle inside a longer text depends on where the needle
 * starts, modulo 3.  For each alignment the scan looks for the stable
 * middle: the characters all of whose six bits come from the needle, at
 * least 4 * len / 3 - 2 of them, so a needle of PX_LEAK_MIN bytes gives
 * fifteen characters (90 bits) and a placeholder well over a hundred: a
 * false match on random data is far less likely than one in 2^64 a byte.
 * Decoding every run of base64 instead would find the same and cost a
 * second pass and a buffer on every byte of bulk data.
 *
 * All forms are exact strings of at least 11 bytes, found in one pass: the
 * 8 bytes at every fourth place are hashed into a small table of the 8
 * bytes at each form's first four offsets, and a candidate is compared
 * whole.  The stretches of a piece near a %XX escape are also decoded and
 * scanned again.
 *
 * A pure codec: no I/O, no connection.  Values are kept in OpenSSL's secure
 * heap when there is one, wiped when freed, and never written anywhere: a
 * hit says which needle and which encoding, not the bytes.
 */
#ifndef POSTERN_PROXY_LEAK_H
#define POSTERN_PROXY_LEAK_H

#include <stddef.h>
#include <stdint.h>

/* Shorter needles are not looked for: they would match ordinary text. */
#define PX_LEAK_MIN 12
/* Needles a scan holds: one bit each in an ACTIVE mask. */
#define PX_LEAK_NEEDLES 64
/* Longest needle, in bytes. */
#define PX_LEAK_MAX 4096

enum px_leak_enc {
	PX_LEAK_RAW = 0,
	PX_LEAK_BASE64,
	PX_LEAK_BASE64URL,
	PX_LEAK_HEX,
	PX_LEAK_PERCENT,	/* the needle itself behind %XX escapes */
	PX_LEAK_BASE32,		/* host names only */
	PX_LEAK_PCT_BASE64,	/* an encoding below, behind %XX escapes */
	PX_LEAK_PCT_BASE64URL,
	PX_LEAK_PCT_HEX,
};

/* What a scan found: needle INDEX (px_leak_add()'s) in encoding ENC. */
struct px_leak_hit {
	size_t needle;
	enum px_leak_enc enc;
};

struct px_leak;

struct px_leak *px_leak_new(void);
/* Wipe and free L.  NULL is a no-op. */
void px_leak_free(struct px_leak *l);

/*
 * Look for the LEN bytes at STR (copied) in every encoding.  Returns its
 * index (the bit for ACTIVE masks below), or -EINVAL when LEN is below
 * PX_LEAK_MIN or above PX_LEAK_MAX, -ENOSPC past PX_LEAK_NEEDLES, -ENOMEM.
 */
long px_leak_add(struct px_leak *l, const void *str, size_t len);
/* How many needles L holds (0 for NULL). */
size_t px_leak_count(const struct px_leak *l);
/* The name of ENC for people and the audit ("base64", "percent+hex"). */
const char *px_leak_enc_name(enum px_leak_enc enc);

/*
 * The most bytes of a stream one occurrence may cover, in any encoding
 * (an escaped form covers three bytes a byte): a stream's scan keeps at
 * most this less one.  0 for an empty scan.
 */
size_t px_leak_span(const struct px_leak *l);

/*
 * Look for the needles whose bit is set in ACTIVE in BUF[0..LEN), a piece
 * that is whole (a target, a header value).  Returns 1 and fills *HIT with
 * an occurrence (when there are several, any one), 0 when none, -ENOMEM.
 */
int px_leak_find(const struct px_leak *l, uint64_t active, const void *buf, size_t len,
    struct px_leak_hit *hit);

/*
 * Scan BUF[0..LEN), the next piece of a stream, as px_leak_find() does.
 * Returns how many bytes at BUF may go now; the rest (at most
 * px_leak_span() less one, none when FINAL) could hold the start of an
 * occurrence, and the caller keeps it in front of the next piece.  *FOUND
 * is 1 (and *HIT filled) when an occurrence was found, -ENOMEM on error,
 * else 0; then nothing may go.
 */
size_t px_leak_stream(const struct px_leak *l, uint64_t active, const void *buf, size_t len,
    int final, struct px_leak_hit *hit, int *found);

/*
 * The same for a caller that cannot hold bytes back (they have gone): the
 * scan keeps a copy of the stream's last px_leak_span() - 1 bytes in ST
 * and finds an occurrence split over pieces when its last byte comes.  Zero
 * ST at the stream's start, free it with px_leak_carry_free().  Returns as
 * px_leak_find().
 */
struct px_leak_carry {
	unsigned char *buf;
	size_t len;
};
int px_leak_feed(const struct px_leak *l, uint64_t active, struct px_leak_carry *st,
    const void *buf, size_t len, struct px_leak_hit *hit);
void px_leak_carry_free(struct px_leak_carry *st);

/*
 * Look for the needles of ACTIVE in host name HOST (LEN bytes): names are
 * read without case and split in labels of at most 63 bytes, so the scan
 * drops every '.', folds case, and looks for the needle (folded), its hex
 * and its base32 (RFC 4648, any of its five alignments).  Returns as
 * px_leak_find().
 */
int px_leak_host(const struct px_leak *l, uint64_t active, const char *host, size_t len,
    struct px_leak_hit *hit);

#endif
