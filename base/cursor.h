/*
 * base/cursor.h: one bounds-checked cursor over bytes that are not
 * trusted (c-ares' ares_buf, reduced to what postern's parsers use), and
 * the one decimal number parser every binary shares.  libc only: the
 * bridge links this too.
 *
 * A cursor never owns its bytes and never reads past its end; every
 * fetch either consumes what it returns or, on failure, leaves the
 * position where it was.
 */
#ifndef POSTERN_BASE_CURSOR_H
#define POSTERN_BASE_CURSOR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct bs_cursor {
	const unsigned char *data;
	size_t len;
	size_t off;
	size_t tag;
};

/* Point C at the LEN bytes at DATA (borrowed; must outlive C), at the
 * first byte, with the tag there. */
void bs_cur_init(struct bs_cursor *c, const void *data, size_t len);

/* How many bytes are left after the position.  This and the other
 * one-byte steps are inline: parsers call them for every byte. */
static inline size_t
bs_cur_left(const struct bs_cursor *c)
{
	return c->len - c->off;
}

/* The byte at the position (0-255), or -1 at the end.  Consumes nothing. */
static inline int
bs_cur_peek(const struct bs_cursor *c)
{
	return c->off < c->len ? c->data[c->off] : -1;
}

/* The byte I places after the position (0-255), or -1 past the end. */
static inline int
bs_cur_peek_at(const struct bs_cursor *c, size_t i)
{
	return i < c->len - c->off ? c->data[c->off + i] : -1;
}

/* The position: how many bytes from the start have been consumed. */
static inline size_t
bs_cur_pos(const struct bs_cursor *c)
{
	return c->off;
}

/* Consume N bytes.  Returns 0, or -ENODATA (nothing consumed) when fewer
 * than N are left. */
static inline int
bs_cur_consume(struct bs_cursor *c, size_t n)
{
	if (n > c->len - c->off)
		return -ENODATA;
	c->off += n;
	return 0;
}

/* Move to POS bytes from the start.  Returns 0, or -ERANGE (position
 * unchanged) when POS is past the end. */
int bs_cur_set_pos(struct bs_cursor *c, size_t pos);

/* The bytes at the position; bs_cur_left() of them may be read. */
const unsigned char *bs_cur_ptr(const struct bs_cursor *c);

/*
 * Fetch and consume one byte, a big-endian 16-bit number, or N bytes (*OUT
 * then points into the data).  Each returns 0, or -ENODATA when fewer
 * bytes are left, with nothing consumed and *OUT untouched.
 */
int bs_cur_fetch_u8(struct bs_cursor *c, uint8_t *out);
int bs_cur_fetch_be16(struct bs_cursor *c, uint16_t *out);
int bs_cur_fetch_bytes(struct bs_cursor *c, size_t n, const unsigned char **out);

/*
 * Consume the N bytes at LIT if the data at the position starts with
 * them.  Returns 0; -ENODATA when the bytes left are fewer than N and a
 * prefix of LIT (more data could still match); -EINVAL otherwise.
 * Nothing is consumed on failure.
 */
int bs_cur_expect(struct bs_cursor *c, const void *lit, size_t n);

/* Consume bytes while they are in the NUL-terminated SET; returns how many. */
size_t bs_cur_skip(struct bs_cursor *c, const char *set);

/* Consume bytes until one is in SET (or the end); returns how many. */
size_t bs_cur_skip_until(struct bs_cursor *c, const char *set);

/* Remember the position; bs_cur_rollback() returns to it. */
void bs_cur_tag(struct bs_cursor *c);
void bs_cur_rollback(struct bs_cursor *c);

/*
 * Consume a run of decimal digits (at least one; leading zeros allowed)
 * and store its value in *OUT.  Returns 0; -EINVAL when the position is
 * not at a digit; -ERANGE when the value is over MAX (nothing is then
 * consumed and *OUT is untouched).  No sign and no space is taken.
 */
int bs_cur_num(struct bs_cursor *c, uint64_t max, uint64_t *out);

/* bs_num_parse() flags. */
#define BS_NUM_ZEROS 0x1	/* allow leading zeros ("007" is 7) */
#define BS_NUM_OCTAL 0x2	/* digits 0-7, base 8 (a file mode: "0660") */

/*
 * The whole of the LEN bytes at S as one decimal (or, with BS_NUM_OCTAL,
 * octal) number no greater than MAX: digits only, no sign, no space, no trailing byte, and (unless
 * FLAGS has BS_NUM_ZEROS) no leading zero except in "0" itself, since
 * "0443" is 443 to one parser and octal to another.  Returns 0 and sets
 * *OUT; -EINVAL when S is empty or not such a number; -ERANGE when it is
 * one but over MAX.  *OUT is untouched on failure.
 */
int bs_num_parse(const char *s, size_t len, uint64_t max, unsigned flags, uint64_t *out);

/*
 * A TCP/UDP port written as bs_num_parse() takes it (no leading zero),
 * 0 to 65535: the caller refuses 0 where it is not a port.  Returns 0,
 * -EINVAL or -ERANGE as bs_num_parse().
 */
int bs_port_parse(const char *s, size_t len, uint16_t *out);

#endif
