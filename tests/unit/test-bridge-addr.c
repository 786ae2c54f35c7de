/*
 * tests/unit/test-bridge-addr.c: postern-bridge's --listen parser and the
 * printer behind its proxy URLs.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "bridge/addr.h"
#include "tests/unit/tap.h"

struct addr_case {
	const char *in;
	int ok;
	const char *out; /* br_addr_format() of the result */
};

static const struct addr_case cases[] = {
	{ "127.0.0.1:3128", 1, "127.0.0.1:3128" },
	{ "127.0.0.1:0", 1, "127.0.0.1:0" },
	{ "127.0.0.1:65535", 1, "127.0.0.1:65535" },
	{ "0.0.0.0:80", 1, "0.0.0.0:80" },
	{ "[::1]:3128", 1, "[::1]:3128" },
	{ "[fd00:200::1]:8080", 1, "[fd00:200::1]:8080" },
	{ "[0:0:0:0:0:0:0:1]:1", 1, "[::1]:1" },
	{ "127.0.0.1:65536", 0, NULL },
	{ "127.0.0.1:99999", 0, NULL },
	{ "127.0.0.1:123456", 0, NULL },
	{ "127.0.0.1:03128", 0, NULL },
	{ "127.0.0.1:+3128", 0, NULL },
	{ "127.0.0.1:-1", 0, NULL },
	{ "127.0.0.1: 3128", 0, NULL },
	{ "127.0.0.1:3128 ", 0, NULL },
	{ "127.0.0.1:3128x", 0, NULL },
	{ "127.0.0.1:", 0, NULL },
	{ "127.0.0.1", 0, NULL },
	{ ":3128", 0, NULL },
	{ "3128", 0, NULL },
	{ "", 0, NULL },
	{ "localhost:3128", 0, NULL },
	{ "127.1:3128", 0, NULL },
	{ "0177.0.0.1:3128", 0, NULL },
	{ "0x7f.0.0.1:3128", 0, NULL },
	{ "2130706433:3128", 0, NULL },
	{ "127.0.0.01:3128", 0, NULL },
	{ "::1:3128", 0, NULL },
	{ "[::1]3128", 0, NULL },
	{ "[::1]", 0, NULL },
	{ "[::1:3128", 0, NULL },
	{ "[]:3128", 0, NULL },
	{ "[127.0.0.1]:3128", 0, NULL },
	{ "[fe80::1%lo]:3128", 0, NULL },
	{ "[::1]:3128:1", 0, NULL },
	{ "[::1]]:3128", 0, NULL },
	{ "[0000:0000:0000:0000:0000:0000:0000:0000:0001]:1", 0, NULL },
	{ "[::1]:3128\n", 0, NULL },
};

/* The case's input, printable, for the TAP line. */
static const char *
shown(const char *in, char *buf, size_t size)
{
	size_t i;

	for (i = 0; in[i] != '\0' && i + 1 < size; i++)
		buf[i] = (in[i] < 0x20 || in[i] == 0x7f) ? '?' : in[i];
	buf[i] = '\0';
	return buf;
}

int
main(void)
{
	char show[80];
	struct sockaddr_storage ss;
	struct sockaddr_in sin;
	char buf[BR_ADDR_TEXT_MAX], small[8];
	const char *why;
	socklen_t len;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct addr_case *c = &cases[i];

		why = NULL;
		memset(&ss, 0xa5, sizeof(ss));
		len = 0;
		r = br_addr_parse(c->in, &ss, &len, &why);
		if (!c->ok) {
			tap_ok(r == -EINVAL && why != NULL && len == 0,
			    "refused: \"%s\" (%s)", shown(c->in, show, sizeof(show)),
			    why ? why : "no reason");
			continue;
		}
		buf[0] = '\0';
		if (r == 0)
			r = br_addr_format((struct sockaddr *)&ss, buf, sizeof(buf));
		tap_ok(r == 0 && strcmp(buf, c->out) == 0 &&
		    len == (ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
		    sizeof(struct sockaddr_in6)),
		    "accepted: \"%s\" -> \"%s\"", c->in, buf);
	}
	tap_ok(br_addr_parse(NULL, &ss, &len, &why) == -EINVAL, "NULL refused");

	/* The printer: a short buffer, and a family it does not know. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(3128);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	tap_ok(br_addr_format((struct sockaddr *)&sin, small, sizeof(small)) == -ENOSPC,
	    "format: -ENOSPC when the buffer is short");
	sin.sin_family = AF_UNIX;
	tap_ok(br_addr_format((struct sockaddr *)&sin, buf, sizeof(buf)) == -EINVAL,
	    "format: -EINVAL for another family");
	return tap_done();
}
