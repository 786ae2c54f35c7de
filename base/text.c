/*
 * base/text.c: escaping and hex (see text.h).
 */
#include "config.h"

#include <string.h>

#include "base/text.h"

static const char hexdigits[] = "0123456789abcdef";

/* bs_escape() into SIZE bytes; sets *ALL when the whole of SRC fitted. */
static size_t
escape(const char *src, size_t len, char *buf, size_t size, unsigned flags, int *all)
{
	size_t i, o = 0;
	unsigned char ch;

	for (i = 0; i < len; i++) {
		ch = (unsigned char)src[i];
		if (ch == '\t' && (flags & BS_ESC_TAB_SPACE))
			ch = ' ';
		if ((ch >= 0x20 && ch < 0x7f && (ch != '\\' || (flags & BS_ESC_KEEP_BACKSLASH))) ||
		    (ch >= 0x80 && (flags & BS_ESC_KEEP_HIGH))) {
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
	*all = i == len;
	return o;
}

size_t
bs_escape(const char *src, size_t len, char *buf, size_t size, unsigned flags)
{
	size_t o;
	int all;

	o = escape(src, len, buf, size, flags, &all);
	if (all || !(flags & BS_ESC_MARK_CUT) || size < 4)
		return o;
	/* Cut short: again, leaving room for the mark. */
	o = escape(src, len, buf, size - 3, flags, &all);
	memcpy(buf + o, "...", 4);
	return o + 3;
}

/* Length of the valid UTF-8 sequence at S (of N bytes), or 0: overlong
 * forms, surrogates and values past U+10FFFF are invalid (RFC 3629). */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned cp;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* The bytes a JSON string carries as they are: printable ASCII but '"'
 * and '\\'.  A table: one load a byte, where the four comparisons were
 * most of an audit line's escaping. */
static const unsigned char json_plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

size_t
bs_json_plain_copy(char *dst, const char *src, size_t max)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0;

	while (i < max && json_plain[s[i]]) {
		dst[i] = (char)s[i];
		i++;
	}
	return i;
}

size_t
bs_json_escape(const char *src, size_t len, char *buf, size_t size, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t need = 0, done = 0, i = 0;
	int full = 1;

	while (i < len) {
		unsigned char ch = s[i];
		const char *piece;
		char esc[6];
		size_t n = 1, plen;

		if (json_plain[ch]) {
			/* The common case: a run of bytes as they are, copied
			 * at once. */
			size_t j = i + 1, run, room;

			while (j < len && json_plain[s[j]])
				j++;
			run = j - i;
			room = full && size > done + 1 ? size - done - 1 : 0;
			if (run > room)
				full = 0;
			if (room > 0) {
				memcpy(buf + done, src + i, run < room ? run : room);
				done += run < room ? run : room;
			}
			need += run;
			i = j;
			continue;
		}
		piece = esc;
		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			plen = 2;
		} else if (ch < 0x80 || !(flags & BS_JSON_UTF8)) {
			/* Control bytes, DEL, and without BS_JSON_UTF8 every byte
			 * of 0x80 and above. */
			memcpy(esc, "\\u00", 4);
			esc[4] = hexdigits[ch >> 4];
			esc[5] = hexdigits[ch & 15];
			plen = 6;
		} else if ((n = utf8_len(s + i, len - i)) == 0) {
			n = 1;
			piece = "\\ufffd";
			plen = 6;
		} else {
			piece = src + i;
			plen = n;
		}
		/* Only whole escapes: once one does not fit, none after it is
		 * written either. */
		if (full && done + plen < size) {
			memcpy(buf + done, piece, plen);
			done += plen;
		} else {
			full = 0;
		}
		need += plen;
		i += n;
	}
	if (size > 0)
		buf[done] = '\0';
	return need;
}

/* The value of one base64 character, or -1. */
static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
bs_b64_decode(const char *s, size_t n, unsigned char *out, size_t size)
{
	size_t i, o = 0, pad = 0;
	unsigned acc = 0;
	int bits = 0, v;

	while (n > 0 && s[n - 1] == '=' && pad < 2) {
		n--;
		pad++;
	}
	if ((pad > 0 && (n + pad) % 4 != 0) || n % 4 == 1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((v = b64_value((unsigned char)s[i])) < 0)
			return -1;
		acc = ((acc << 6) | (unsigned)v) & 0x3fff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= size)
				return -1;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	return (long)o;
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

void
bs_str_cut(struct bs_str *s, const char *p, size_t n)
{
	if (s->len + 1 < s->size) {
		size_t room = s->size - s->len - 1, k = n < room ? n : room;

		memcpy(s->buf + s->len, p, k);
		s->buf[s->len + k] = '\0';
	}
	s->len += n;
}

void
bs_str_uint(struct bs_str *s, unsigned long v)
{
	char n[24];
	size_t i = sizeof(n);

	do {
		n[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	bs_str_addn(s, n + i, sizeof(n) - i);
}

void
bs_str_int(struct bs_str *s, long v)
{
	if (v < 0) {
		bs_str_addn(s, "-", 1);
		bs_str_uint(s, (unsigned long)0 - (unsigned long)v);
	} else {
		bs_str_uint(s, (unsigned long)v);
	}
}

char *
bs_ipv4_text(const void *a, char *out)
{
	const unsigned char *b = a;
	char *o = out;
	int i;

	for (i = 0; i < 4; i++) {
		if (i > 0)
			*o++ = '.';
		if (b[i] >= 100)
			*o++ = (char)('0' + b[i] / 100);
		if (b[i] >= 10)
			*o++ = (char)('0' + b[i] / 10 % 10);
		*o++ = (char)('0' + b[i] % 10);
	}
	*o = '\0';
	return out;
}

bool
bs_env_name_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= BS_ENV_NAME_MAX)
			return false;
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	}
	return true;
}
