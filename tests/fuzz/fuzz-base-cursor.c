/*
 * tests/fuzz/fuzz-base-cursor.c: the shared number parser and cursor.
 * Invariants checked: an accepted number prints back to the same bytes
 * (unless leading zeros were allowed) and is within its maximum; the
 * cursor never moves past its end and consumes nothing on failure; a
 * fetch returns the bytes at the position.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t maxes[] = { 0, 9, 255, 65535, 4294967295u, UINT64_MAX };
	struct bs_cursor c;
	char back[32];
	uint64_t v;
	uint16_t port;
	size_t i, before;
	int rc;

	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		rc = bs_num_parse((const char *)data, size, maxes[i], 0, &v);
		if (rc == 0) {
			snprintf(back, sizeof(back), "%" PRIu64, v);
			if (v > maxes[i] || strlen(back) != size || memcmp(back, data, size) != 0)
				abort();
		} else if (rc != -EINVAL && rc != -ERANGE)
			abort();
		rc = bs_num_parse((const char *)data, size, maxes[i], BS_NUM_ZEROS, &v);
		if (rc == 0 && v > maxes[i])
			abort();
	}
	if (bs_port_parse((const char *)data, size, &port) == 0) {
		snprintf(back, sizeof(back), "%u", port);
		if (strlen(back) != size || memcmp(back, data, size) != 0)
			abort();
	}
	/* Walk the bytes as the pid and id-map readers do: numbers between
	 * blanks, anything else skipped a byte at a time. */
	bs_cur_init(&c, data, size);
	while (bs_cur_left(&c) > 0) {
		before = bs_cur_left(&c);
		bs_cur_skip(&c, " \t");
		bs_cur_tag(&c);
		rc = bs_cur_num(&c, 1u << 30, &v);
		if (rc == 0 && v > 1u << 30)
			abort();
		if (rc < 0) {
			/* Nothing consumed on failure. */
			if (c.off != c.tag)
				abort();
			if (bs_cur_left(&c) > 0)
				c.off++;
		}
		if (bs_cur_left(&c) >= before || c.off > c.len)
			abort();
	}
	/* Walk them as the binary parsers do, each byte choosing the next
	 * fetch: a fetch returns the bytes at the position and consumes
	 * them, or fails and consumes nothing. */
	bs_cur_init(&c, data, size);
	while (bs_cur_left(&c) > 0) {
		const unsigned char *p = NULL;
		uint16_t v16;
		uint8_t op, v8;
		size_t at;

		if (bs_cur_fetch_u8(&c, &op) != 0 || op != data[c.off - 1])
			abort();
		at = bs_cur_pos(&c);
		switch (op % 5) {
		case 0:
			rc = bs_cur_fetch_be16(&c, &v16);
			if (rc == 0 && v16 != ((data[at] << 8) | data[at + 1]))
				abort();
			break;
		case 1:
			rc = bs_cur_fetch_bytes(&c, op / 5, &p);
			if (rc == 0 && p != data + at)
				abort();
			break;
		case 2:
			rc = bs_cur_expect(&c, "\r\n", 2);
			if (rc == 0 && memcmp(data + at, "\r\n", 2) != 0)
				abort();
			if (rc == -ENODATA && (size - at >= 2 || (size - at == 1 && data[at] != '\r')))
				abort();
			break;
		case 3:
			rc = bs_cur_consume(&c, op / 5);
			if (bs_cur_peek_at(&c, 0) != bs_cur_peek(&c))
				abort();
			break;
		default:
			rc = bs_cur_fetch_u8(&c, &v8);
			if (rc == 0 && v8 != data[at])
				abort();
			break;
		}
		if (rc != 0 && bs_cur_pos(&c) != at)
			abort();
		if (rc != 0 && rc != -ENODATA && rc != -EINVAL)
			abort();
		if (c.off > c.len || bs_cur_ptr(&c) != data + c.off)
			abort();
	}
	return 0;
}
