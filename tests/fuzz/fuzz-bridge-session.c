/*
 * tests/fuzz/fuzz-bridge-session.c: the bridge's parser of the proxy's
 * session info, as a body and as a whole HTTP answer.  Invariants
 * checked: an accepted body's names and values obey the protocol's
 * grammar and caps, its CA is a suffix of the input that starts with a
 * BEGIN line and ends in LF; the answer parser returns one of its three
 * results and a session exactly when it says 1; the parse of a body is
 * the same whether or not it is wrapped in a 200.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const struct br_session *s, const char *buf, size_t size)
{
	const char *name, *value, *ca;
	size_t i, j, k, nl, vl;

	if (br_session_nenv(s) > BR_SESSION_ENV_MAX)
		abort();
	for (i = 0; i < br_session_nenv(s); i++) {
		br_session_env(s, i, &name, &value);
		nl = strlen(name);
		vl = strlen(value);
		if (nl == 0 || nl > BR_SESSION_NAME_MAX || vl == 0 || vl > BR_SESSION_VALUE_MAX)
			abort();
		if (name[0] >= '0' && name[0] <= '9')
			abort();
		for (j = 0; j < nl; j++)
			if (!((name[j] >= 'A' && name[j] <= 'Z') || (name[j] >= 'a' && name[j] <= 'z') ||
			    (name[j] >= '0' && name[j] <= '9') || name[j] == '_'))
				abort();
		for (j = 0; j < vl; j++)
			if (value[j] < 0x21 || value[j] > 0x7e)
				abort();
		for (k = 0; k < i; k++) {
			const char *n2, *v2;

			br_session_env(s, k, &n2, &v2);
			if (strcmp(n2, name) == 0)
				abort();
		}
	}
	ca = br_session_ca(s);
	if (ca != NULL) {
		k = strlen(ca);
		if (k == 0 || k > size || memcmp(buf + size - k, ca, k) != 0 || ca[k - 1] != '\n' ||
		    strncmp(ca, "-----BEGIN CERTIFICATE-----\n", 28) != 0 ||
		    memchr(ca, '\r', k) != NULL)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *why;
	struct br_session *s = NULL, *s2 = NULL;
	char *wrapped;
	int rc, rc2, status;
	size_t n;

	rc = br_session_parse(buf, size, &s, &why);
	if (rc == 0)
		check(s, buf, size);
	else if (rc != -EINVAL || s != NULL || why == NULL)
		abort();

	/* The same bytes as a 200's body. */
	wrapped = malloc(size + 128);
	if (wrapped == NULL)
		abort();
	n = (size_t)sprintf(wrapped, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", size);
	memcpy(wrapped + n, buf, size);
	rc2 = br_session_response(wrapped, n + size, &status, &s2, &why);
	if ((rc == 0) != (rc2 == 1) || status != 200 || (rc2 == 1) != (s2 != NULL))
		abort();
	if (s != NULL && s2 != NULL &&
	    (br_session_nenv(s) != br_session_nenv(s2) ||
	    (br_session_ca(s) == NULL) != (br_session_ca(s2) == NULL)))
		abort();
	br_session_free(s2);
	s2 = NULL;
	free(wrapped);
	br_session_free(s);

	/* And as a whole answer. */
	rc = br_session_response(buf, size, &status, &s2, &why);
	if (rc != 1 && rc != 0 && rc != -EINVAL)
		abort();
	if ((rc == 1) != (s2 != NULL))
		abort();
	if (rc == 1)
		check(s2, buf, size);
	br_session_free(s2);
	return 0;
}
