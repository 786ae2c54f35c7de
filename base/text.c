/*
 * base/text.c: escaping and hex (see text.h).
 */
#include "config.h"

#include "base/text.h"

static const char hexdigits[] = "0123456789abcdef";

size_t
bs_escape(const char *src, size_t len, char *buf, size_t size, unsigned flags)
{
	size_t i, o = 0;
	unsigned char ch;

	for (i = 0; i < len; i++) {
		ch = (unsigned char)src[i];
		if (ch == '\t' && (flags & BS_ESC_TAB_SPACE))
			ch = ' ';
		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			if (o + 1 >= size)
				break;
			buf[o++] = (char)ch;
		} else {
			if (o + 4 >= size)
				break;
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hexdigits[ch >> 4];
			buf[o++] = hexdigits[ch & 15];
		}
	}
	buf[o] = '\0';
	return o;
}

void
bs_hex(const void *src, size_t len, char *out)
{
	const unsigned char *p = src;
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hexdigits[p[i] >> 4];
		out[2 * i + 1] = hexdigits[p[i] & 15];
	}
	out[2 * len] = '\0';
}
