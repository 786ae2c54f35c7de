/*
 * tests/fuzz/fuzz-socks.c: the SOCKS5 parser (proxy/proto/socks.h) over arbitrary
 * client streams: a greeting, then a request, as accept.c takes them.
 * Invariants checked: a message is taken whole or not at all, never past
 * the bytes given; every prefix of a message taken whole is INCOMPLETE
 * (so bytes arriving one at a time give the same result as all at once);
 * a refusal says why and names a reply code of RFC 1928 §6; a host taken
 * is in normal form (a fixed point of the normaliser); the reply is the
 * same ten bytes whatever the code.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/host.h"
#include "proxy/proto/socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
greeting(const uint8_t *d, size_t n, size_t *used, int *noauth)
{
	const char *why = NULL;
	size_t k, u;
	int rc, na, r;

	rc = px_socks_greeting(d, n, used, noauth, &why);
	if (rc == PX_SOCKS_BAD && (why == NULL || why[0] == '\0'))
		abort();
	if (rc == PX_SOCKS_OK) {
		if (*used == 0 || *used > n || *used > 257)
			abort();
		/* Every shorter prefix asks for more. */
		for (k = 0; k < *used; k++)
			if ((r = px_socks_greeting(d, k, &u, &na, &why)) != PX_SOCKS_INCOMPLETE)
				abort();
	}
	return rc;
}

static void
request(const uint8_t *d, size_t n)
{
	struct px_socks_request req, again;
	struct cf_host h;
	const char *why = NULL, *hwhy = NULL;
	size_t used = 0, k, u;
	int rc, rep = -1, r2;

	rc = px_socks_request(d, n, &used, &req, &rep, &why);
	if (rc == PX_SOCKS_BAD) {
		if (why == NULL || why[0] == '\0' ||
		    (rep != PX_SOCKS_REP_FAILURE && rep != PX_SOCKS_REP_ATYP_UNSUPPORTED))
			abort();
		return;
	}
	if (rc != PX_SOCKS_OK)
		return;
	if (used < 7 || used > n || used > 262)
		abort();
	for (k = 0; k < used; k++)
		if (px_socks_request(d, k, &u, &again, &r2, &why) != PX_SOCKS_INCOMPLETE)
			abort();
	if (req.cmd == PX_SOCKS_CONNECT && req.port == 0)
		abort();
	if (req.atyp != 0x01 && req.atyp != 0x03 && req.atyp != 0x04)
		abort();
	if (cf_host_parse(req.host.name, strlen(req.host.name), 0, &h, &hwhy) == 0) {
		if (!cf_host_equal(&h, &req.host))
			abort();
	} else if (req.host.kind != CF_HOST_IPV6) {
		/* An IPv6 host's normal form has no brackets; any other must
		 * parse as itself. */
		abort();
	}
	if (strcmp(px_socks_cmd_name(req.cmd), "") == 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char r1[PX_SOCKS_REPLY_LEN], r2[PX_SOCKS_REPLY_LEN];
	size_t used = 0;
	int noauth = 0;

	if (px_socks_reply(r1, size & 0xff) != PX_SOCKS_REPLY_LEN ||
	    px_socks_reply(r2, 0) != PX_SOCKS_REPLY_LEN || r1[0] != 5 || r1[1] != (size & 0xff) ||
	    memcmp(r1 + 2, r2 + 2, PX_SOCKS_REPLY_LEN - 2) != 0)
		abort();
	if (greeting(data, size, &used, &noauth) == PX_SOCKS_OK)
		request(data + used, size - used);
	/* The request parser alone, on the whole input too. */
	request(data, size);
	return 0;
}
