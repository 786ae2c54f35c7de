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

size_t
bs_cur_left(const struct bs_cursor *c)
{
	return c->len - c->off;
}

int
bs_cur_peek(const struct bs_cursor *c)
{
	return c->off < c->len ? c->data[c->off] : -1;
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

int
bs_cur_num(struct bs_cursor *c, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = c->off;
	unsigned d;

	if (i >= c->len || c->data[i] < '0' || c->data[i] > '9')
		return -EINVAL;
	for (; i < c->len && c->data[i] >= '0' && c->data[i] <= '9'; i++) {
		d = c->data[i] - '0';
		/* Checked before the multiplication, which must not wrap. */
		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	c->off = i;
	*out = v;
	return 0;
}

int
bs_num_parse(const char *s, size_t len, uint64_t max, unsigned flags, uint64_t *out)
{
	struct bs_cursor c;
	uint64_t v;
	int rc;

	if (len == 0)
		return -EINVAL;
	if (!(flags & BS_NUM_ZEROS) && s[0] == '0' && len > 1)
		return -EINVAL;
	bs_cur_init(&c, s, len);
	/* A byte that is not a digit anywhere is -EINVAL even when the
	 * digits before it are already over MAX. */
	if (bs_cur_skip(&c, (flags & BS_NUM_OCTAL) ? "01234567" : "0123456789") != len)
		return -EINVAL;
	if (flags & BS_NUM_OCTAL) {
		size_t i;

		for (v = 0, i = 0; i < len; i++) {
			uint64_t d = (uint64_t)(s[i] - '0');

			if (d > max || v > (max - d) / 8)
				return -ERANGE;
			v = v * 8 + d;
		}
		*out = v;
		return 0;
	}
	bs_cur_init(&c, s, len);
	rc = bs_cur_num(&c, max, &v);
	if (rc < 0)
		return rc;
	*out = v;
	return 0;
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
