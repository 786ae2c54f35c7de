/*
 * tests/fuzz/fuzz-bridge-forward.c: the bridge's reader of the proxy's
 * answer to a --forward CONNECT, and the --forward spec parser.
 * Invariants checked: a complete head lies within the input, ends in an
 * empty line and never grows with more bytes after it; a prefix of input
 * that parses is never refused; an accepted spec re-parses to itself.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/forward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *why;
	struct bs_reply r, r2;
	struct br_forward f, f2;
	char spec[600], esc[128];
	size_t i;
	int rc;

	rc = bs_reply_parse(buf, size, &r);
	if (rc == 1) {
		if (r.head_len < 4 || r.head_len > size ||
		    memcmp(buf + r.head_len - 4, "\r\n\r\n", 4) != 0 ||
		    r.status < 100 || r.status > 999 || strlen(r.reason) >= sizeof(r.reason))
			abort();
		if (bs_reply_parse(buf, r.head_len, &r2) != 1 || r2.head_len != r.head_len ||
		    r2.status != r.status || strcmp(r2.reason, r.reason) != 0)
			abort();
	}
	if (rc >= 0) {
		/* Every prefix is "need more" or the same complete head. */
		for (i = 0; i < size && i < 64; i++)
			if (bs_reply_parse(buf, i, &r2) < 0)
				abort();
	}
	(void)br_forward_escape(buf, size, esc, sizeof(esc));
	if (strlen(esc) >= sizeof(esc))
		abort();

	if (size < sizeof(spec) && memchr(buf, '\0', size) == NULL) {
		memcpy(spec, buf, size);
		spec[size] = '\0';
		if (br_forward_parse(spec, &f, &why) == 0) {
			for (i = 0; f.target[i] != '\0'; i++)
				if (f.target[i] == '\r' || f.target[i] == '\n' || f.target[i] == ' ')
					abort();
			snprintf(spec, sizeof(spec), "%u:%s", f.port, f.target);
			if (br_forward_parse(spec, &f2, &why) != 0 || f2.port != f.port ||
			    strcmp(f2.target, f.target) != 0)
				abort();
		}
	}
	return 0;
}
