/*
 * tests/fuzz/fuzz-host.c: the host normaliser and authority parser.
 * Invariant checked: whatever is accepted re-parses to the same normal form.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_host h, h2;
	uint16_t port;
	const char *why;
	char buf[CF_HOST_TEXT_MAX];

	if (cf_authority_parse((const char *)data, size, 0, &h, &port, &why) == 0) {
		cf_host_format(&h, buf, sizeof(buf));
		if (cf_host_parse(buf, strlen(buf), 0, &h2, &why) != 0 ||
		    !cf_host_equal(&h, &h2))
			abort();
	}
	if (cf_host_parse((const char *)data, size, CF_HOST_NO_IP, &h, &why) == 0 &&
	    h.kind != CF_HOST_NAME)
		abort();
	(void)cf_port_parse((const char *)data, size, &port, &why);
	return 0;
}
