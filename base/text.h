/*
 * base/text.h: untrusted bytes made safe to show (every log line escapes
 * and truncates what it did not make), and bytes as hex.  libc only:
 * the bridge links it.
 */
#ifndef POSTERN_BASE_TEXT_H
#define POSTERN_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* bs_escape() flags. */
#define BS_ESC_TAB_SPACE 0x1      /* a tab becomes a space instead of \x09 */
#define BS_ESC_KEEP_BACKSLASH 0x2 /* '\' as is (not \x5c) */
#define BS_ESC_KEEP_HIGH 0x4      /* bytes 0x80-0xff as is (UTF-8 text on a
                                   * terminal: only C0 controls and DEL are
                                   * escaped) */
#define BS_ESC_MARK_CUT 0x8       /* a result cut short ends in "..." */

/*
 * Copy SRC (LEN bytes, untrusted) into BUF of SIZE bytes (SIZE > 0),
 * NUL-terminated: printable ASCII as is, every other byte (and '\') as
 * \xNN, as FLAGS above adjust; stops early rather than overflow or split
 * an escape, so the result may be truncated (4 * LEN + 1 bytes always
 * suffice).  Returns the length written.
 */
size_t bs_escape(const char *src, size_t len, char *buf, size_t size, unsigned flags);

/* bs_json_escape() flags. */
#define BS_JSON_UTF8 0x1 /* valid UTF-8 as is, an invalid byte as U+FFFD;
                          * without it every byte >= 0x80 is \u00NN */

/*
 * The contents of a JSON string (RFC 8259 section 7, without the quotes)
 * for SRC (LEN bytes, untrusted): '"' and '\' escaped, control bytes and
 * DEL as \u00NN, the rest as FLAGS say, so that the result is always
 * valid JSON and never carries a raw control or non-ASCII byte the reader
 * did not ask for.  Writes into BUF of SIZE bytes (BUF may be NULL when
 * SIZE is 0) only whole escapes, NUL-terminated when SIZE > 0, and returns
 * the length the whole result needs (as snprintf does; 6 * LEN at most):
 * a return >= SIZE means BUF holds a cut-short result.
 */
size_t bs_json_escape(const char *src, size_t len, char *buf, size_t size, unsigned flags);

/*
 * Copy the bytes of SRC that a JSON string carries as they are (printable
 * ASCII but '"' and '\', as bs_json_escape() passes them) to DST, up to
 * MAX bytes, stopping at the first other byte (a NUL among them); returns
 * how many were copied.  DST must hold MAX bytes; nothing is terminated.
 * SRC[returned] is the byte that stopped it when fewer than MAX were
 * copied.  The audit's fast path: a field whose bytes are all plain is
 * copied in one pass, the rest escaped by bs_json_escape().
 */
size_t bs_json_plain_copy(char *dst, const char *src, size_t max);

/* Write the LEN bytes at SRC as 2 * LEN lowercase hex digits and a NUL
 * into OUT, which must hold 2 * LEN + 1 bytes. */
void bs_hex(const void *src, size_t len, char *out);

/* Decode the N bytes of base64 at S (RFC 4648 section 4; its "=" padding
 * optional, nothing else in it: no blank, no line end) into OUT (SIZE
 * bytes).  Returns the decoded length, or -1 for anything else. */
long bs_b64_decode(const char *s, size_t n, unsigned char *out, size_t size);

/*
 * A string built by appends into a caller's buffer, as snprintf() builds
 * it but without parsing a format per field (the refusal's head and body,
 * the audit fields, the words of a refusal are on every refused request):
 * BUF of SIZE bytes (SIZE > 0) always holds the NUL-terminated prefix that
 * fits, and LEN counts the whole result, so LEN >= SIZE says it was cut
 * short, as snprintf()'s return does.
 */
struct bs_str {
	char *buf;
	size_t size;
	size_t len;
};

/* bs_str_addn() when the N bytes do not all fit: what does, and the
 * count. */
void bs_str_cut(struct bs_str *s, const char *p, size_t n);

static inline void
bs_str_init(struct bs_str *s, char *buf, size_t size)
{
	s->buf = buf;
	s->size = size;
	s->len = 0;
	buf[0] = '\0';
}

/* Append the N bytes at P (no NUL among them).  Inline, as bs_str_add():
 * most appends are a literal, whose length the compiler then knows. */
static inline void
bs_str_addn(struct bs_str *s, const char *p, size_t n)
{
	if (s->len + n < s->size) {
		memcpy(s->buf + s->len, p, n);
		s->buf[s->len + n] = '\0';
		s->len += n;
	} else {
		bs_str_cut(s, p, n);
	}
}

/* Append the NUL-terminated P. */
static inline void
bs_str_add(struct bs_str *s, const char *p)
{
	bs_str_addn(s, p, strlen(p));
}

/* Append V in decimal ("%lu"). */
void bs_str_uint(struct bs_str *s, unsigned long v);

/* Append V in decimal ("%ld"). */
void bs_str_int(struct bs_str *s, long v);

/*
 * The IPv4 address at A (4 bytes, network order) in dotted decimal, as
 * inet_ntop(AF_INET) writes it, into OUT of at least 16 bytes
 * (INET_ADDRSTRLEN), NUL-terminated; returns OUT.  inet_ntop() formats
 * with sprintf(), a few thousand instructions on every request.
 */
char *bs_ipv4_text(const void *a, char *out);

/* Whether S is an environment variable's name a shell takes:
 * [A-Za-z_][A-Za-z0-9_]*, 1 to BS_ENV_NAME_MAX bytes.  NULL is not. */
#define BS_ENV_NAME_MAX 255
bool bs_env_name_ok(const char *s);

#endif
