/*
 * tests/unit/test-ctl.c: the response parser of postern-proxy ctl, which
 * reads whatever answers on the admin socket path and so must not trust it.
 */
#include "config.h"

#include <string.h>

#include "proxy/ctl.h"
#include "tests/unit/tap.h"

struct rcase {
	const char *resp;
	int ok;           /* parses */
	int status;
	const char *body;
};

static const struct rcase cases[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello\n", 1, 200, "hello\n" },
	{ "HTTP/1.0 422 Unprocessable Entity\r\n\r\n", 1, 422, "" },
	{ "HTTP/1.1 404\r\n\r\nx", 1, 404, "x" },
	{ "HTTP/1.1 200 OK\r\nA: b\r\n\r\n\r\n\r\n", 1, 200, "\r\n\r\n" },
	/* Not HTTP/1.x, or a status that is not three digits. */
	{ "HTTP/2 200 OK\r\n\r\n", 0, 0, NULL },
	{ "HTTP/1.1 20 OK\r\n\r\n", 0, 0, NULL },
	{ "HTTP/1.1 2000 OK\r\n\r\n", 0, 0, NULL },
	{ "HTTP/1.1 -20 OK\r\n\r\n", 0, 0, NULL },
	{ "HTTP/1.1  200 OK\r\n\r\n", 0, 0, NULL },
	{ "http/1.1 200 OK\r\n\r\n", 0, 0, NULL },
	{ "SSH-2.0-OpenSSH_9.2\r\n", 0, 0, NULL },
	/* A head that never ends is incomplete, not a response. */
	{ "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n", 0, 0, NULL },
	{ "HTTP/1.1 200 OK\n\nbody", 0, 0, NULL },
	{ "", 0, 0, NULL },
	{ "HTTP/1.1 200", 0, 0, NULL },
};

int
main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];
		const char *body = NULL;
		size_t blen = 0;
		int status = -1;
		int rc = px_ctl_parse_response(c->resp, strlen(c->resp), &status, &body, &blen);
		if (!c->ok) {
			tap_ok(rc != 0, "refused: %.30s", c->resp);
			continue;
		}
		tap_ok(rc == 0 && status == c->status && blen == strlen(c->body) &&
		    memcmp(body, c->body, blen) == 0, "parsed: %.30s (status %d, %zu body bytes)",
		    c->resp, status, blen);
	}
	{
		/* Only LEN bytes are looked at: a terminator past it is unseen. */
		const char *r = "HTTP/1.1 200 OK\r\n\r\nbody";
		const char *body = NULL;
		size_t blen = 0;
		int status = 0;
		tap_ok(px_ctl_parse_response(r, 17, &status, &body, &blen) != 0,
		    "a head cut before its blank line is refused");
	}
	return tap_done();
}
