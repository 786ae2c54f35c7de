/*
 * tests/fuzz/fuzz-sigv4.c: the SigV4 parsers and the canonical request
 * (proxy/proto/sigv4.h) on arbitrary bytes.  The input is read three ways:
 * whole as an Authorization value; whole as a request target (presigned
 * form, then set_param); and as "TARGET\nHEADERS..." where each further
 * line "NAME:VALUE" is a header, signed by the names of every header and
 * "host", for the canonical request of both path rules.  Invariants: a
 * parse that succeeds leaves NUL-terminated fields of the documented
 * shapes (a 64-hex signature, an 8-digit date); a refusal always says why;
 * the canonical request has no byte past its length; a signature is 64
 * hex digits.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/sigv4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_auth(const struct px_sigv4_auth *a)
{
	if (strlen(a->signature) != 64 || strlen(a->cred.date) != 8 || a->cred.key_id[0] == '\0' ||
	    strlen(a->signed_headers) == 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *why = NULL, *nl;
	struct px_sigv4_header h[16];
	struct px_sigv4_auth a;
	char signed_h[PX_SIGV4_SIGNED_MAX + 1], sig[65];
	size_t nh = 0, tlen, len = 0, sl = 0;
	char *cr, *t;
	int r;

	r = px_sigv4_parse_header(s, size, &a, &why);
	if (r == 1)
		check_auth(&a);
	else if (r < 0 && why == NULL)
		abort();
	why = NULL;
	r = px_sigv4_parse_query(s, size, &a, &why);
	if (r == 1) {
		check_auth(&a);
		if (strlen(a.amz_date) != 16)
			abort();
	} else if (r < 0 && why == NULL) {
		abort();
	}
	t = px_sigv4_set_param(s, size, "X-Amz-Signature", "00", &len);
	if (t != NULL && t[len] != '\0')
		abort();
	free(t);

	nl = memchr(s, '\n', size);
	tlen = nl != NULL ? (size_t)(nl - s) : size;
	strcpy(signed_h, "host");
	sl = 4;
	h[nh].name = "Host";
	h[nh].name_len = 4;
	h[nh].value = "example.amazonaws.com";
	h[nh++].value_len = 21;
	while (nl != NULL && nh < 16) {
		const char *line = nl + 1, *end = s + size, *colon;
		size_t ll, k;

		nl = memchr(line, '\n', (size_t)(end - line));
		ll = nl != NULL ? (size_t)(nl - line) : (size_t)(end - line);
		colon = memchr(line, ':', ll);
		if (colon == NULL || colon == line)
			continue;
		for (k = 0; k < (size_t)(colon - line); k++)
			if (!((line[k] >= 'a' && line[k] <= 'z') || line[k] == '-'))
				break;
		if (k < (size_t)(colon - line) || sl + 1 + k >= sizeof(signed_h))
			continue;
		h[nh].name = line;
		h[nh].name_len = k;
		h[nh].value = colon + 1;
		h[nh++].value_len = ll - k - 1;
		signed_h[sl++] = ';';
		memcpy(signed_h + sl, line, k);
		sl += k;
		signed_h[sl] = '\0';
	}
	for (r = 0; r < 2; r++) {
		why = NULL;
		cr = px_sigv4_canonical("GET", 3, s, tlen, h, nh, signed_h, PX_SIGV4_UNSIGNED, r, r, &len, &why);
		if (cr == NULL) {
			if (why == NULL)
				abort();
			continue;
		}
		if (strlen(cr) > len)
			abort();
		{
			struct px_sigv4_cred c;
			memset(&c, 0, sizeof(c));
			strcpy(c.key_id, "AKIDEXAMPLE");
			strcpy(c.date, "20150830");
			strcpy(c.region, "us-east-1");
			strcpy(c.service, "s3");
			if (px_sigv4_sign("k", 1, "20150830T123600Z", &c, cr, len, sig) != 0 || strlen(sig) != 64)
				abort();
		}
		free(cr);
	}
	return 0;
}
