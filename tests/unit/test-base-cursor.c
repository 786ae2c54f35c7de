/*
 * tests/unit/test-base-cursor.c: the shared number parser and cursor
 * (base/cursor.h), table-driven.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/cursor.h"
#include "tests/unit/tap.h"

static const struct {
	const char *in;
	uint64_t max;
	unsigned flags;
	int rc;
	uint64_t want;
} nums[] = {
	{ "0", 10, 0, 0, 0 },
	{ "7", 10, 0, 0, 7 },
	{ "10", 10, 0, 0, 10 },
	{ "11", 10, 0, -ERANGE, 0 },
	{ "", 10, 0, -EINVAL, 0 },
	{ "07", 10, 0, -EINVAL, 0 },
	{ "07", 10, BS_NUM_ZEROS, 0, 7 },
	{ "000", 10, BS_NUM_ZEROS, 0, 0 },
	{ "+1", 10, 0, -EINVAL, 0 },
	{ "-1", 10, 0, -EINVAL, 0 },
	{ " 1", 10, 0, -EINVAL, 0 },
	{ "1 ", 10, 0, -EINVAL, 0 },
	{ "1x", 10, 0, -EINVAL, 0 },
	{ "0x1", 100, 0, -EINVAL, 0 },
	{ "99999999999999999999x", UINT64_MAX, 0, -EINVAL, 0 },
	{ "18446744073709551615", UINT64_MAX, 0, 0, UINT64_MAX },
	{ "18446744073709551616", UINT64_MAX, 0, -ERANGE, 0 },
	{ "99999999999999999999", UINT64_MAX, 0, -ERANGE, 0 },
	{ "4294967295", 4294967295u, 0, 0, 4294967295u },
	{ "4294967296", 4294967295u, 0, -ERANGE, 0 },
	{ "5", 0, 0, -ERANGE, 0 },
	{ "0", 0, 0, 0, 0 },
	/* Octal, as a file mode is written. */
	{ "0660", 0777, BS_NUM_ZEROS | BS_NUM_OCTAL, 0, 0660 },
	{ "777", 0777, BS_NUM_OCTAL, 0, 0777 },
	{ "1000", 0777, BS_NUM_OCTAL, -ERANGE, 0 },
	{ "0660", 0777, BS_NUM_OCTAL, -EINVAL, 0 },
	{ "0668", 0777, BS_NUM_ZEROS | BS_NUM_OCTAL, -EINVAL, 0 },
	{ "7777777777777777777777", UINT64_MAX, BS_NUM_OCTAL, -ERANGE, 0 },
	{ "1777777777777777777777", UINT64_MAX, BS_NUM_OCTAL, 0, UINT64_MAX },
	{ "2000000000000000000000", UINT64_MAX, BS_NUM_OCTAL, -ERANGE, 0 },
	{ "7", 6, BS_NUM_OCTAL, -ERANGE, 0 },
};

static const struct {
	const char *in;
	int rc;
	uint16_t want;
} ports[] = {
	{ "0", 0, 0 },
	{ "1", 0, 1 },
	{ "443", 0, 443 },
	{ "65535", 0, 65535 },
	{ "65536", -ERANGE, 0 },
	{ "0443", -EINVAL, 0 },
	{ "44 3", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "999999", -ERANGE, 0 },
};

static void
test_num(void)
{
	size_t i;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		uint64_t v = 12345;
		int rc = bs_num_parse(nums[i].in, strlen(nums[i].in), nums[i].max,
		    nums[i].flags, &v);

		tap_ok(rc == nums[i].rc && (rc != 0 || v == nums[i].want) &&
		    (rc == 0 || v == 12345),
		    "bs_num_parse(\"%s\", max %llu, flags %u) = %d (%llu)", nums[i].in,
		    (unsigned long long)nums[i].max, nums[i].flags, rc, (unsigned long long)v);
	}
	/* The length is obeyed: bytes after it are not read. */
	{
		uint64_t v = 0;

		tap_ok(bs_num_parse("12x", 2, 100, 0, &v) == 0 && v == 12,
		    "bs_num_parse stops at LEN");
	}
}

static void
test_port(void)
{
	size_t i;

	for (i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		uint16_t v = 7;
		int rc = bs_port_parse(ports[i].in, strlen(ports[i].in), &v);

		tap_ok(rc == ports[i].rc && (rc != 0 || v == ports[i].want),
		    "bs_port_parse(\"%s\") = %d (%u)", ports[i].in, rc, v);
	}
}

static void
test_cursor(void)
{
	static const char text[] = "  0 100 4294967295 x";
	struct bs_cursor c;
	uint64_t v = 0;

	bs_cur_init(&c, text, strlen(text));
	tap_ok(bs_cur_num(&c, 10, &v) == -EINVAL && bs_cur_left(&c) == strlen(text),
	    "a number does not start with a space, nothing consumed");
	tap_ok(bs_cur_skip(&c, " \t") == 2 && bs_cur_peek(&c) == '0', "skip spaces");
	tap_ok(bs_cur_num(&c, 10, &v) == 0 && v == 0 && bs_cur_peek(&c) == ' ',
	    "fetch 0");
	bs_cur_skip(&c, " ");
	bs_cur_tag(&c);
	tap_ok(bs_cur_num(&c, 99, &v) == -ERANGE && bs_cur_peek(&c) == '1' && v == 0,
	    "over max: -ERANGE, nothing consumed");
	tap_ok(bs_cur_num(&c, 100, &v) == 0 && v == 100, "fetch 100");
	bs_cur_rollback(&c);
	tap_ok(bs_cur_peek(&c) == '1', "rollback to the tag");
	tap_ok(bs_cur_skip_until(&c, "x") == (size_t)(strchr(text, 'x') - text) - 4 && bs_cur_peek(&c) == 'x',
	    "skip until x");
	tap_ok(bs_cur_skip(&c, "x") == 1 && bs_cur_peek(&c) == -1 && bs_cur_left(&c) == 0,
	    "at the end, peek is -1");
	tap_ok(bs_cur_num(&c, 10, &v) == -EINVAL, "no number at the end");
	/* A NUL byte in the data is in no set. */
	bs_cur_init(&c, "\0a", 2);
	tap_ok(bs_cur_skip(&c, "a") == 0 && bs_cur_skip_until(&c, "a") == 1,
	    "NUL is in no set");
}

/* The fetches the binary parsers (SNI, SOCKS, DNS) use: each either
 * consumes what it returns or leaves the position where it was. */
static void
test_fetch(void)
{
	static const unsigned char wire[] = { 0x01, 0x02, 0x03, 0xff, 0x00, 'a', 'b' };
	const unsigned char *p = NULL;
	struct bs_cursor c;
	uint16_t v16 = 7;
	uint8_t v8 = 7;

	bs_cur_init(&c, wire, sizeof(wire));
	tap_ok(bs_cur_fetch_u8(&c, &v8) == 0 && v8 == 0x01 && bs_cur_pos(&c) == 1,
	    "fetch u8");
	tap_ok(bs_cur_fetch_be16(&c, &v16) == 0 && v16 == 0x0203 && bs_cur_pos(&c) == 3,
	    "fetch be16 is big-endian");
	tap_ok(bs_cur_peek_at(&c, 0) == 0xff && bs_cur_peek_at(&c, 3) == 'b' &&
	    bs_cur_peek_at(&c, 4) == -1 && bs_cur_peek_at(&c, (size_t)-1) == -1,
	    "peek_at: bytes ahead, -1 past the end");
	tap_ok(bs_cur_ptr(&c) == wire + 3, "ptr is at the position");
	tap_ok(bs_cur_fetch_bytes(&c, 5, &p) == -ENODATA && p == NULL &&
	    bs_cur_pos(&c) == 3, "fetch bytes past the end: -ENODATA, nothing consumed");
	tap_ok(bs_cur_fetch_bytes(&c, 2, &p) == 0 && p == wire + 3 && bs_cur_pos(&c) == 5,
	    "fetch 2 bytes");
	tap_ok(bs_cur_consume(&c, 3) == -ENODATA && bs_cur_pos(&c) == 5,
	    "consume past the end: -ENODATA, nothing consumed");
	tap_ok(bs_cur_consume(&c, 1) == 0 && bs_cur_peek(&c) == 'b', "consume 1");
	v16 = 7;
	tap_ok(bs_cur_fetch_be16(&c, &v16) == -ENODATA && v16 == 7 && bs_cur_pos(&c) == 6,
	    "be16 with one byte left: -ENODATA, nothing consumed");
	tap_ok(bs_cur_fetch_u8(&c, &v8) == 0 && v8 == 'b' && bs_cur_left(&c) == 0,
	    "fetch the last byte");
	v8 = 7;
	tap_ok(bs_cur_fetch_u8(&c, &v8) == -ENODATA && v8 == 7, "u8 at the end: -ENODATA");
	tap_ok(bs_cur_fetch_bytes(&c, 0, &p) == 0 && p == wire + sizeof(wire),
	    "zero bytes at the end");
	tap_ok(bs_cur_set_pos(&c, sizeof(wire) + 1) == -ERANGE &&
	    bs_cur_pos(&c) == sizeof(wire), "set_pos past the end: -ERANGE, unchanged");
	tap_ok(bs_cur_set_pos(&c, 1) == 0 && bs_cur_peek(&c) == 0x02, "set_pos back");
	tap_ok(bs_cur_set_pos(&c, sizeof(wire)) == 0 && bs_cur_peek(&c) == -1,
	    "set_pos to the end");
}

/* A literal: matched, still possible with more bytes, or not there. */
static void
test_expect(void)
{
	struct bs_cursor c;

	bs_cur_init(&c, "HTTP/1.1", 8);
	tap_ok(bs_cur_expect(&c, "HTTP/1.", 7) == 0 && bs_cur_peek(&c) == '1',
	    "expect a literal: consumed");
	bs_cur_init(&c, "HTTP/", 5);
	tap_ok(bs_cur_expect(&c, "HTTP/1.", 7) == -ENODATA && bs_cur_pos(&c) == 0,
	    "a proper prefix: -ENODATA, nothing consumed");
	bs_cur_init(&c, "HTTX/1.1", 8);
	tap_ok(bs_cur_expect(&c, "HTTP/1.", 7) == -EINVAL && bs_cur_pos(&c) == 0,
	    "a mismatch: -EINVAL, nothing consumed");
	bs_cur_init(&c, "HTX", 3);
	tap_ok(bs_cur_expect(&c, "HTTP/1.", 7) == -EINVAL && bs_cur_pos(&c) == 0,
	    "a short mismatch: -EINVAL");
	bs_cur_init(&c, "", 0);
	tap_ok(bs_cur_expect(&c, "HTTP/1.", 7) == -ENODATA, "nothing yet: -ENODATA");
	bs_cur_init(&c, "a\0b", 3);
	tap_ok(bs_cur_expect(&c, "a\0b", 3) == 0 && bs_cur_left(&c) == 0,
	    "a literal with a NUL byte");
}

int
main(void)
{
	test_num();
	test_port();
	test_cursor();
	test_fetch();
	test_expect();
	return tap_done();
}
