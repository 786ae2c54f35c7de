/*
 * tests/fuzz/fuzz-unix-names.c: the parser of /proc/net/unix tables
 * (sidecar/unixnames.c, sc_unixnames_parse).  The table is the kernel's
 * text, but every Path in it was chosen by whoever bound that socket, any
 * local user.  Each name handed out must lie inside the input, be
 * absolute, hold no NUL, and fit a sockaddr_un (108 bytes, which Linux
 * allows without a terminating NUL).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "sidecar/unixnames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
check_name(const char *path, size_t len, void *arg)
{
	(void)arg;
	if (len == 0 || path[0] != '/' || strlen(path) != len ||
	    len > sizeof(((struct sockaddr_un *)0)->sun_path))
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;

	if (size > 1 << 20)
		return 0;
	/* An exact-size copy, so ASan sees any read past the table. */
	buf = malloc(size ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	(void)sc_unixnames_parse(buf, size, check_name, NULL);
	free(buf);
	return 0;
}
