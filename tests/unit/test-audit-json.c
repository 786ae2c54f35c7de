/*
 * tests/unit/test-audit-json.c: an audit line's string fields
 * (proxy/core/audit.c's px_json_kstr() and px_json_kstrn()) against a model of
 * what they must write: the key, the value escaped by bs_json_escape(),
 * cut at 256 bytes with "...", all or nothing past the buffer's last 3
 * bytes (overflow set, the line never written).  The fields whose bytes
 * all go as they are take a path of their own; random values, plain and
 * not, at every fill of the buffer near its end, must come out the same
 * either way.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "proxy/core/audit.h"
#include "tests/unit/tap.h"

/*
 * The model, from what audit.h promises rather than from the code: after
 * the FILL bytes already there, KEY, a quote, VAL's first 256 bytes as
 * bs_json_escape() writes them, "..." when VAL was longer, a quote; and
 * overflow (the line is never written, so its bytes do not matter) when
 * that does not fit with 3 bytes to spare for the line's end.
 */
static void
model(struct px_json *j, const char *key, size_t klen, const char *val, size_t len)
{
	char esc[6 * 256 + 1];
	size_t n = len > 256 ? 256 : len;
	size_t need = bs_json_escape(val, n, esc, sizeof(esc), 0);
	size_t total = klen + 1 + need + (len > n ? 3 : 0) + 1;

	if (j->len + total + 3 > sizeof(j->buf)) {
		j->overflow = 1;
		return;
	}
	memcpy(j->buf + j->len, key, klen);
	j->buf[j->len + klen] = '"';
	memcpy(j->buf + j->len + klen + 1, esc, need);
	if (len > n)
		memcpy(j->buf + j->len + klen + 1 + need, "...", 3);
	j->buf[j->len + total - 1] = '"';
	j->len += total;
}

static uint32_t seed = 12345;

static uint32_t
rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

/* J filled with FILL bytes of earlier fields. */
static void
filled(struct px_json *j, size_t fill)
{
	memset(j, 0, sizeof(*j));
	memset(j->buf, 'f', fill);
	j->len = fill;
}

static int
same(const struct px_json *a, const struct px_json *b)
{
	return a->overflow == b->overflow && (a->overflow || (a->len == b->len &&
	    memcmp(a->buf, b->buf, a->len) == 0));
}

int
main(void)
{
	static const char key[] = ",\"host\":";
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]/_";
	static struct px_json got, want;
	char val[400], tmp[400];
	size_t i, k, len, fill, bad = 0, badn = 0, plain = 0, overflowed = 0;

	for (i = 0; i < 20000; i++) {
		/* Mostly plain values (the common field), some with a byte to
		 * escape, some NULs, of every length to past the 256 cut. */
		len = rnd() % 300;
		for (k = 0; k < len; k++)
			val[k] = alnum[rnd() % (sizeof(alnum) - 1)];
		if (rnd() % 3 == 0 && len > 0)
			val[rnd() % len] = (char)(rnd() % 256);
		val[len] = '\0';
		/* Near the buffer's end now and then, where room runs out. */
		fill = rnd() % 4 == 0 ? sizeof(got.buf) - 3 - (rnd() % 320) : rnd() % 200;

		filled(&got, fill);
		filled(&want, fill);
		px_json_strn(&got, "host", val, len);
		model(&want, key, sizeof(key) - 1, val, len);
		badn += !same(&got, &want);
		plain += !want.overflow && len <= 256 && bs_json_plain_copy(tmp, val, len) == len;
		overflowed += want.overflow;

		filled(&got, fill);
		filled(&want, fill);
		px_json_str(&got, "host", val);
		model(&want, key, sizeof(key) - 1, val, strlen(val));
		bad += !same(&got, &want);
	}
	tap_ok(badn == 0, "px_json_strn: %zu of 20000 fields differ from the model", badn);
	tap_ok(bad == 0, "px_json_str: %zu of 20000 fields differ from the model", bad);
	tap_ok(plain > 1000 && overflowed > 100,
	    "the cases cover plain values (%zu) and a full buffer (%zu)", plain, overflowed);

	/* The edges by hand: exactly 256 plain bytes are not cut, 257 are;
	 * a value that ends exactly at the last byte the line may use. */
	memset(val, 'x', 257);
	val[257] = '\0';
	filled(&got, 0);
	px_json_strn(&got, "host", val, 256);
	tap_ok(!got.overflow && got.len == sizeof(key) - 1 + 258 && got.buf[got.len - 1] == '"',
	    "256 plain bytes go whole (%zu)", got.len);
	filled(&got, 0);
	px_json_str(&got, "host", val);
	tap_ok(!got.overflow && got.len == sizeof(key) - 1 + 261 &&
	    memcmp(got.buf + got.len - 4, "...\"", 4) == 0, "257 are cut with ... (%zu)", got.len);
	fill = sizeof(got.buf) - 3 - (sizeof(key) - 1) - 2 - 10;
	filled(&got, fill);
	px_json_strn(&got, "host", val, 10);
	filled(&want, fill);
	px_json_strn(&want, "host", val, 11);
	tap_ok(!got.overflow && got.len == sizeof(got.buf) - 3 && want.overflow,
	    "a field that fills the line to its last byte goes in, one byte more overflows");
	return tap_done();
}
