/*
 * tests/unit/test-http.c: the strict HTTP/1.1 parser.  Every refused form
 * with its status, valid
 * requests with their fields, incremental feeding, the limits exactly at and
 * one over, the head builders, and the chunked scanner in every split.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proxy/proto/http.h"
#include "tests/unit/tap.h"

#define MAXH 100

static struct px_http_header hdrs[MAXH], hdrs2[MAXH];

/* ------------------------------------------------------------------ */
/* Refusals                                                            */

struct bad_case {
	const char *what;
	const char *in;
	int rc;
	int status;
	const char *why; /* a substring of *why */
};

#define GET_ABS "GET http://a.test/ HTTP/1.1\r\n"
#define HOST_A "Host: a.test\r\n"

static const struct bad_case bad_cases[] = {
	/* Line ends and control bytes. */
	{ "obs-fold", GET_ABS HOST_A "X-A: 1\r\n  folded\r\n\r\n", PX_HTTP_ERROR, 400, "obs-fold" },
	{ "obs-fold with HTAB", GET_ABS HOST_A "X-A: 1\r\n\tfolded\r\n\r\n", PX_HTTP_ERROR, 400, "obs-fold" },
	{ "whitespace before first header", GET_ABS " Host: a.test\r\n\r\n", PX_HTTP_ERROR, 400, "obs-fold" },
	{ "bare LF ending a header", GET_ABS "Host: a.test\n\r\n", PX_HTTP_ERROR, 400, "bare LF" },
	{ "bare LF ending the request line", "GET http://a.test/ HTTP/1.1\nHost: a.test\r\n\r\n", PX_HTTP_ERROR, 400, "bare LF" },
	{ "bare LF ending the head", GET_ABS HOST_A "\n", PX_HTTP_ERROR, 400, "bare LF" },
	{ "bare CR in a value", GET_ABS HOST_A "X-A: a\rb\r\n\r\n", PX_HTTP_ERROR, 400, "bare CR" },
	{ "bare CR ending the head", GET_ABS HOST_A "\rX", PX_HTTP_ERROR, 400, "bare CR" },
	{ "bare CR after the version", "GET http://a.test/ HTTP/1.1\rHost: a.test\r\n\r\n", PX_HTTP_ERROR, 400, "bare CR" },
	{ "NUL in a value", GET_ABS HOST_A "X-A: a\0b\r\n\r\n", PX_HTTP_ERROR, 400, "control character" },
	{ "VT in a value", GET_ABS HOST_A "X-A: a\vb\r\n\r\n", PX_HTTP_ERROR, 400, "control character" },
	{ "DEL in a value", GET_ABS HOST_A "X-A: a\x7f" "b\r\n\r\n", PX_HTTP_ERROR, 400, "control character" },
	{ "ESC in a value", GET_ABS HOST_A "X-A: \x1b[31m\r\n\r\n", PX_HTTP_ERROR, 400, "control character" },
	/* Field names. */
	{ "space before colon", GET_ABS HOST_A "Content-Length : 5\r\n\r\n", PX_HTTP_ERROR, 400, "between header name and colon" },
	{ "tab before colon", GET_ABS HOST_A "Transfer-Encoding\t: chunked\r\n\r\n", PX_HTTP_ERROR, 400, "between header name and colon" },
	{ "empty field name", GET_ABS HOST_A ": x\r\n\r\n", PX_HTTP_ERROR, 400, "empty header name" },
	{ "non-token in name", GET_ABS HOST_A "X(A): x\r\n\r\n", PX_HTTP_ERROR, 400, "invalid character in header name" },
	{ "non-ASCII in name", GET_ABS HOST_A "X\xc3\xa9: x\r\n\r\n", PX_HTTP_ERROR, 400, "invalid character in header name" },
	{ "line without colon", GET_ABS HOST_A "NoColon\r\n\r\n", PX_HTTP_ERROR, 400, "without a colon" },
	/* Message length. */
	{ "Content-Length with Transfer-Encoding", GET_ABS HOST_A "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", PX_HTTP_ERROR, 400, "both Content-Length and Transfer-Encoding" },
	{ "Transfer-Encoding with Content-Length", GET_ABS HOST_A "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", PX_HTTP_ERROR, 400, "both Content-Length and Transfer-Encoding" },
	{ "duplicate equal Content-Length", GET_ABS HOST_A "Content-Length: 5\r\nContent-Length: 5\r\n\r\n", PX_HTTP_ERROR, 400, "duplicate Content-Length" },
	{ "duplicate Content-Length, other case", GET_ABS HOST_A "Content-Length: 5\r\ncontent-length: 6\r\n\r\n", PX_HTTP_ERROR, 400, "duplicate Content-Length" },
	{ "Content-Length list", GET_ABS HOST_A "Content-Length: 5, 5\r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Content-Length with plus", GET_ABS HOST_A "Content-Length: +5\r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Content-Length negative", GET_ABS HOST_A "Content-Length: -1\r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Content-Length inner space", GET_ABS HOST_A "Content-Length: 1 0\r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Content-Length hex", GET_ABS HOST_A "Content-Length: 0x10\r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Content-Length empty", GET_ABS HOST_A "Content-Length: \r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Content-Length 2^62+1", GET_ABS HOST_A "Content-Length: 4611686018427387905\r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Content-Length 2^64 wraps", GET_ABS HOST_A "Content-Length: 18446744073709551617\r\n\r\n", PX_HTTP_ERROR, 400, "plain digits" },
	{ "Transfer-Encoding chunked, chunked", GET_ABS HOST_A "Transfer-Encoding: chunked, chunked\r\n\r\n", PX_HTTP_ERROR, 400, "exactly chunked" },
	{ "Transfer-Encoding gzip, chunked", GET_ABS HOST_A "Transfer-Encoding: gzip, chunked\r\n\r\n", PX_HTTP_ERROR, 400, "exactly chunked" },
	{ "Transfer-Encoding identity", GET_ABS HOST_A "Transfer-Encoding: identity\r\n\r\n", PX_HTTP_ERROR, 400, "exactly chunked" },
	{ "Transfer-Encoding chunked with param", GET_ABS HOST_A "Transfer-Encoding: chunked;q=1\r\n\r\n", PX_HTTP_ERROR, 400, "exactly chunked" },
	{ "Transfer-Encoding xchunked", GET_ABS HOST_A "Transfer-Encoding: xchunked\r\n\r\n", PX_HTTP_ERROR, 400, "exactly chunked" },
	{ "Transfer-Encoding vertical tab trick", GET_ABS HOST_A "Transfer-Encoding:\vchunked\r\n\r\n", PX_HTTP_ERROR, 400, "control character" },
	{ "two Transfer-Encoding lines", GET_ABS HOST_A "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", PX_HTTP_ERROR, 400, "duplicate Transfer-Encoding" },
	{ "Transfer-Encoding in HTTP/1.0", "POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", PX_HTTP_ERROR, 400, "HTTP/1.0" },
	{ "Connection naming Content-Length", GET_ABS HOST_A "Content-Length: 3\r\nConnection: Content-Length\r\n\r\n", PX_HTTP_ERROR, 400, "Connection header names" },
	{ "Connection naming Transfer-Encoding", GET_ABS HOST_A "Connection: close, transfer-encoding\r\n\r\n", PX_HTTP_ERROR, 400, "Connection header names" },
	{ "malformed Connection", GET_ABS HOST_A "Connection: close keep-alive\r\n\r\n", PX_HTTP_ERROR, 400, "malformed Connection" },
	/* Host. */
	{ "duplicate Host", GET_ABS HOST_A HOST_A "\r\n", PX_HTTP_ERROR, 400, "duplicate Host" },
	{ "duplicate Host, other name", GET_ABS HOST_A "host: b.test\r\n\r\n", PX_HTTP_ERROR, 400, "duplicate Host" },
	{ "missing Host in HTTP/1.1", GET_ABS "\r\n", PX_HTTP_ERROR, 400, "missing Host" },
	{ "missing Host in HTTP/1.1 CONNECT", "CONNECT a.test:443 HTTP/1.1\r\n\r\n", PX_HTTP_ERROR, 400, "missing Host" },
	{ "empty Host", GET_ABS "Host: \r\n\r\n", PX_HTTP_ERROR, 400, "empty Host" },
	{ "malformed Host", GET_ABS "Host: a.test:0443\r\n\r\n", PX_HTTP_ERROR, 400, "malformed Host" },
	{ "Host with userinfo", GET_ABS "Host: u@a.test\r\n\r\n", PX_HTTP_ERROR, 400, "malformed Host" },
	{ "Host naming another host", GET_ABS "Host: b.test\r\n\r\n", PX_HTTP_HOST_MISMATCH, 400, "host_mismatch" },
	{ "Host naming another port", GET_ABS "Host: a.test:8080\r\n\r\n", PX_HTTP_HOST_MISMATCH, 400, "host_mismatch" },
	{ "Host without port, URI with 8080", "GET http://a.test:8080/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_HOST_MISMATCH, 400, "host_mismatch" },
	{ "Host an address, URI a name", "GET http://a.test/ HTTP/1.1\r\nHost: 10.200.0.1\r\n\r\n", PX_HTTP_HOST_MISMATCH, 400, "host_mismatch" },
	{ "Host mismatch in HTTP/1.0", "GET http://a.test/ HTTP/1.0\r\nHost: b.test\r\n\r\n", PX_HTTP_HOST_MISMATCH, 400, "host_mismatch" },
	/* Request line. */
	{ "two spaces after method", "GET  http://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "two spaces before version", "GET http://a.test/  HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "tab separator", "GET\thttp://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "tab before version", "GET http://a.test/\tHTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "no version", "GET http://a.test/\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "method only", "GET\r\n\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "four parts", "GET http://a.test/ HTTP/1.1 x\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "trailing space", "GET http://a.test/ HTTP/1.1 \r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "leading space", " GET http://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "METHOD SP TARGET SP VERSION" },
	{ "non-token method", "G(T http://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "invalid character in method" },
	{ "NUL in method", "GE\0T http://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "invalid character in method" },
	{ "HTTP/2.0", "GET http://a.test/ HTTP/2.0\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "unsupported HTTP version" },
	{ "HTTP/1.2", "GET http://a.test/ HTTP/1.2\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "unsupported HTTP version" },
	{ "HTTP/1.10", "GET http://a.test/ HTTP/1.10\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "unsupported HTTP version" },
	{ "lower-case version", "GET http://a.test/ http/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "unsupported HTTP version" },
	{ "HTTP/0.9", "GET http://a.test/ HTTP/0.9\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "unsupported HTTP version" },
	{ "two empty lines first", "\r\n\r\nGET http://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "more than one empty line" },
	{ "leading bare LF", "\nGET http://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "bare LF" },
	/* Targets. */
	{ "userinfo in URI", "GET http://u:p@a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "userinfo" },
	{ "https in absolute form", "GET https://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "use CONNECT" },
	{ "HTTPS upper case", "GET HTTPS://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "use CONNECT" },
	{ "ftp scheme", "GET ftp://a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "only http://" },
	{ "no authority", "GET http:/a.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "without an authority" },
	{ "empty authority", "GET http:///x HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "empty" },
	{ "non-canonical IPv4 target", "GET http://2130706433/ HTTP/1.1\r\nHost: 2130706433\r\n\r\n", PX_HTTP_ERROR, 400, "IPv4" },
	{ "octal IPv4 target", "GET http://0177.0.0.1/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "IPv4" },
	{ "port with leading zero", "GET http://a.test:080/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "leading zero" },
	{ "port out of range", "GET http://a.test:65536/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "out of range" },
	{ "zone id", "GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "zone" },
	{ "raw UTF-8 in target", "GET http://b\xc3\xbc.test/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "non-ASCII" },
	{ "control byte in target", "GET http://a.test/\x01 HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "control character in request target" },
	{ "dot-dot segment", "GET http://a.test/hooks/../admin HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "dot segment" },
	{ "encoded dot-dot segment", "GET http://a.test/hooks/%2e%2E/admin HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "dot segment" },
	{ "mixed dot segment at end", "GET http://a.test/hooks/.%2e HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "dot segment" },
	{ "single dot segment", "GET http://a.test/./x HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "dot segment" },
	{ "backslash", "GET http://a.test/hooks\\..\\admin HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "backslash" },
	{ "broken %-escape", "GET http://a.test/a%2 HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "%-escape" },
	{ "non-hex %-escape", "GET http://a.test/a%zz HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "%-escape" },
	{ "asterisk with GET", "GET * HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "asterisk" },
	/* CONNECT. */
	{ "CONNECT without port", "CONNECT a.test HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "without a port" },
	{ "CONNECT origin form", "CONNECT / HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "host:port" },
	{ "CONNECT absolute form", "CONNECT http://a.test:443/ HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "port" },
	{ "CONNECT with userinfo", "CONNECT u@a.test:443 HTTP/1.1\r\n" HOST_A "\r\n", PX_HTTP_ERROR, 400, "userinfo" },
	{ "CONNECT with Content-Length", "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nContent-Length: 0\r\n\r\n", PX_HTTP_ERROR, 400, "CONNECT request with a body" },
	{ "CONNECT with Transfer-Encoding", "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nTransfer-Encoding: chunked\r\n\r\n", PX_HTTP_ERROR, 400, "CONNECT request with a body" },
	{ "CONNECT with bad port", "CONNECT a.test:+443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n", PX_HTTP_ERROR, 400, "digits" },
};

static int
contains(const char *hay, const char *needle)
{
	return hay != NULL && strstr(hay, needle) != NULL;
}

/* The same input refused whole, and refused (never OK) byte by byte. */
static void
test_bad_cases(void)
{
	size_t i, k;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		size_t len = strlen(bc->in);
		struct px_http_request req;
		const char *why = NULL;
		size_t head_len = 0;
		int status = 0, rc, early_ok = 1;

		/* Cases holding a NUL: the length is up to the final CRLFCRLF. */
		if (strstr(bc->what, "NUL") != NULL)
			len = strlen(bc->in) + 1 + strlen(bc->in + strlen(bc->in) + 1);
		px_http_request_init(&req, hdrs, MAXH);
		rc = px_http_parse_request(bc->in, len, NULL, &req, &head_len,
		    &status, &why);
		tap_ok(rc == bc->rc && status == bc->status && contains(why, bc->why),
		    "refused: %s (rc %d status %d why \"%s\")", bc->what, rc,
		    status, why != NULL ? why : "(null)");
		/* Fed one byte at a time (the parser resumes where it
		 * stopped): at every length the same answer as a fresh parse
		 * of that prefix, so resuming delays no refusal, and in the
		 * end the same refusal as whole, never OK. */
		px_http_request_init(&req, hdrs, MAXH);
		rc = PX_HTTP_INCOMPLETE;
		for (k = 1; k <= len && rc == PX_HTTP_INCOMPLETE; k++) {
			struct px_http_request fresh;
			const char *why2 = NULL, *why3 = NULL;
			int status2 = 0, status3 = 0, rc3;

			rc = px_http_parse_request(bc->in, k, NULL, &req,
			    &head_len, &status2, &why2);
			px_http_request_init(&fresh, hdrs2, MAXH);
			rc3 = px_http_parse_request(bc->in, k, NULL, &fresh,
			    &head_len, &status3, &why3);
			if (rc != rc3 || status2 != status3 || why2 != why3)
				early_ok = 0;
			if (rc != PX_HTTP_INCOMPLETE && (rc != bc->rc ||
			    status2 != status || why2 != why))
				early_ok = 0;
		}
		tap_ok(early_ok && rc != PX_HTTP_INCOMPLETE,
		    "fed byte by byte, \"%s\" gets the same refusal", bc->what);
	}
}

/* A bad byte fails on arrival, before the head is complete. */
static void
test_early_failure(void)
{
	static const struct {
		const char *in;
		const char *why;
	} cases[] = {
		{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A: a\0", "control character" },
		{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A : ", "between header name" },
		{ "GET http://a.test/ HTTP/1.1\n", "bare LF" },
		{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n ", "obs-fold" },
		{ "GET https://a.test/ ", "use CONNECT" },
		{ "GET  ", "METHOD SP TARGET SP VERSION" },
		{ "GET http://a.test/ HTTP/2", "unsupported HTTP version" },
		{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: a.test\r\n", "duplicate Host" },
		{ "GET http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n", "both Content-Length" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct px_http_request req;
		const char *why = NULL;
		size_t head_len, len = strlen(cases[i].in);
		int status = 0, rc;

		if (i == 0)
			len += 1; /* the NUL */
		px_http_request_init(&req, hdrs, MAXH);
		rc = px_http_parse_request(cases[i].in, len, NULL, &req,
		    &head_len, &status, &why);
		tap_ok(rc == PX_HTTP_ERROR && status == 400 && contains(why, cases[i].why),
		    "incomplete head refused early: %s", cases[i].why);
	}
}

/* ------------------------------------------------------------------ */
/* Valid requests                                                      */

static int
parse_ok(const char *in, struct px_http_request *req, size_t *head_len)
{
	const char *why = NULL;
	int status = 0, rc;

	px_http_request_init(req, hdrs, MAXH);
	rc = px_http_parse_request(in, strlen(in), NULL, req, head_len, &status,
	    &why);
	if (rc != PX_HTTP_OK)
		tap_diag("parse of %.40s...: rc %d status %d why %s", in, rc,
		    status, why != NULL ? why : "(null)");
	return rc == PX_HTTP_OK;
}

static int
span_eq(const char *p, size_t len, const char *lit)
{
	return p != NULL && len == strlen(lit) && memcmp(p, lit, len) == 0;
}

static void
test_valid_requests(void)
{
	struct px_http_request r;
	size_t hl;
	const char *in;

	in = "GET http://Example.COM./a/b?x=1#frag HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\nBODY";
	tap_ok(parse_ok(in, &r, &hl), "absolute-form GET parses");
	tap_cmp_int(hl, "==", strlen(in) - 4, "head length excludes what follows the head");
	tap_ok(span_eq(r.method, r.method_len, "GET") && !r.is_connect && !r.is_head, "method GET");
	tap_ok(r.form == PX_TARGET_ABSOLUTE && r.minor == 1, "absolute form, HTTP/1.1");
	tap_ok(r.host.kind == CF_HOST_NAME && strcmp(r.host.name, "example.com") == 0,
	    "target host normalised: %s", r.host.name);
	tap_ok(r.port == 80 && !r.port_given, "default port 80");
	tap_ok(span_eq(r.path, r.path_len, "/a/b?x=1"), "path and query, no fragment");
	tap_ok(r.has_host_header && strcmp(r.host_hdr.name, "example.com") == 0 &&
	    r.host_hdr_port == 0, "Host header parsed");
	tap_ok(r.content_length == -1 && !r.chunked, "no body");
	tap_ok(r.keep_alive, "HTTP/1.1 is keep-alive by default");
	tap_ok(r.nheaders == 2 && span_eq(r.headers[1].name, r.headers[1].name_len, "User-Agent") &&
	    span_eq(r.headers[1].value, r.headers[1].value_len, "t"), "headers recorded in order");

	in = "GET http://a.test HTTP/1.1\r\nHost: a.test:80\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && span_eq(r.path, r.path_len, "/"),
	    "empty path is /, Host with explicit default port matches");
	in = "GET http://a.test?q=1 HTTP/1.1\r\nHost: a.test\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && span_eq(r.path, r.path_len, "?q=1"),
	    "empty path with query keeps the query");
	in = "GET http://a.test:8080/x HTTP/1.1\r\nHost: A.TEST:8080\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.port == 8080 && r.port_given,
	    "explicit port, Host compared in normal form");
	in = "GET http://[FD00:200::1]:8080/ HTTP/1.1\r\nHost: [fd00:200::1]:8080\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.host.kind == CF_HOST_IPV6 &&
	    strcmp(r.host.name, "fd00:200::1") == 0 && r.port == 8080,
	    "IPv6 literal target");
	in = "GET http://10.200.0.1/ HTTP/1.1\r\nHost: 10.200.0.1\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.host.kind == CF_HOST_IPV4, "IPv4 target");

	in = "CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\nProxy-Connection: Keep-Alive\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.is_connect && r.form == PX_TARGET_AUTHORITY &&
	    r.port == 443 && r.port_given && strcmp(r.host.name, "api.anthropic.com") == 0,
	    "CONNECT host:port");
	in = "CONNECT [::1]:443 HTTP/1.0\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.is_connect && r.host.kind == CF_HOST_IPV6 &&
	    !r.has_host_header && !r.keep_alive, "CONNECT HTTP/1.0 without Host, IPv6");
	in = "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl), "CONNECT Host is checked for syntax only");

	in = "POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 00012\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.content_length == 12 && !r.chunked,
	    "Content-Length (leading zeros do not change a decimal)");
	in = "POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4611686018427387904\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.content_length == ((int64_t)1 << 62),
	    "Content-Length of exactly 2^62");
	in = "POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding:  ChUnKeD \t\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.chunked && r.content_length == -1,
	    "Transfer-Encoding: chunked, any case, OWS trimmed");
	in = "POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.expect_continue, "Expect: 100-continue");

	in = "GET http://a.test/ HTTP/1.0\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.minor == 0 && !r.keep_alive && !r.has_host_header,
	    "HTTP/1.0 without Host, not keep-alive");
	in = "GET http://a.test/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && !r.keep_alive,
	    "HTTP/1.0 keep-alive is not honoured by a proxy (RFC 9112 9.3)");
	in = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: foo, , Close\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && !r.keep_alive, "Connection: close in a list");
	in = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: keep-alive\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.keep_alive, "HTTP/1.1 keep-alive");

	in = "GET http://a.test/chat HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.upgrade_websocket, "WebSocket upgrade");
	in = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && !r.upgrade_websocket, "h2c upgrade is not WebSocket");
	in = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && !r.upgrade_websocket, "Upgrade without Connection: upgrade");
	in = "GET http://a.test/ HTTP/1.0\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && !r.upgrade_websocket, "Upgrade ignored in HTTP/1.0");

	in = "GET / HTTP/1.1\r\nHost: proxy\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.form == PX_TARGET_ORIGIN && span_eq(r.path, r.path_len, "/"),
	    "origin form parses (the caller refuses it)");
	in = "OPTIONS * HTTP/1.1\r\nHost: proxy\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.form == PX_TARGET_ASTERISK, "OPTIONS *");
	in = "HEAD http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.is_head, "HEAD");
	in = "\r\nGET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && hl == strlen(in) && span_eq(r.method, r.method_len, "GET"),
	    "one leading CRLF tolerated (RFC 9112 2.2)");
	in = "GET http://a.test/%7Euser/a.b/..c/.../ HTTP/1.1\r\nHost: a.test\r\nX-Empty:\r\nX-Utf8: caf\xc3\xa9\r\nX-Tab: a\tb\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && r.nheaders == 4 && r.headers[1].value_len == 0 &&
	    span_eq(r.headers[3].value, r.headers[3].value_len, "a\tb"),
	    "dot-like segments, empty value, obs-text and HTAB in values");
	in = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\nGET http://b.test/ HTTP/1.1\r\n";
	tap_ok(parse_ok(in, &r, &hl) && hl == strlen("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"),
	    "pipelined: stops at the end of the first head");
}

/* A host_mismatch refusal carries both names for the refusal text. */
static void
test_mismatch_fields(void)
{
	const char *in = "GET http://a.test:8080/ HTTP/1.1\r\nHost: B.test\r\n\r\n";
	struct px_http_request r;
	const char *why = NULL;
	size_t hl;
	int status = 0, rc;

	px_http_request_init(&r, hdrs, MAXH);
	rc = px_http_parse_request(in, strlen(in), NULL, &r, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_HOST_MISMATCH && status == 400 &&
	    strcmp(r.host.name, "a.test") == 0 && r.port == 8080 &&
	    r.has_host_header && strcmp(r.host_hdr.name, "b.test") == 0 &&
	    r.host_hdr_port == 0, "host_mismatch fills the target and Host fields");
}

/* Every proper prefix of a valid request is INCOMPLETE, never an error. */
static void
test_incremental(void)
{
	static const char *ins[] = {
		"GET http://a.test/x?y HTTP/1.1\r\nHost: a.test\r\nX-A:  v \r\nContent-Length: 5\r\n\r\n",
		"\r\nPOST http://[fd00:200::1]:81/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nProxy-Authorization: Basic eA==\r\n\r\n",
		"PUT http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n",
	};
	size_t i, k;

	for (i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
		struct px_http_request req;
		const char *why;
		size_t hl = 0, len = strlen(ins[i]);
		int status, rc, all = 1;

		px_http_request_init(&req, hdrs, MAXH);
		for (k = 0; k < len; k++) {
			rc = px_http_parse_request(ins[i], k, NULL, &req, &hl,
			    &status, &why);
			if (rc != PX_HTTP_INCOMPLETE) {
				tap_diag("prefix %zu: rc %d", k, rc);
				all = 0;
			}
		}
		rc = px_http_parse_request(ins[i], len, NULL, &req, &hl, &status, &why);
		tap_ok(all && rc == PX_HTTP_OK && hl == len,
		    "every prefix of request %zu is INCOMPLETE, the whole is OK", i);
	}
}

/*
 * A caller may keep only the resume member between calls, as proxy/flow/conn.c
 * does: a fresh struct on every call, given the last call's resume, over a
 * buffer that moves between calls, gets the head that one parse of the
 * whole gets, with its pointers into the last buffer.
 */
static void
test_resume_copied(void)
{
	static const char in[] = "POST http://a.test/p?q HTTP/1.1\r\nHost: a.test\r\n"
	    "X-A: one\r\nContent-Length: 5\r\nX-B:  two \r\n\r\n";
	static const char rin[] = "HTTP/1.1 200 OK\r\nX-C: three\r\nContent-Length: 7\r\n\r\n";
	struct px_http_resume rs;
	struct px_http_request req;
	struct px_http_response resp;
	const char *why = NULL;
	char *buf = NULL, *nb;
	size_t k, hl = 0;
	int rc = PX_HTTP_INCOMPLETE, status = 0, early = 1;

	memset(&rs, 0, sizeof(rs));
	for (k = 1; k < sizeof(in); k++) {
		/* Both alive while copying: the new one is elsewhere. */
		if ((nb = malloc(k)) == NULL)
			abort();
		memcpy(nb, in, k);
		free(buf);
		buf = nb;
		px_http_request_init(&req, hdrs, MAXH);
		req.resume = rs;
		rc = px_http_parse_request(buf, k, NULL, &req, &hl, &status, &why);
		if (k + 1 < sizeof(in) && rc != PX_HTTP_INCOMPLETE)
			early = 0;
		rs = req.resume;
	}
	tap_ok(early && rc == PX_HTTP_OK && hl == sizeof(in) - 1 && req.content_length == 5 &&
	    req.nheaders == 4 && span_eq(req.path, req.path_len, "/p?q") &&
	    span_eq(req.headers[3].value, req.headers[3].value_len, "two") &&
	    req.headers[3].value > buf && req.headers[3].value < buf + hl,
	    "request: only resume kept between calls, the buffer moving: the same head");

	memset(&rs, 0, sizeof(rs));
	early = 1;
	for (k = 1; k < sizeof(rin); k++) {
		if ((nb = malloc(k)) == NULL)
			abort();
		memcpy(nb, rin, k);
		free(buf);
		buf = nb;
		px_http_response_init(&resp, hdrs, MAXH);
		resp.resume = rs;
		rc = px_http_parse_response(buf, k, NULL, 0, &resp, &hl, &why);
		if (k + 1 < sizeof(rin) && rc != PX_HTTP_INCOMPLETE)
			early = 0;
		rs = resp.resume;
	}
	tap_ok(early && rc == PX_HTTP_OK && hl == sizeof(rin) - 1 && resp.status == 200 &&
	    resp.content_length == 7 && resp.nheaders == 2 &&
	    span_eq(resp.headers[0].value, resp.headers[0].value_len, "three") &&
	    resp.headers[0].value > buf && resp.headers[0].value < buf + hl,
	    "response: only resume kept between calls, the buffer moving: the same head");
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Limits                                                              */

static char *
make_request(size_t nheaders, size_t pad)
{
	size_t cap = 128 + nheaders * 16 + pad, i;
	char *s = malloc(cap), *p;

	p = s + sprintf(s, "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n");
	for (i = 1; i < nheaders; i++)
		p += sprintf(p, "X-%zu: v\r\n", i);
	if (pad > 0) {
		p += sprintf(p, "X-Pad: ");
		memset(p, 'p', pad);
		p += pad;
		p += sprintf(p, "\r\n");
	}
	sprintf(p, "\r\n");
	return s;
}

static void
test_limits(void)
{
	struct px_http_limits lim = { 10, 4096 };
	struct px_http_request req;
	const char *why;
	size_t hl, len;
	char *s;
	int status, rc;

	/* max_headers: exactly 10 lines pass, 11 are a 431. */
	s = make_request(10, 0);
	px_http_request_init(&req, hdrs, MAXH);
	rc = px_http_parse_request(s, strlen(s), &lim, &req, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_OK && req.nheaders == 10, "exactly max_headers lines pass");
	free(s);
	s = make_request(11, 0);
	rc = px_http_parse_request(s, strlen(s), &lim, &req, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_ERROR && status == 431, "max_headers + 1 lines: 431");
	/* ... already while the head is incomplete. */
	rc = px_http_parse_request(s, strlen(s) - 8, &lim, &req, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_ERROR && status == 431, "max_headers + 1: 431 before the head ends");
	free(s);
	/* A caller array smaller than max_headers caps the count. */
	s = make_request(10, 0);
	px_http_request_init(&req, hdrs, 5);
	rc = px_http_parse_request(s, strlen(s), &lim, &req, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_ERROR && status == 431, "header array of 5 caps the count");
	free(s);

	/* max_header_bytes: a head of exactly 4096 bytes passes.  The bare
	 * request is 45 bytes, the pad line 9 bytes plus the pad. */
	s = make_request(1, 0);
	len = strlen(s);
	free(s);
	tap_cmp_int(len, "==", 45, "bare request of %zu bytes", len);
	s = make_request(1, 4096 - 45 - 9);
	len = strlen(s);
	tap_cmp_int(len, "==", 4096, "built a head of %zu bytes", len);
	px_http_request_init(&req, hdrs, MAXH);
	rc = px_http_parse_request(s, len, &lim, &req, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_OK && hl == 4096, "head of exactly max_header_bytes passes");
	free(s);
	s = make_request(1, 4096 - 45 - 9 + 1);
	len = strlen(s);
	tap_cmp_int(len, "==", 4097, "built a head of %zu bytes", len);
	rc = px_http_parse_request(s, len, &lim, &req, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_ERROR && status == 431, "max_header_bytes + 1: 431");
	rc = px_http_parse_request(s, 4096, &lim, &req, &hl, &status, &why);
	tap_cmp_int(rc, "==", PX_HTTP_INCOMPLETE, "max_header_bytes without the end: still INCOMPLETE");
	rc = px_http_parse_request(s, 4097, &lim, &req, &hl, &status, &why);
	tap_ok(rc == PX_HTTP_ERROR && status == 431, "one byte more without the end: 431");
	free(s);
}

/* ------------------------------------------------------------------ */
/* Responses                                                           */

struct resp_case {
	const char *what;
	const char *in;
	int head;
	int rc;
	int status;
	int64_t cl;
	int chunked, close_delim, no_body, keep_alive, informational, ws;
};

static const struct resp_case resp_cases[] = {
	{ "200 with Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 0, PX_HTTP_OK, 200, 5, 0, 0, 0, 1, 0, 0 },
	{ "200 chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0, PX_HTTP_OK, 200, -1, 1, 0, 0, 1, 0, 0 },
	{ "200 close-delimited", "HTTP/1.1 200 OK\r\n\r\n", 0, PX_HTTP_OK, 200, -1, 0, 1, 0, 0, 0, 0 },
	{ "200 to HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", 1, PX_HTTP_OK, 200, 0, 0, 0, 1, 1, 0, 0 },
	{ "204", "HTTP/1.1 204 No Content\r\n\r\n", 0, PX_HTTP_OK, 204, 0, 0, 0, 1, 1, 0, 0 },
	{ "304 with Content-Length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", 0, PX_HTTP_OK, 304, 0, 0, 0, 1, 1, 0, 0 },
	{ "100 Continue", "HTTP/1.1 100 Continue\r\n\r\n", 0, PX_HTTP_OK, 100, 0, 0, 0, 1, 1, 1, 0 },
	{ "101 WebSocket", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 0, PX_HTTP_OK, 101, 0, 0, 0, 1, 0, 0, 1 },
	{ "1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", 0, PX_HTTP_OK, 200, 0, 0, 0, 0, 1, 0, 0 },
	{ "1.0 default close", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 0, PX_HTTP_OK, 200, 0, 0, 0, 0, 0, 0, 0 },
	{ "Connection: close", "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 3\r\n\r\n", 0, PX_HTTP_OK, 404, 3, 0, 0, 0, 0, 0, 0 },
	{ "no reason phrase", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 0, PX_HTTP_OK, 200, 0, 0, 0, 0, 1, 0, 0 },
	{ "empty reason phrase", "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", 0, PX_HTTP_OK, 200, 0, 0, 0, 0, 1, 0, 0 },
	{ "Host and Expect mean nothing in a response", "HTTP/1.1 200 OK\r\nHost: x y\r\nHost: z\r\nExpect: q\r\nContent-Length: 0\r\n\r\n", 0, PX_HTTP_OK, 200, 0, 0, 0, 0, 1, 0, 0 },
	{ "CL and TE", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "gzip, chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "duplicate CL", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "obs-fold", "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "bare LF", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "status 600", "HTTP/1.1 600 X\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "status 2000", "HTTP/1.1 2000 X\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "status 20", "HTTP/1.1 20 X\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "HTTP/2", "HTTP/2 200 OK\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "101 h2c", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "TE in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "NUL in reason", "HTTP/1.1 200 O\x01K\r\n\r\n", 0, PX_HTTP_ERROR, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static void
test_responses(void)
{
	size_t i, k;

	for (i = 0; i < sizeof(resp_cases) / sizeof(resp_cases[0]); i++) {
		const struct resp_case *rc_ = &resp_cases[i];
		struct px_http_response resp;
		const char *why = NULL;
		size_t hl = 0, len = strlen(rc_->in);
		int rc, ok, prefixes = 1;

		px_http_response_init(&resp, hdrs, MAXH);
		rc = px_http_parse_response(rc_->in, len, NULL, rc_->head, &resp, &hl, &why);
		ok = rc == rc_->rc;
		if (ok && rc == PX_HTTP_OK)
			ok = hl == len && resp.status == rc_->status &&
			    resp.content_length == rc_->cl &&
			    resp.chunked == rc_->chunked &&
			    resp.close_delimited == rc_->close_delim &&
			    resp.no_body == rc_->no_body &&
			    resp.keep_alive == rc_->keep_alive &&
			    resp.informational == rc_->informational &&
			    resp.upgrade_websocket == rc_->ws;
		tap_ok(ok, "response: %s (rc %d, why %s)", rc_->what, rc,
		    why != NULL ? why : "-");
		if (rc_->rc == PX_HTTP_OK) {
			for (k = 0; k < len; k++)
				if (px_http_parse_response(rc_->in, k, NULL, rc_->head,
				    &resp, &hl, &why) != PX_HTTP_INCOMPLETE)
					prefixes = 0;
			tap_ok(prefixes, "response: every prefix of %s is INCOMPLETE", rc_->what);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Head building                                                       */

static char *
drain(struct evbuffer *b)
{
	size_t n = evbuffer_get_length(b);
	char *s = malloc(n + 1);

	evbuffer_remove(b, s, n);
	s[n] = '\0';
	return s;
}

static void
test_build_upstream(void)
{
	struct evbuffer *b = evbuffer_new();
	struct px_http_request r;
	size_t hl;
	char *s;
	const char *in;

	in = "POST http://A.Test:8080/hooks/x?y=1#f HTTP/1.1\r\n"
	     "User-Agent: curl/8\r\n"
	     "Proxy-Authorization: Basic c2VjcmV0\r\n"
	     "Host: a.test:8080\r\n"
	     "Connection: keep-alive, X-Secret-Hop\r\n"
	     "X-Secret-Hop: drop me\r\n"
	     "Keep-Alive: timeout=5\r\n"
	     "Proxy-Connection: Keep-Alive\r\n"
	     "TE: trailers\r\n"
	     "Trailer: X-T\r\n"
	     "Upgrade: h2c\r\n"
	     "Accept: */*\r\n"
	     "Content-Length: 3\r\n"
	     "Via: 1.0 other\r\n"
	     "\r\nabc";
	tap_ok(parse_ok(in, &r, &hl), "request to build from parses");
	tap_cmp_int(px_http_build_upstream_head(&r, b), "==", 0, "upstream head built");
	s = drain(b);
	tap_cmp_str(s, "POST /hooks/x?y=1 HTTP/1.1\r\n"
	    "Host: a.test:8080\r\n"
	    "User-Agent: curl/8\r\n"
	    "Accept: */*\r\n"
	    "Content-Length: 3\r\n"
	    "Via: 1.0 other\r\n"
	    "Via: 1.1 postern\r\n"
	    "Connection: keep-alive\r\n"
	    "\r\n", "hop-by-hop, Connection-named and Proxy-* dropped, rest in order");
	tap_ok(strstr(s, "c2VjcmV0") == NULL && strstr(s, "Proxy-") == NULL,
	    "Proxy-Authorization never leaks upstream");
	free(s);

	in = "GET http://a.test?q HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && px_http_build_upstream_head(&r, b) == 0, "query-only URI builds");
	s = drain(b);
	tap_cmp_str(s, "GET /?q HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n"
	    "Via: 1.1 postern\r\nConnection: keep-alive\r\n\r\n",
	    "empty path becomes / before the query; Transfer-Encoding kept");
	free(s);

	in = "GET http://[fd00:200::1]/ HTTP/1.0\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && px_http_build_upstream_head(&r, b) == 0, "HTTP/1.0 builds");
	s = drain(b);
	tap_cmp_str(s, "GET / HTTP/1.0\r\nHost: [fd00:200::1]\r\nVia: 1.1 postern\r\n"
	    "Connection: keep-alive\r\n\r\n",
	    "Host generated from the URI (IPv6 bracketed); an HTTP/1.0 request stays HTTP/1.0 upstream");
	free(s);

	in = "GET http://a.test/ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
	     "Sec-WebSocket-Key: k\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && px_http_build_upstream_head(&r, b) == 0, "WebSocket builds");
	s = drain(b);
	tap_cmp_str(s, "GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k\r\n"
	    "Via: 1.1 postern\r\nConnection: Upgrade\r\n\r\n", "WebSocket keeps Upgrade");
	free(s);

	in = "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) && px_http_build_upstream_head(&r, b) == -EINVAL &&
	    evbuffer_get_length(b) == 0, "no upstream head for CONNECT");
	evbuffer_free(b);
}

/* A request read inside a terminated tunnel: origin form, the
 * tunnel's host, the injected lines and query parameter. */
static void
test_build_tls(void)
{
	struct evbuffer *b = evbuffer_new();
	struct px_http_request r;
	size_t hl;
	char *s;
	const char *in;

	in = "GET /v1/x?a=1 HTTP/1.1\r\nHost: api.test\r\nConnection: keep-alive, X-Hop\r\n"
	     "X-Hop: 1\r\nProxy-Authorization: Basic c2VjcmV0\r\nAccept: */*\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl), "an origin-form request parses");
	tap_ok(px_http_build_tls_head(&r, "api.test", 443, "key=S%2B", 8, "x-api-key: S\r\n", 14, b) == 0,
	    "TLS head built");
	s = drain(b);
	tap_cmp_str(s, "GET /v1/x?a=1&key=S%2B HTTP/1.1\r\nHost: api.test\r\nAccept: */*\r\n"
	    "x-api-key: S\r\nVia: 1.1 postern\r\nConnection: keep-alive\r\n\r\n",
	    "query parameter appended with &, injected line after the client's, hop-by-hop and Proxy-* dropped");
	free(s);

	in = "GET /p HTTP/1.1\r\nHost: api.test:8443\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) &&
	    px_http_build_tls_head(&r, "api.test", 8443, "k=v", 3, NULL, 0, b) == 0, "no query yet");
	s = drain(b);
	tap_cmp_str(s, "GET /p?k=v HTTP/1.1\r\nHost: api.test:8443\r\nVia: 1.1 postern\r\n"
	    "Connection: keep-alive\r\n\r\n", "the parameter starts the query; a port other than 443 kept");
	free(s);

	in = "GET /p?key=PLACEHOLDER&b=2&keyx=3 HTTP/1.1\r\nHost: api.test\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) &&
	    px_http_build_tls_head(&r, "api.test", 443, "key=S", 5, NULL, 0, b) == 0, "query with the name");
	s = drain(b);
	tap_cmp_str(s, "GET /p?b=2&keyx=3&key=S HTTP/1.1\r\nHost: api.test\r\nVia: 1.1 postern\r\n"
	    "Connection: keep-alive\r\n\r\n",
	    "the client's parameter of the injected name is dropped, the others kept in order");
	free(s);

	in = "GET /p? HTTP/1.0\r\n\r\n";
	tap_ok(parse_ok(in, &r, &hl) &&
	    px_http_build_tls_head(&r, "api.test", 443, "k=v", 3, NULL, 0, b) == 0, "empty query");
	s = drain(b);
	tap_cmp_str(s, "GET /p?k=v HTTP/1.0\r\nHost: api.test\r\nVia: 1.1 postern\r\n"
	    "Connection: keep-alive\r\n\r\n", "no second separator after a bare ?; HTTP/1.0 stays");
	free(s);
	evbuffer_free(b);
}

static void
test_build_client(void)
{
	struct evbuffer *b = evbuffer_new();
	struct px_http_response resp;
	const char *why, *in;
	size_t hl;
	char *s;

	in = "HTTP/1.0 200 Fine\r\nServer: s\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
	     "Keep-Alive: timeout=5\r\nProxy-Authenticate: Basic\r\nContent-Length: 2\r\n\r\nok";
	px_http_response_init(&resp, hdrs, MAXH);
	tap_ok(px_http_parse_response(in, strlen(in), NULL, 0, &resp, &hl, &why) == PX_HTTP_OK &&
	    resp.keep_alive, "response to build from parses");
	tap_cmp_int(px_http_build_client_head(&resp, 0, b), "==", 0, "client head built");
	s = drain(b);
	tap_cmp_str(s, "HTTP/1.1 200 Fine\r\nServer: s\r\nContent-Length: 2\r\nVia: 1.1 postern\r\n"
	    "Connection: close\r\n\r\n", "client head: own version, hop-by-hop dropped, close");
	free(s);
	tap_cmp_int(px_http_build_client_head(&resp, 1, b), "==", 0, "client head built keep-alive");
	s = drain(b);
	tap_ok(strstr(s, "\r\nConnection: keep-alive\r\n\r\n") != NULL, "client head keep-alive");
	free(s);

	in = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n";
	tap_ok(px_http_parse_response(in, strlen(in), NULL, 0, &resp, &hl, &why) == PX_HTTP_OK &&
	    px_http_build_client_head(&resp, 1, b) == 0, "101 builds");
	s = drain(b);
	tap_cmp_str(s, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: x\r\n"
	    "Via: 1.1 postern\r\nConnection: Upgrade\r\n\r\n", "101 keeps Upgrade");
	free(s);

	in = "HTTP/1.1 100 Continue\r\n\r\n";
	tap_ok(px_http_parse_response(in, strlen(in), NULL, 0, &resp, &hl, &why) == PX_HTTP_OK &&
	    px_http_build_client_head(&resp, 1, b) == 0, "100 builds");
	s = drain(b);
	tap_cmp_str(s, "HTTP/1.1 100 Continue\r\nVia: 1.1 postern\r\n\r\n", "100 without Connection");
	free(s);
	evbuffer_free(b);
}

/* ------------------------------------------------------------------ */
/* Chunked bodies                                                      */

struct chunk_case {
	const char *what;
	const char *in;
	int ok;           /* 1: a complete body */
	size_t body_len;  /* bytes of the body when ok (the rest follows it) */
	const char *why;
};

static const struct chunk_case chunk_cases[] = {
	{ "simple", "5\r\nhello\r\n0\r\n\r\n", 1, 15, NULL },
	{ "two chunks and next message", "3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\nGET /", 1, 28, NULL },
	{ "upper and lower hex", "a\r\n0123456789\r\nB\r\n0123456789a\r\n0\r\n\r\n", 1, 36, NULL },
	{ "extensions", "3;name=value;flag ; q=\"a \\\" b\"\r\nabc\r\n0;last\r\n\r\n", 1, 47, NULL },
	{ "trailers", "3\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Empty:\r\n\r\n", 1, 33, NULL },
	{ "leading zeros in last chunk", "000\r\n\r\n", 1, 7, NULL },
	{ "16 hex digits", "0000000000000003\r\nabc\r\n0\r\n\r\n", 1, 28, NULL },
	{ "17 hex digits", "00000000000000003\r\nabc\r\n0\r\n\r\n", 0, 0, "too large" },
	{ "2^63", "8000000000000000\r\n", 0, 0, "too large" },
	{ "2^64 - 1", "ffffffffffffffff\r\n", 0, 0, "too large" },
	{ "2^63 - 1 is a size", "7fffffffffffffff\r\n", 2, 0, NULL },
	{ "negative", "-1\r\n", 0, 0, "not hexadecimal" },
	{ "0x prefix", "0x5\r\nhello\r\n", 0, 0, "extension" },
	{ "space before size", " 5\r\nhello\r\n", 0, 0, "not hexadecimal" },
	{ "space after size without ;", "5 \r\nhello\r\n0\r\n\r\n", 0, 0, "extension" },
	{ "bare LF after size", "5\nhello\r\n0\r\n\r\n", 0, 0, "bare LF" },
	{ "bare LF in extension", "5;a\nhello\r\n0\r\n\r\n", 0, 0, "bare LF" },
	{ "bare CR after size", "5\rhello\r\n", 0, 0, "bare CR" },
	{ "data not followed by CRLF", "5\r\nhelloX\r\n0\r\n\r\n", 0, 0, "not followed by CRLF" },
	{ "data followed by junk and LF", "5\r\nhelloX\n0\r\n\r\n", 0, 0, "not followed by CRLF" },
	{ "data followed by LF only", "5\r\nhello\n0\r\n\r\n", 0, 0, "not followed by CRLF" },
	{ "data too short", "5\r\nhell\r\n0\r\n\r\n", 0, 0, "not followed by CRLF" },
	{ "ext without name", "5;\r\nhello\r\n0\r\n\r\n", 0, 0, "extension" },
	{ "ext with bad char", "5;a@b\r\nhello\r\n0\r\n\r\n", 0, 0, "extension" },
	{ "ext value missing", "5;a=\r\nhello\r\n0\r\n\r\n", 0, 0, "extension" },
	{ "ext unterminated quote", "5;a=\"x\r\nhello\r\n", 0, 0, "extension" },
	{ "ext junk after quote", "5;a=\"x\"y\r\nhello\r\n", 0, 0, "extension" },
	{ "ext NUL", "5;a=b\0\r\nhello\r\n", 0, 0, "extension" },
	{ "empty size", "\r\nhello\r\n", 0, 0, "not hexadecimal" },
	{ "trailer obs-fold", "0\r\nX-A: 1\r\n 2\r\n\r\n", 0, 0, "obs-fold" },
	{ "trailer space before colon", "0\r\nX-A : 1\r\n\r\n", 0, 0, "whitespace" },
	{ "trailer bare LF", "0\r\nX-A: 1\n\r\n", 0, 0, "bare LF" },
	{ "trailer NUL", "0\r\nX-A: \0\r\n\r\n", 0, 0, "control" },
	{ "final bare LF", "0\r\n\n", 0, 0, "bare LF" },
	{ "final bare CR", "0\r\n\rX", 0, 0, "bare CR" },
};

/* Length of a case: through the last byte, counting embedded NULs up to
 * the final line end. */
static size_t
case_len(const char *s, const char *what)
{
	size_t n = strlen(s);

	if (strstr(what, "NUL") != NULL)
		n += 1 + strlen(s + n + 1);
	return n;
}

/* Feed IN in pieces of the sizes SPLIT returns; 1: done at *BODY, 0: not
 * done (all consumed), -1: error with *WHY. */
static int
feed(const char *in, size_t len, size_t (*split)(size_t), size_t *body,
    const char **why)
{
	struct px_chunked c;
	size_t off = 0;
	int done = 0;

	px_chunked_init(&c, NULL);
	while (off < len) {
		size_t n = split(len - off);
		ssize_t got;

		got = px_chunked_scan(&c, in + off, n, &done, why);
		if (got < 0)
			return -1;
		if ((size_t)got > n)
			return -2;
		off += (size_t)got;
		if (done) {
			*body = off;
			return 1;
		}
		if ((size_t)got != n)
			return -2;
	}
	return 0;
}

static size_t split_all(size_t left) { return left; }
static size_t split_one(size_t left) { (void)left; return 1; }
static size_t
split_random(size_t left)
{
	size_t n = (size_t)(rand() % 7) + 1;

	return n < left ? n : left;
}

static void
test_chunked(void)
{
	size_t (*splits[])(size_t) = { split_all, split_one, split_random,
	    split_random, split_random };
	static const char *split_names[] = { "whole", "byte by byte", "random",
	    "random", "random" };
	size_t i, k;

	srand(12345);
	for (i = 0; i < sizeof(chunk_cases) / sizeof(chunk_cases[0]); i++) {
		const struct chunk_case *cc = &chunk_cases[i];
		size_t len = case_len(cc->in, cc->what);

		for (k = 0; k < sizeof(splits) / sizeof(splits[0]); k++) {
			const char *why = NULL;
			size_t body = 0;
			int rc = feed(cc->in, len, splits[k], &body, &why);
			int ok;

			if (cc->ok == 1)
				ok = rc == 1 && body == cc->body_len;
			else if (cc->ok == 2)
				ok = rc == 0;
			else
				ok = rc == -1 && contains(why, cc->why);
			tap_ok(ok, "chunked %s, %s (rc %d body %zu why %s)",
			    cc->what, split_names[k], rc, body, why != NULL ? why : "-");
		}
	}
}

static void
test_chunked_limits(void)
{
	struct px_http_limits lim = { 2, 64 };
	struct px_chunked c;
	const char *why = NULL;
	char line[PX_CHUNK_LINE_MAX + 8];
	int done;
	ssize_t got;

	px_chunked_init(&c, &lim);
	got = px_chunked_scan(&c, "0\r\nA: 1\r\nB: 2\r\n\r\nX", 18, &done, &why);
	tap_ok(got == 17 && done, "exactly max_headers trailer lines pass");
	px_chunked_init(&c, &lim);
	got = px_chunked_scan(&c, "0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 24, &done, &why);
	tap_ok(got == -1 && contains(why, "too many trailer"), "max_headers + 1 trailer lines refused");
	/* 64 bytes of trailer section exactly (incl. the final CRLF). */
	memset(line, 'v', sizeof(line));
	memcpy(line, "0\r\nX: ", 6);
	memcpy(line + 3 + 60, "\r\n\r\n", 4);
	px_chunked_init(&c, &lim);
	got = px_chunked_scan(&c, line, 67, &done, &why);
	tap_ok(got == 67 && done, "trailer section of exactly max_header_bytes passes");
	memcpy(line + 3 + 61, "\r\n\r\n", 4);
	line[3 + 60] = 'v';
	px_chunked_init(&c, &lim);
	got = px_chunked_scan(&c, line, 68, &done, &why);
	tap_ok(got == -1 && contains(why, "trailer section larger"), "max_header_bytes + 1 trailer refused");

	/* Size line: PX_CHUNK_LINE_MAX bytes pass, one more is refused. */
	memset(line, 'a', sizeof(line));
	memcpy(line, "1;", 2);
	line[PX_CHUNK_LINE_MAX - 2] = '\r';
	line[PX_CHUNK_LINE_MAX - 1] = '\n';
	px_chunked_init(&c, NULL);
	got = px_chunked_scan(&c, line, PX_CHUNK_LINE_MAX, &done, &why);
	tap_ok(got == PX_CHUNK_LINE_MAX && !done, "size line of PX_CHUNK_LINE_MAX bytes passes");
	line[PX_CHUNK_LINE_MAX - 2] = 'a';
	line[PX_CHUNK_LINE_MAX - 1] = '\r';
	line[PX_CHUNK_LINE_MAX] = '\n';
	px_chunked_init(&c, NULL);
	got = px_chunked_scan(&c, line, PX_CHUNK_LINE_MAX + 1, &done, &why);
	tap_ok(got == -1 && contains(why, "too long"), "size line one byte longer refused");

	/* Errors and the end are sticky. */
	got = px_chunked_scan(&c, "0\r\n\r\n", 5, &done, &why);
	tap_cmp_int(got, "==", -1, "after an error, scanning stays refused");
	px_chunked_init(&c, NULL);
	got = px_chunked_scan(&c, "0\r\n\r\n", 5, &done, &why);
	got = px_chunked_scan(&c, "5\r\n", 3, &done, &why);
	tap_ok(got == 0 && done, "after the end, nothing more belongs to the body");

	/* A large chunk is counted, not scanned byte by byte. */
	px_chunked_init(&c, NULL);
	got = px_chunked_scan(&c, "7fffffffffffffff\r\n", 18, &done, &why);
	tap_ok(got == 18 && c.remaining == INT64_MAX, "a 2^63-1 chunk is accepted and counted");
}

/* Path-override headers: a path rule refuses these. */
struct override_case {
	const char *hdr;   /* one header line, or "" */
	const char *name;  /* the name px_http_path_override() reports, or NULL */
};

static const struct override_case override_cases[] = {
	{ "", NULL },
	{ "X-Forwarded-For: 10.0.0.1\r\n", NULL },
	{ "X-Original-URLs: /admin\r\n", NULL },
	{ "X-Original-URL: /admin\r\n", "X-Original-URL" },
	{ "x-original-url: /admin\r\n", "x-original-url" },
	{ "X-Rewrite-URL: /admin\r\n", "X-Rewrite-URL" },
	{ "X-Original-URI: /admin\r\n", "X-Original-URI" },
	{ "X-Forwarded-Prefix: /admin\r\n", "X-Forwarded-Prefix" },
	{ "X-Forwarded-Path: /admin\r\n", "X-Forwarded-Path" },
	{ "X-FORWARDED-URI: /admin\r\n", "X-FORWARDED-URI" },
	{ "X-Envoy-Original-Path: /admin\r\n", "X-Envoy-Original-Path" },
	{ "X-Kept: 1\r\nX-Rewrite-URL:\r\n", "X-Rewrite-URL" },
};

static void
test_path_override(void)
{
	size_t i;

	for (i = 0; i < sizeof(override_cases) / sizeof(override_cases[0]); i++) {
		const struct override_case *t = &override_cases[i];
		struct px_http_request req;
		char in[512];
		size_t head_len = 0, nl = 0;
		const char *name;

		snprintf(in, sizeof(in), "GET http://h.test/hooks/x HTTP/1.1\r\nHost: h.test\r\n%s\r\n", t->hdr);
		if (!parse_ok(in, &req, &head_len)) {
			tap_ok(0, "override case %zu parses", i);
			continue;
		}
		name = px_http_path_override(&req, &nl);
		tap_ok(t->name == NULL ? name == NULL : span_eq(name, nl, t->name),
		    "path override case %zu: %s", i, t->name ? t->name : "none");
	}
}

/* Method-override headers: a methods= rule refuses these. */
static const struct override_case method_override_cases[] = {
	{ "", NULL },
	{ "X-Original-URL: /admin\r\n", NULL },
	{ "X-HTTP-Method-Overrides: DELETE\r\n", NULL },
	{ "X-HTTP-Method-Override: DELETE\r\n", "X-HTTP-Method-Override" },
	{ "x-http-method-override: DELETE\r\n", "x-http-method-override" },
	{ "X-HTTP-Method: MERGE\r\n", "X-HTTP-Method" },
	{ "X-METHOD-OVERRIDE: PUT\r\n", "X-METHOD-OVERRIDE" },
	{ "X-Kept: 1\r\nX-Method-Override:\r\n", "X-Method-Override" },
};

static void
test_method_override(void)
{
	size_t i;

	for (i = 0; i < sizeof(method_override_cases) / sizeof(method_override_cases[0]); i++) {
		const struct override_case *t = &method_override_cases[i];
		struct px_http_request req;
		char in[512];
		size_t head_len = 0, nl = 0;
		const char *name;

		snprintf(in, sizeof(in), "GET http://h.test/x HTTP/1.1\r\nHost: h.test\r\n%s\r\n", t->hdr);
		if (!parse_ok(in, &req, &head_len)) {
			tap_ok(0, "method override case %zu parses", i);
			continue;
		}
		name = px_http_method_override(&req, &nl);
		tap_ok(t->name == NULL ? name == NULL : span_eq(name, nl, t->name),
		    "method override case %zu: %s", i, t->name ? t->name : "none");
	}
}

int
main(void)
{
	test_bad_cases();
	test_early_failure();
	test_valid_requests();
	test_mismatch_fields();
	test_incremental();
	test_resume_copied();
	test_limits();
	test_responses();
	test_build_upstream();
	test_build_tls();
	test_build_client();
	test_chunked();
	test_chunked_limits();
	test_path_override();
	test_method_override();
	return tap_done();
}
