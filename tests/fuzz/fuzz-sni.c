/*
 * tests/fuzz/fuzz-sni.c: the ClientHello inspector over arbitrary client
 * streams.  The first input byte is the segment size (0 meaning 256); the
 * rest is the stream, fed in segments of that size.
 * Invariants checked: the verdict does not depend on how the stream is
 * segmented (the same bytes fed whole give the same result and the same
 * name); an accepted server_name is a name in normal form; a refusal says
 * why; a final verdict is sticky; OpenSSL's error queue is left empty;
 * the ALPN offer is known exactly when a ClientHello is, holds only the
 * PX_SNI_ALPN_* bits and does not depend on the segmentation either.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "conf/host.h"
#include "proxy/proto/sni.h"

/* Small enough that inputs reach PX_SNI_TOO_BIG, big enough for real
 * ClientHellos (curl's is 517 bytes). */
#define FUZZ_MAX_BYTES 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct px_sni *a = NULL, *b = NULL;
	enum px_sni_result ra = PX_SNI_NEED_MORE, rb;
	struct cf_host ha, hb, again;
	const char *why;
	size_t step, off, n;
	int na, nb;

	if (size < 1)
		return 0;
	step = data[0] ? data[0] : 256;
	data++;
	size--;
	a = px_sni_new(FUZZ_MAX_BYTES);
	b = px_sni_new(FUZZ_MAX_BYTES);
	if (a == NULL || b == NULL)
		goto out; /* out of memory is not a finding */

	for (off = 0; off < size; off += n) {
		n = size - off < step ? size - off : step;
		ra = px_sni_feed(a, data + off, n);
		if (ra != PX_SNI_NEED_MORE)
			break;
	}
	rb = px_sni_feed(b, data, size);
	if (ra != rb)
		abort();
	if (px_sni_feed(a, NULL, 0) != ra)
		abort();
	/* A final verdict ignores whatever comes after. */
	if (ra != PX_SNI_NEED_MORE && px_sni_feed(a, data, size) != ra)
		abort();
	if (ERR_peek_error() != 0)
		abort();

	why = px_sni_why(a);
	if (ra == PX_SNI_HELLO || ra == PX_SNI_NEED_MORE) {
		if (why != NULL)
			abort();
	} else if (why == NULL || why[0] == '\0') {
		abort();
	}
	na = px_sni_alpn(a);
	if (na != px_sni_alpn(b) || (ra == PX_SNI_HELLO ?
	    (na < 0 || (na & ~(PX_SNI_ALPN_H2 | PX_SNI_ALPN_HTTP11)) != 0) : na != -EINVAL))
		abort();
	na = px_sni_name(a, &ha);
	nb = px_sni_name(b, &hb);
	if (na != nb || (ra == PX_SNI_HELLO ? na < 0 : na != -EINVAL))
		abort();
	if (na == 1) {
		if (!cf_host_equal(&ha, &hb) || ha.kind != CF_HOST_NAME)
			abort();
		/* The normal form is a fixed point of the normaliser. */
		if (cf_host_parse(ha.name, strlen(ha.name), CF_HOST_NO_IP, &again,
		    &why) != 0 || !cf_host_equal(&ha, &again))
			abort();
	}
out:
	px_sni_free(a);
	px_sni_free(b);
	return 0;
}
