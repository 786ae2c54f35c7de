/*
 * tests/unit/test-bridge-forward.c: postern-bridge's --forward spec parser
 * and its reader of the proxy's answer to a CONNECT.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bridge/forward.h"
#include "tests/unit/tap.h"

struct spec_case {
	const char *in;
	unsigned port;
	const char *target; /* NULL: refused */
};

static const struct spec_case specs[] = {
	{ "8099", 8099, "127.0.0.1:8099" },
	{ "1", 1, "127.0.0.1:1" },
	{ "65535", 65535, "127.0.0.1:65535" },
	{ "9000:127.0.0.1:8099", 9000, "127.0.0.1:8099" },
	{ "9000:localhost:8099", 9000, "localhost:8099" },
	{ "9000:hooks.internal:443", 9000, "hooks.internal:443" },
	{ "9000:[::1]:8099", 9000, "[::1]:8099" },
	{ "9000:[fd00:200::1]:80", 9000, "[fd00:200::1]:80" },
	{ "0", 0, NULL },
	{ "", 0, NULL },
	{ "08099", 0, NULL },
	{ "+8099", 0, NULL },
	{ "65536", 0, NULL },
	{ "8099 ", 0, NULL },
	{ "8099:", 0, NULL },
	{ "8099:h", 0, NULL },
	{ "8099:h:", 0, NULL },
	{ "8099::80", 0, NULL },
	{ "8099:h:0", 0, NULL },
	{ "8099:h:80x", 0, NULL },
	/* Nothing that could end the request line or add a header field. */
	{ "8099:a b:80", 0, NULL },
	{ "8099:a\r\nX-Evil: 1:80", 0, NULL },
	{ "8099:a/b:80", 0, NULL },
	{ "8099:a@b:80", 0, NULL },
	{ "8099:::1:80", 0, NULL },
	{ "8099:[::1:80", 0, NULL },
	{ "8099:[::1]80", 0, NULL },
	{ "8099:[]:80", 0, NULL },
	{ "8099:[x]:80", 0, NULL },
	{ "8099:[::1]:", 0, NULL },
	{ "8099:[::1]:80:1", 0, NULL },
};

struct reply_case {
	const char *in;
	int rc;
	int status;
	const char *reason;
	size_t head_len; /* 0: strlen(in) */
};

static const struct reply_case replies[] = {
	{ "HTTP/1.1 200 Connection established\r\n\r\n", 1, 200, "", 0 },
	{ "HTTP/1.0 200 OK\r\nX-Conn: 3\r\n\r\n", 1, 200, "", 0 },
	{ "HTTP/1.1 204\r\n\r\n", 1, 204, "", 0 },
	{ "HTTP/1.1 200 OK\r\n\r\nSSH-2.0-banner\r\n", 1, 200, "", 19 },
	{ "HTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\nX-Postern-Reason: host_not_allowed\r\n\r\nno\n",
	    1, 403, "host_not_allowed", 81 },
	{ "HTTP/1.1 403 Forbidden\r\nx-postern-reason:\tprivate_address \r\n\r\n", 1, 403,
	    "private_address", 0 },
	{ "HTTP/1.1 403 F\r\nX-Postern-Reason: a\"b\r\n\r\n", 1, 403, "a", 0 },
	{ "HTTP/1.1 403 F\r\nX-Postern-Reasonable: x\r\n\r\n", 1, 403, "", 0 },
	{ "HTTP/1.1 403 F\r\nX-Postern-Reason: "
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n", 1, 403,
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0 },
	/* Not yet complete. */
	{ "", 0, 0, "", 0 },
	{ "HTTP", 0, 0, "", 0 },
	{ "HTTP/1.1 20", 0, 0, "", 0 },
	{ "HTTP/1.1 200 OK\r\n", 0, 0, "", 0 },
	{ "HTTP/1.1 200 OK\r\nA: b\r\n\r", 0, 0, "", 0 },
	/* Never a response. */
	{ "SSH-2.0-x\r\n\r\n", -EINVAL, 0, "", 0 },
	{ "HTTP/2 200\r\n\r\n", -EINVAL, 0, "", 0 },
	{ "HTTP/1.1 2000\r\n\r\n", -EINVAL, 0, "", 0 },
	{ "HTTP/1.1 20x OK\r\n\r\n", -EINVAL, 0, "", 0 },
	{ "HTTP/1.1 099 OK\r\n\r\n", -EINVAL, 0, "", 0 },
	{ "HTTP/1.1  200 OK\r\n\r\n", -EINVAL, 0, "", 0 },
	{ "HTTP/1.x 200 OK\r\n\r\n", -EINVAL, 0, "", 0 },
};

int
main(void)
{
	char buf[64];
	size_t i, n;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		const struct spec_case *t = &specs[i];
		struct br_forward f;
		const char *why = "ok";
		char shown[64];
		int rc;

		memset(&f, 0, sizeof(f));
		br_forward_escape(t->in, strlen(t->in), shown, sizeof(shown));
		rc = br_forward_parse(t->in, &f, &why);
		if (t->target == NULL)
			tap_ok(rc == -EINVAL && why != NULL, "--forward '%s' refused (%s)", shown, why);
		else
			tap_ok(rc == 0 && f.port == t->port && strcmp(f.target, t->target) == 0,
			    "--forward '%s' -> %u %s (%s)", shown, f.port, f.target, why);
	}

	for (i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		const struct reply_case *t = &replies[i];
		struct bs_reply r;
		size_t want = t->head_len ? t->head_len : strlen(t->in);
		int rc;

		memset(&r, 0, sizeof(r));
		rc = bs_reply_parse(t->in, strlen(t->in), &r);
		if (t->rc != 1)
			tap_ok(rc == t->rc, "reply %zu: %d, want %d", i, rc, t->rc);
		else
			tap_ok(rc == 1 && r.status == t->status && strcmp(r.reason, t->reason) == 0 &&
			    r.head_len == want, "reply %zu: %d %s, head %zu", i, r.status, r.reason,
			    r.head_len);
	}

	n = br_forward_escape("a\tb\x01\\\xff", 6, buf, sizeof(buf));
	tap_ok(n == strlen(buf) && strcmp(buf, "a b\\x01\\x5c\\xff") == 0, "escape: %s", buf);
	n = br_forward_escape("abcdef", 6, buf, 4);
	tap_ok(n == 3 && strcmp(buf, "abc") == 0, "escape truncates: %s", buf);
	n = br_forward_escape("\x01\x02", 2, buf, 6);
	tap_ok(n == 4 && strcmp(buf, "\\x01") == 0, "escape never splits an escape: %s", buf);
	return tap_done();
}
