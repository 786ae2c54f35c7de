/*
 * base/cursor.c: the bounds-checked cursor and the number parser (see
 * cursor.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "base/cursor.h"

void
bs_cur_init(struct bs_cursor *c, const void *data, size_t len)
{
	c->data = data;
	c->len = len;
	c->off = 0;
	c->tag = 0;
}

int
bs_cur_set_pos(struct bs_cursor *c, size_t pos)
{
	if (pos > c->len)
		return -ERANGE;
	c->off = pos;
	return 0;
}

const unsigned char *
bs_cur_ptr(const struct bs_cursor *c)
{
	return c->data + c->off;
}

int
bs_cur_fetch_u8(struct bs_cursor *c, uint8_t *out)
{
	if (bs_cur_left(c) < 1)
		return -ENODATA;
	*out = c->data[c->off++];
	return 0;
}

int
bs_cur_fetch_be16(struct bs_cursor *c, uint16_t *out)
{
	if (bs_cur_left(c) < 2)
		return -ENODATA;
	*out = (uint16_t)((c->data[c->off] << 8) | c->data[c->off + 1]);
	c->off += 2;
	return 0;
}

int
bs_cur_fetch_bytes(struct bs_cursor *c, size_t n, const unsigned char **out)
{
	if (bs_cur_left(c) < n)
		return -ENODATA;
	*out = c->data + c->off;
	c->off += n;
	return 0;
}

int
bs_cur_expect(struct bs_cursor *c, const void *lit, size_t n)
{
	size_t have = bs_cur_left(c);

	if (n == 0)
		return 0;
	if (have < n)
		return have == 0 || memcmp(c->data + c->off, lit, have) == 0 ?
		    -ENODATA : -EINVAL;
	if (memcmp(c->data + c->off, lit, n) != 0)
		return -EINVAL;
	c->off += n;
	return 0;
}

/* strchr() would also match the terminating NUL: a NUL byte in the data
 * is never in a set. */
static int
in_set(unsigned char b, const char *set)
{
	return b != '\0' && strchr(set, b) != NULL;
}

size_t
bs_cur_skip(struct bs_cursor *c, const char *set)
{
	size_t start = c->off;

	while (c->off < c->len && in_set(c->data[c->off], set))
		c->off++;
	return c->off - start;
}

size_t
bs_cur_skip_until(struct bs_cursor *c, const char *set)
{
	size_t start = c->off;

	while (c->off < c->len && !in_set(c->data[c->off], set))
		c->off++;
	return c->off - start;
}

void
bs_cur_tag(struct bs_cursor *c)
{
	c->tag = c->off;
}

void
bs_cur_rollback(struct bs_cursor *c)
{
	c->off = c->tag;
}

/* Digits of BASE (8 or 10) at S[0..LEN), all of them checked to be
 * digits: their value, or -ERANGE past MAX.  One division per call: the
 * limit is compared before each multiplication, which must not wrap. */
static int
digits_value(const unsigned char *s, size_t len, unsigned base, uint64_t max, uint64_t *out)
{
	uint64_t v = 0, lim = max / base, rem = max % base;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned d = s[i] - '0';

		if (v > lim || (v == lim && d > rem))
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int
is_digit(unsigned char ch, unsigned base)
{
	return ch >= '0' && (unsigned)(ch - '0') < base;
}

int
bs_cur_num(struct bs_cursor *c, uint64_t max, uint64_t *out)
{
	size_t i = c->off;
	int rc;

	while (i < c->len && is_digit(c->data[i], 10))
		i++;
	if (i == c->off)
		return -EINVAL;
	rc = digits_value(c->data + c->off, i - c->off, 10, max, out);
	if (rc < 0)
		return rc;
	c->off = i;
	return 0;
}

int
bs_num_parse(const char *s, size_t len, uint64_t max, unsigned flags, uint64_t *out)
{
	unsigned base = (flags & BS_NUM_OCTAL) ? 8 : 10;
	size_t i;

	if (len == 0)
		return -EINVAL;
	if (!(flags & BS_NUM_ZEROS) && s[0] == '0' && len > 1)
		return -EINVAL;
	/* A byte that is not a digit anywhere is -EINVAL even when the
	 * digits before it are already over MAX. */
	for (i = 0; i < len; i++)
		if (!is_digit((unsigned char)s[i], base))
			return -EINVAL;
	return digits_value((const unsigned char *)s, len, base, max, out);
}

int
bs_port_parse(const char *s, size_t len, uint16_t *out)
{
	uint64_t v;
	int rc;

	rc = bs_num_parse(s, len, 65535, 0, &v);
	if (rc < 0)
		return rc;
	*out = (uint16_t)v;
	return 0;
}
