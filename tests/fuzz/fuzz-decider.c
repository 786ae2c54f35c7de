/*
 * tests/fuzz/fuzz-decider.c: the decider's answers (proxy/proto/decider.h)
 * over arbitrary bytes: one answer line, then the same bytes as an HTTP
 * response, read whole and at EOF.  Invariants checked: a refusal says
 * why; a taken answer has an id from 1, a ttl within bounds, and a reason
 * of printable ASCII within its bound; a body found lies inside the bytes
 * given; a whole response is found the same with EOF set.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/decider.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct px_decider_answer a;
	const char *why = NULL, *body = NULL, *b2 = NULL;
	size_t blen = 0, b2len = 0, i;
	int rc;

	rc = px_decider_answer_parse((const char *)data, size, &a, &why);
	if (rc != 0 && why == NULL)
		abort();
	if (rc == 0) {
		if (a.id < 1 || a.ttl > PX_DECIDER_TTL_MAX || (a.allow != 0 && a.allow != 1))
			abort();
		if (strlen(a.reason) > PX_DECIDER_REASON_MAX)
			abort();
		for (i = 0; a.reason[i] != '\0'; i++)
			if (a.reason[i] < 0x20 || a.reason[i] > 0x7e)
				abort();
	}
	rc = px_decider_http_body((const char *)data, size, 0, &body, &blen, &why);
	if (rc < 0 && why == NULL)
		abort();
	if (rc == 1) {
		if (body < (const char *)data || body + blen > (const char *)data + size)
			abort();
		if (px_decider_http_body((const char *)data, size, 1, &b2, &b2len, &why) != 1 ||
		    b2 != body || b2len != blen)
			abort();
	}
	rc = px_decider_http_body((const char *)data, size, 1, &body, &blen, &why);
	if (rc == 0 || (rc < 0 && why == NULL))
		abort();
	if (rc == 1 && (body < (const char *)data || body + blen > (const char *)data + size))
		abort();
	return 0;
}
