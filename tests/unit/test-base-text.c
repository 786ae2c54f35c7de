/*
 * tests/unit/test-base-text.c: escaping and hex (base/text.h),
 * table-driven.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "tests/unit/tap.h"

static const struct {
	const char *in;
	size_t len;
	size_t size;
	unsigned flags;
	const char *want;
} escapes[] = {
	{ "plain", 5, 64, 0, "plain" },
	{ "a\tb", 3, 64, 0, "a\\x09b" },
	{ "a\tb", 3, 64, BS_ESC_TAB_SPACE, "a b" },
	{ "back\\slash", 10, 64, 0, "back\\x5cslash" },
	{ "\x01\x7f\xff", 3, 64, 0, "\\x01\\x7f\\xff" },
	{ "nul\0byte", 8, 64, 0, "nul\\x00byte" },
	{ "abcdef", 6, 4, 0, "abc" },
	/* An escape is never split: it fits whole or not at all. */
	{ "a\x01", 2, 5, 0, "a" },
	{ "a\x01", 2, 6, 0, "a\\x01" },
	{ "", 0, 1, 0, "" },
	{ "back\\slash", 10, 64, BS_ESC_KEEP_BACKSLASH, "back\\slash" },
	{ "caf\xc3\xa9\x01", 6, 64, BS_ESC_KEEP_HIGH, "caf\xc3\xa9\\x01" },
	{ "caf\xc3\xa9", 5, 64, 0, "caf\\xc3\\xa9" },
	/* Cut short: "..." says so, and still no escape is split. */
	{ "abcdefgh", 8, 8, BS_ESC_MARK_CUT, "abcd..." },
	{ "abcdefg", 7, 8, BS_ESC_MARK_CUT, "abcdefg" },
	{ "ab\x01" "cdef", 7, 8, BS_ESC_MARK_CUT, "ab..." },
	{ "abc", 3, 3, BS_ESC_MARK_CUT, "ab" },
};

static const struct {
	const char *in;
	size_t len;
	size_t size;
	unsigned flags;
	const char *want;
	size_t need;
} jsons[] = {
	{ "plain", 5, 64, 0, "plain", 5 },
	{ "q\"b\\", 4, 64, 0, "q\\\"b\\\\", 6 },
	{ "\x01\n\x7f", 3, 64, 0, "\\u0001\\u000a\\u007f", 18 },
	{ "caf\xc3\xa9", 5, 64, 0, "caf\\u00c3\\u00a9", 15 },
	{ "caf\xc3\xa9", 5, 64, BS_JSON_UTF8, "caf\xc3\xa9", 5 },
	/* Invalid UTF-8: a lone continuation, an overlong '/', a surrogate,
	 * a sequence cut by LEN. */
	{ "\x80", 1, 64, BS_JSON_UTF8, "\\ufffd", 6 },
	{ "\xc0\xaf", 2, 64, BS_JSON_UTF8, "\\ufffd\\ufffd", 12 },
	{ "\xed\xa0\x80", 3, 64, BS_JSON_UTF8, "\\ufffd\\ufffd\\ufffd", 18 },
	{ "\xe2\x82\xac", 2, 64, BS_JSON_UTF8, "\\ufffd\\ufffd", 12 },
	{ "\xe2\x82\xac", 3, 64, BS_JSON_UTF8, "\xe2\x82\xac", 3 },
	{ "nul\0x", 5, 64, 0, "nul\\u0000x", 10 },
	/* Too small: whole escapes only, the return says what was needed. */
	{ "ab\x01", 3, 7, 0, "ab", 8 },
	{ "ab\x01", 3, 9, 0, "ab\\u0001", 8 },
	{ "ab", 2, 0, 0, NULL, 2 },
};

int
main(void)
{
	char buf[64], hex[9];
	size_t i, n;

	for (i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		memset(buf, 'Z', sizeof(buf));
		n = bs_escape(escapes[i].in, escapes[i].len, buf, escapes[i].size,
		    escapes[i].flags);
		tap_ok(strcmp(buf, escapes[i].want) == 0 && n == strlen(escapes[i].want),
		    "escape case %zu: \"%s\" (want \"%s\")", i, buf, escapes[i].want);
	}
	for (i = 0; i < sizeof(jsons) / sizeof(jsons[0]); i++) {
		memset(buf, 'Z', sizeof(buf));
		n = bs_json_escape(jsons[i].in, jsons[i].len, jsons[i].size ? buf : NULL,
		    jsons[i].size, jsons[i].flags);
		tap_ok(n == jsons[i].need &&
		    (jsons[i].want == NULL ? buf[0] == 'Z' : strcmp(buf, jsons[i].want) == 0),
		    "json case %zu: \"%.64s\" need %zu (want \"%s\", %zu)", i,
		    jsons[i].size ? buf : "", n, jsons[i].want ? jsons[i].want : "", jsons[i].need);
	}
	/* bs_json_plain_copy: a byte is copied exactly when bs_json_escape()
	 * passes it as it is, and the copy stops at the first other one. */
	{
		size_t wrong = 0, plains = 0, first = 256;

		for (i = 0; i < 256; i++) {
			char in[3] = { 'a', (char)i, 'b' }, out[3] = { 0, 0, 0 }, esc[8];
			size_t plain = bs_json_escape(in + 1, 1, esc, sizeof(esc), 0) == 1 &&
			    esc[0] == (char)i;

			n = bs_json_plain_copy(out, in, 3);
			plains += plain;
			if (!(n == (plain ? 3 : 1) && out[0] == 'a' &&
			    (plain ? out[1] == (char)i && out[2] == 'b' : out[1] == 0))) {
				wrong++;
				if (first == 256)
					first = i;
			}
		}
		tap_ok(wrong == 0 && plains == 0x7f - 0x20 - 2,
		    "json plain copy: each byte copied exactly when bs_json_escape() passes it "
		    "(%zu of 256 wrong, the first 0x%02zx; %zu plain)", wrong, first, plains);
	}
	memset(buf, 'Z', sizeof(buf));
	n = bs_json_plain_copy(buf, "abcdef", 4);
	tap_ok(n == 4 && memcmp(buf, "abcdZ", 5) == 0, "json plain copy stops at its max: %zu", n);
	n = bs_json_plain_copy(buf, "ab", 0);
	tap_ok(n == 0, "json plain copy of at most 0 bytes copies none");
	n = bs_json_plain_copy(buf, "ab\0cd", 5);
	tap_ok(n == 2, "json plain copy stops at a NUL: %zu", n);
	/* bs_str: what snprintf() writes and returns, at every size,
	 * including the cut-short ones. */
	for (i = 1; i <= 40; i++) {
		char want[64];
		struct bs_str b;
		int w;

		memset(buf, 'Z', sizeof(buf));
		memset(want, 'Z', sizeof(want));
		w = snprintf(want, i, "GET %s:%lu%s%ld]", "example.com", 443UL, " path /x", -17L);
		bs_str_init(&b, buf, i);
		bs_str_add(&b, "GET ");
		bs_str_add(&b, "example.com");
		bs_str_addn(&b, ":", 1);
		bs_str_uint(&b, 443);
		bs_str_addn(&b, " path /x", 8);
		bs_str_int(&b, -17);
		bs_str_addn(&b, "]", 1);
		tap_ok(w >= 0 && b.len == (size_t)w && memcmp(buf, want, sizeof(buf)) == 0,
		    "str in %zu bytes: \"%s\" %zu (want \"%s\" %d)", i, buf, b.len, want, w);
	}
	{
		struct bs_str b;
		char want[64];

		snprintf(want, sizeof(want), "0 %lu %ld %ld", ULONG_MAX, LONG_MIN, LONG_MAX);
		bs_str_init(&b, buf, sizeof(buf));
		bs_str_uint(&b, 0);
		bs_str_addn(&b, " ", 1);
		bs_str_uint(&b, ULONG_MAX);
		bs_str_addn(&b, " ", 1);
		bs_str_int(&b, LONG_MIN);
		bs_str_addn(&b, " ", 1);
		bs_str_int(&b, LONG_MAX);
		tap_ok(strcmp(buf, want) == 0, "str numbers at their ends: %s (want %s)", buf, want);
	}
	bs_hex("\x00\x01\xab\xff", 4, hex);
	tap_ok(strcmp(hex, "0001abff") == 0, "hex: %s", hex);
	bs_hex("", 0, hex);
	tap_ok(hex[0] == '\0', "hex of nothing is empty");
	{
		char longest[BS_ENV_NAME_MAX + 2];

		tap_ok(bs_env_name_ok("_a1") && bs_env_name_ok("GH_TOKEN"), "env names");
		tap_ok(!bs_env_name_ok("") && !bs_env_name_ok("1A") && !bs_env_name_ok("A=B") &&
		    !bs_env_name_ok("A B") && !bs_env_name_ok("A-B") && !bs_env_name_ok(NULL),
		    "not env names: empty, a leading digit, '=', ' ', '-', NULL");
		memset(longest, 'A', sizeof(longest) - 1);
		longest[BS_ENV_NAME_MAX] = '\0';
		tap_ok(bs_env_name_ok(longest), "an env name of %d bytes", BS_ENV_NAME_MAX);
		longest[BS_ENV_NAME_MAX] = 'A';
		longest[BS_ENV_NAME_MAX + 1] = '\0';
		tap_ok(!bs_env_name_ok(longest), "not one of %d", BS_ENV_NAME_MAX + 1);
	}
	{
		unsigned char out[16];
		long got;

		got = bs_b64_decode("dXNlcjpwdw==", 12, out, sizeof(out));
		tap_ok(got == 7 && memcmp(out, "user:pw", 7) == 0, "base64 with its padding");
		got = bs_b64_decode("dXNlcjpwdw", 10, out, sizeof(out));
		tap_ok(got == 7 && memcmp(out, "user:pw", 7) == 0, "base64, padding left out");
		got = bs_b64_decode("", 0, out, sizeof(out));
		tap_cmp_int(got, "==", 0, "base64 of nothing is nothing");
		tap_cmp_int(bs_b64_decode("dXNlcjpwdw=", 11, out, sizeof(out)), "==", -1,
		    "base64: one '=' where two belong");
		tap_cmp_int(bs_b64_decode("dXNl cjpw", 9, out, sizeof(out)), "==", -1,
		    "base64: a blank inside");
		tap_cmp_int(bs_b64_decode("dXNlc", 5, out, sizeof(out)), "==", -1,
		    "base64: a lone sixth of a byte");
		tap_cmp_int(bs_b64_decode("dX-l", 4, out, sizeof(out)), "==", -1,
		    "base64: a base64url character");
		tap_cmp_int(bs_b64_decode("dXNlcjpwdw==", 12, out, 6), "==", -1,
		    "base64: no room for the seventh byte");
	}
	return tap_done();
}
