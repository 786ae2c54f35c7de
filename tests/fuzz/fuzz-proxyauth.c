/*
 * tests/fuzz/fuzz-proxyauth.c: the credentials of an auth=token listener
 * (proxy/proto/proxyauth.h) over arbitrary bytes: the whole input as a
 * Proxy-Authorization value, and as the first bytes of a connection (the
 * preface).  Invariants checked: a credential taken points inside the
 * bytes given (or the decode buffer), its token is never empty, a name is
 * never empty; a refusal says why; a preface taken ends in LF within
 * PX_PROXYAUTH_PREFACE_MAX bytes and every shorter prefix of it asks for
 * more; bytes that do not begin "POSTERN-TOKEN " are never taken.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/proxyauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
inside(const char *p, size_t n, const char *base, size_t len)
{
	if (p < base || p + n > base + len)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data, *why = NULL;
	struct px_proxyauth cr;
	char buf[PX_PROXYAUTH_PREFACE_MAX];
	size_t used = 0, k, u;
	int rc;

	rc = px_proxyauth_header(d, size, buf, sizeof(buf), &cr, &why);
	if (rc == PX_PROXYAUTH_BAD && (why == NULL || why[0] == '\0'))
		abort();
	if (rc == PX_PROXYAUTH_OK) {
		if (cr.token_len == 0 || (cr.name != NULL && cr.name_len == 0))
			abort();
		if (cr.name != NULL) {
			inside(cr.name, cr.name_len, buf, sizeof(buf));
			inside(cr.token, cr.token_len, buf, sizeof(buf));
		} else {
			inside(cr.token, cr.token_len, d, size);
		}
	} else if (rc != PX_PROXYAUTH_BAD) {
		abort();
	}

	why = NULL;
	rc = px_proxyauth_preface(d, size, &used, &cr, &why);
	switch (rc) {
	case PX_PROXYAUTH_NONE:
		if (size >= 14 && memcmp(d, PX_PROXYAUTH_PREFACE, 14) == 0)
			abort();
		break;
	case PX_PROXYAUTH_INCOMPLETE:
		if (size > PX_PROXYAUTH_PREFACE_MAX || memchr(d, '\n', size) != NULL)
			abort();
		break;
	case PX_PROXYAUTH_BAD:
		if (why == NULL || why[0] == '\0')
			abort();
		break;
	case PX_PROXYAUTH_OK:
		if (used == 0 || used > size || used > PX_PROXYAUTH_PREFACE_MAX || d[used - 1] != '\n' ||
		    cr.token_len == 0 || (cr.name != NULL && cr.name_len == 0))
			abort();
		inside(cr.token, cr.token_len, d, used);
		if (memchr(d, '\n', used - 1) != NULL)
			abort();
		for (k = 0; k < used; k++)
			if (px_proxyauth_preface(d, k, &u, &cr, &why) != PX_PROXYAUTH_INCOMPLETE)
				abort();
		break;
	default:
		abort();
	}
	return 0;
}
