/*
 * tests/unit/test-base-text.c: escaping and hex (base/text.h),
 * table-driven.
 */
#include "config.h"

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
	bs_hex("\x00\x01\xab\xff", 4, hex);
	tap_ok(strcmp(hex, "0001abff") == 0, "hex: %s", hex);
	bs_hex("", 0, hex);
	tap_ok(hex[0] == '\0', "hex of nothing is empty");
	return tap_done();
}
