/*
 * tests/unit/test-bridgereply.c: the proxy's answer to a bridge's
 * session request (proxy/proto/bridgereply.c), read back by the bridge's own
 * parser (bridge/session.c): what one renders the other accepts, with
 * the same names, values and CA, and what the renderer refuses it does
 * not write.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "bridge/session.h"
#include "proxy/tls/ca.h"
#include "proxy/proto/bridgereply.h"
#include "tests/unit/tap.h"

/* Render, then parse the whole answer as the bridge does.  Returns the
 * bridge's result (1 on success) and sets *S. */
static int
round_trip(const char *const *names, const char *const *values, size_t n,
    const char *ca, struct br_session **s, int *render_rc)
{
	struct evbuffer *b = evbuffer_new();
	const char *why = NULL;
	size_t len;
	char *flat;
	int status = 0, rc;

	*s = NULL;
	*render_rc = px_bridgereply_render(b, names, values, n, ca);
	len = evbuffer_get_length(b);
	if (*render_rc != 0) {
		evbuffer_free(b);
		return len == 0 ? -1000 : -2000;
	}
	flat = malloc(len + 1);
	evbuffer_remove(b, flat, len);
	evbuffer_free(b);
	rc = br_session_response(flat, len, &status, s, &why);
	if (rc != 1)
		tap_diag("bridge: rc %d status %d: %s", rc, status, why ? why : "");
	free(flat);
	return rc;
}

int
main(void)
{
	static const char *const names[] = { "ANTHROPIC_API_KEY", "GH_TOKEN", "_x" };
	static const char *const values[] = { "sk-ant-api03-AbC_dEf-123", "ghp_0123456789", "~!" };
	const char *hosts[] = { "api.anthropic.com", "github.com" };
	struct br_session *s;
	struct px_ca *ca;
	const char *name, *value, *pem;
	char err[256], *nolf, big[4098];
	int rr, rc;
	size_t i;

	rc = round_trip(names, values, 3, NULL, &s, &rr);
	tap_ok(rr == 0 && rc == 1, "three placeholders, no CA: rendered and accepted");
	if (rc == 1) {
		tap_cmp_int(br_session_nenv(s), "==", 3, "three env lines");
		for (i = 0; i < 3 && i < br_session_nenv(s); i++) {
			br_session_env(s, i, &name, &value);
			tap_ok(strcmp(name, names[i]) == 0 && strcmp(value, values[i]) == 0,
			    "%s=%s in order", name, value);
		}
		tap_ok(br_session_ca(s) == NULL, "no CA");
	}
	br_session_free(s);

	rc = round_trip(NULL, NULL, 0, NULL, &s, &rr);
	tap_ok(rr == 0 && rc == 1 && br_session_nenv(s) == 0, "nothing at all: still a body");
	br_session_free(s);

	ca = px_ca_new("agent", hosts, 2, NULL, err, sizeof(err));
	tap_ok(ca != NULL, "a session CA: %s", ca ? "made" : err);
	if (ca != NULL) {
		pem = px_ca_pem(ca);
		rc = round_trip(names, values, 2, pem, &s, &rr);
		tap_ok(rr == 0 && rc == 1, "placeholders and the session CA: accepted");
		tap_ok(rc == 1 && br_session_ca(s) != NULL && strcmp(br_session_ca(s), pem) == 0,
		    "the CA comes back byte for byte");
		br_session_free(s);

		/* Without its final LF, the renderer adds it. */
		nolf = strdup(pem);
		nolf[strlen(nolf) - 1] = '\0';
		rc = round_trip(NULL, NULL, 0, nolf, &s, &rr);
		tap_ok(rr == 0 && rc == 1 && strcmp(br_session_ca(s), pem) == 0,
		    "a CA without its last LF gets one");
		br_session_free(s);
		free(nolf);
		px_ca_free(ca);
	}

	memset(big, 'v', 4096);
	big[4096] = '\0';
	{
		const char *n1[] = { "BIG" }, *v1[] = { big };

		rc = round_trip(n1, v1, 1, NULL, &s, &rr);
		tap_ok(rr == 0 && rc == 1, "a 4096-byte value round-trips");
		br_session_free(s);
		big[4096] = 'v';
		big[4097] = '\0';
		rc = round_trip(n1, v1, 1, NULL, &s, &rr);
		tap_ok(rr == -EINVAL && rc == -1000, "a 4097-byte value is refused, nothing written");
	}
	{
		static const struct {
			const char *what, *name, *value, *ca;
		} bad[] = {
			{ "a name with '='", "A=B", "v", NULL },
			{ "a name starting with a digit", "1A", "v", NULL },
			{ "an empty name", "", "v", NULL },
			{ "a value with a space", "A", "a b", NULL },
			{ "a value with a LF", "A", "a\nenv B c", NULL },
			{ "an empty value", "A", "", NULL },
			{ "a value with a high byte", "A", "\xc3\xa9", NULL },
			{ "a CA with CR LF", "A", "v", "-----BEGIN CERTIFICATE-----\r\n" },
			{ "an empty CA", "A", "v", "" },
		};
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			const char *n1[] = { bad[i].name }, *v1[] = { bad[i].value };

			rc = round_trip(n1, v1, 1, bad[i].ca, &s, &rr);
			tap_ok(rr == -EINVAL && rc == -1000, "%s is refused, nothing written",
			    bad[i].what);
		}
	}
	{
		const char *n2[] = { "A", "A" }, *v2[] = { "x", "y" };

		rc = round_trip(n2, v2, 2, NULL, &s, &rr);
		tap_ok(rr == -EINVAL && rc == -1000, "a name given twice is refused");
	}
	return tap_done();
}
