/*
 * tests/unit/test-socks.c: the SOCKS5 parser (proxy/proto/socks.h), one case
 * table for requests: each is fed whole and then one byte more at a time
 * (every prefix must ask for more), and must give its result, command,
 * host, port and reply code.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conf/decide.h"
#include "proxy/proto/socks.h"
#include "tests/unit/tap.h"

struct rcase {
	const char *what;
	const char *bytes;
	size_t len;
	int rc, cmd, rep;
	const char *host;
	unsigned port;
};

#define B(s) s, sizeof(s) - 1

static const struct rcase rcases[] = {
	{ "CONNECT to a name", B("\x05\x01\x00\x03\x0c" "Allowed.Test" "\x01\xbb"), PX_SOCKS_OK, 1, 0,
	  "allowed.test", 443 },
	{ "CONNECT to an IPv4 literal", B("\x05\x01\x00\x01\x0a\xc8\x01\x02\x00\x50"), PX_SOCKS_OK, 1, 0,
	  "10.200.1.2", 80 },
	{ "CONNECT to an IPv6 literal",
	  B("\x05\x01\x00\x04\xfd\x00\x02\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x16"),
	  PX_SOCKS_OK, 1, 0, "fd00:200:1::2", 22 },
	{ "a name that is a literal is the literal", B("\x05\x01\x00\x03\x07" "1.2.3.4" "\x00\x50"),
	  PX_SOCKS_OK, 1, 0, "1.2.3.4", 80 },
	{ "BIND is parsed (the caller refuses it)", B("\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00"),
	  PX_SOCKS_OK, 2, 0, "0.0.0.0", 0 },
	{ "UDP ASSOCIATE to 0.0.0.0:0 is parsed", B("\x05\x03\x00\x01\x00\x00\x00\x00\x00\x00"),
	  PX_SOCKS_OK, 3, 0, "0.0.0.0", 0 },
	{ "another version", B("\x04\x01\x00\x01\x01\x02\x03\x04\x00\x50"), PX_SOCKS_BAD, 0,
	  PX_SOCKS_REP_FAILURE, NULL, 0 },
	{ "a reserved byte set", B("\x05\x01\x01\x01\x01\x02\x03\x04\x00\x50"), PX_SOCKS_BAD, 0,
	  PX_SOCKS_REP_FAILURE, NULL, 0 },
	{ "an unknown address type", B("\x05\x01\x00\x07xxxxxx"), PX_SOCKS_BAD, 0,
	  PX_SOCKS_REP_ATYP_UNSUPPORTED, NULL, 0 },
	{ "an empty name", B("\x05\x01\x00\x03\x00\x00\x50"), PX_SOCKS_BAD, 0, PX_SOCKS_REP_FAILURE, NULL, 0 },
	{ "a name with an empty label", B("\x05\x01\x00\x03\x04" "a..b" "\x00\x50"), PX_SOCKS_BAD, 0,
	  PX_SOCKS_REP_FAILURE, NULL, 0 },
	{ "a name with CR LF", B("\x05\x01\x00\x03\x05" "a\r\nbc" "\x00\x50"), PX_SOCKS_BAD, 0,
	  PX_SOCKS_REP_FAILURE, NULL, 0 },
	{ "a non-canonical IPv4 spelled as a name", B("\x05\x01\x00\x03\x05" "127.1" "\x00\x50"),
	  PX_SOCKS_BAD, 0, PX_SOCKS_REP_FAILURE, NULL, 0 },
	{ "CONNECT to port 0", B("\x05\x01\x00\x03\x01" "a" "\x00\x00"), PX_SOCKS_BAD, 0,
	  PX_SOCKS_REP_FAILURE, NULL, 0 },
};

int
main(void)
{
	struct px_socks_request req;
	size_t i, k, used, u;
	unsigned char r[PX_SOCKS_REPLY_LEN];
	const char *why;
	int rep, na, rc;
	char h[CF_HOST_TEXT_MAX];

	for (i = 0; i < sizeof(rcases) / sizeof(rcases[0]); i++) {
		const struct rcase *t = &rcases[i];
		int prefixes_ok = 1;

		/* One byte more at a time: every prefix asks for more, except
		 * where a refusal can already be told (BAD early is fine). */
		for (k = 0; k < t->len; k++) {
			rc = px_socks_request((const unsigned char *)t->bytes, k, &u, &req, &rep, &why);
			if (rc == PX_SOCKS_OK || (rc == PX_SOCKS_BAD && t->rc != PX_SOCKS_BAD))
				prefixes_ok = 0;
			if (rc != PX_SOCKS_INCOMPLETE)
				break;
		}
		rep = -1;
		why = NULL;
		used = 0;
		rc = px_socks_request((const unsigned char *)t->bytes, t->len, &used, &req, &rep, &why);
		if (t->rc == PX_SOCKS_OK) {
			cf_host_format(&req.host, h, sizeof(h));
			tap_ok(rc == PX_SOCKS_OK && prefixes_ok && used == t->len && req.cmd == t->cmd &&
			    strcmp(req.host.name, t->host) == 0 && req.port == t->port,
			    "%s (%s:%u, %zu bytes)", t->what, h, req.port, used);
		} else {
			tap_ok(rc == PX_SOCKS_BAD && prefixes_ok && rep == t->rep && why != NULL,
			    "%s: refused, reply %d (%s)", t->what, rep, why ? why : "-");
		}
	}

	/* Greetings. */
	tap_ok(px_socks_greeting((const unsigned char *)"\x05\x02\x02\x00", 4, &used, &na, &why) ==
	    PX_SOCKS_OK && used == 4 && na == 1, "a greeting offering 0x00 among others");
	tap_ok(px_socks_greeting((const unsigned char *)"\x05\x01\x02", 3, &used, &na, &why) ==
	    PX_SOCKS_OK && na == 0, "a greeting without 0x00 is taken, with no method to choose");
	tap_ok(px_socks_greeting((const unsigned char *)"\x05\x00", 2, &used, &na, &why) == PX_SOCKS_BAD,
	    "a greeting with no method is refused");
	tap_ok(px_socks_greeting((const unsigned char *)"\x05\x03\x00\x01", 4, &used, &na, &why) ==
	    PX_SOCKS_INCOMPLETE, "a greeting cut short asks for more");
	tap_ok(px_socks_greeting((const unsigned char *)"", 0, &used, &na, &why) == PX_SOCKS_INCOMPLETE,
	    "nothing yet asks for more");

	/* Replies and reply codes. */
	tap_ok(px_socks_reply(r, PX_SOCKS_REP_NOT_ALLOWED) == 10 &&
	    memcmp(r, "\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10) == 0,
	    "a reply names 0.0.0.0:0");
	tap_ok(px_socks_rep_for(403, CF_R_PRIVATE_ADDRESS) == 2 && px_socks_rep_for(403, CF_R_SNI_MISMATCH) == 2,
	    "every 403 is 0x02");
	tap_ok(px_socks_rep_for(502, CF_R_DNS_FAILURE) == 4 && px_socks_rep_for(504, CF_R_TIMEOUT) == 4,
	    "no name, or a connect timeout, is 0x04");
	tap_ok(px_socks_rep_for(408, CF_R_TIMEOUT) == 1 && px_socks_rep_for(400, CF_R_BAD_REQUEST) == 1,
	    "a slow or malformed request is 0x01");
	return tap_done();
}
