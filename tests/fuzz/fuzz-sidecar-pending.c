/*
 * tests/fuzz/fuzz-sidecar-pending.c: what `postern-sidecar ask` parses
 * from a run's admin socket (sidecar/pending.c): the JSON of GET /pending
 * (the response head before it is base/reply's, fuzzed by
 * fuzz-bridge-forward).  The engine writes it, but the
 * names and paths in it are the sandboxed command's.  Every string handed
 * out must be NUL-terminated within its field and printable ASCII only
 * (it is shown on a terminal), a string cut short said so, and no more
 * entries than asked for.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sidecar/pending.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_str(const char *s, size_t size)
{
	size_t n = strnlen(s, size), i;

	if (n == size)
		abort();
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sc_pending out[4];
	char *buf;
	int n, i;

	if (size > 1 << 20)
		return 0;
	buf = malloc(size ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	n = sc_pending_parse(buf, size, out, 4);
	if (n > 4)
		abort();
	for (i = 0; i < n; i++) {
		check_str(out[i].session, sizeof(out[i].session));
		check_str(out[i].host, sizeof(out[i].host));
		check_str(out[i].method, sizeof(out[i].method));
		check_str(out[i].path, sizeof(out[i].path));
		if (out[i].port > 65535 || (out[i].cut != 0 && out[i].cut != 1))
			abort();
	}
	free(buf);
	return 0;
}
