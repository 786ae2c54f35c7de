/*
 * tests/fuzz/fuzz-http.c: the strict HTTP/1.1 parser (proxy/proto/http.c).
 *
 * The same bytes go through the request parser, the response parser and the
 * chunked scanner.  Invariants checked (abort() on violation):
 *  - an accepted head is complete: the prefix one byte shorter is
 *    INCOMPLETE, never OK nor an error (errors must not depend on where
 *    the input is cut);
 *  - the framing fields agree with each other (never both a length and
 *    chunked; no body on CONNECT);
 *  - the head built for upstream (or for the client) parses again, with
 *    the same framing, and carries no Proxy-* header;
 *  - feeding a head in pieces, each call on a fresh copy of the grown
 *    buffer (so that it moves, as an evbuffer_pullup() may), gives the
 *    same answer as parsing it whole;
 *  - the chunked scanner gives the same answer whole, byte by byte and in
 *    uneven pieces.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proxy/proto/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NH 128

static struct px_http_header h1[NH], h2[NH], h3[NH];

static int
has_proxy_header(const struct px_http_header *h, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		if (h[i].name_len < 6)
			continue;
		for (k = 0; k < 6; k++) {
			char c = h[i].name[k];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c + 32);
			if (c != "proxy-"[k])
				break;
		}
		if (k == 6)
			return 1;
	}
	return 0;
}

/* The answer of a parse, to compare whole and piecewise feeding. */
struct answer {
	int rc;
	int status;
	const char *why;
	size_t head_len;
};

static int
same(const struct answer *a, const struct answer *b)
{
	return a->rc == b->rc && (a->rc == PX_HTTP_OK ? a->head_len == b->head_len :
	    a->status == b->status && a->why == b->why);
}

/* Feed BUF to a parser in pieces of STEP bytes, copying the grown prefix
 * to a fresh allocation for every call. */
static void
piecewise(const char *buf, size_t size, size_t step,
    const struct px_http_limits *lim, int response, struct answer *ans)
{
	struct px_http_request req;
	struct px_http_response resp;
	size_t k = 0;

	px_http_request_init(&req, h2, NH);
	px_http_response_init(&resp, h2, NH);
	ans->rc = PX_HTTP_INCOMPLETE;
	while (ans->rc == PX_HTTP_INCOMPLETE && k < size) {
		char *copy;

		k = size - k > step ? k + step : size;
		copy = malloc(k);
		if (copy == NULL)
			abort();
		memcpy(copy, buf, k);
		ans->status = 0;
		ans->why = NULL;
		if (response)
			ans->rc = px_http_parse_response(copy, k, lim, 0, &resp,
			    &ans->head_len, &ans->why);
		else
			ans->rc = px_http_parse_request(copy, k, lim, &req,
			    &ans->head_len, &ans->status, &ans->why);
		/* On short inputs, also at every step: the resumed answer is
		 * the answer of a fresh parse of the same prefix. */
		if (size <= 512) {
			struct px_http_request freq;
			struct px_http_response fresp;
			struct answer fresh = { 0, 0, NULL, 0 };

			if (response) {
				px_http_response_init(&fresp, h3, NH);
				fresh.rc = px_http_parse_response(copy, k, lim, 0,
				    &fresp, &fresh.head_len, &fresh.why);
			} else {
				px_http_request_init(&freq, h3, NH);
				fresh.rc = px_http_parse_request(copy, k, lim, &freq,
				    &fresh.head_len, &fresh.status, &fresh.why);
			}
			if (fresh.rc == PX_HTTP_INCOMPLETE ?
			    ans->rc != PX_HTTP_INCOMPLETE : !same(&fresh, ans))
				abort();
		}
		free(copy);
	}
}

static void
check_request(const char *buf, size_t size, const struct px_http_limits *lim)
{
	static const struct px_http_limits big = { NH, 65536 };
	struct px_http_request req, again;
	struct evbuffer *out;
	const char *why = NULL;
	size_t head_len = 0, head2 = 0;
	int status = 0, rc;

	px_http_request_init(&req, h1, NH);
	rc = px_http_parse_request(buf, size, lim, &req, &head_len, &status, &why);
	if (rc < 0 && (why == NULL || (status != 400 && status != 431)))
		abort();
	if (size > 0) {
		struct answer whole = { rc, rc < 0 ? status : 0, rc < 0 ? why : NULL,
		    rc == PX_HTTP_OK ? head_len : 0 }, part;
		size_t step = (size_t)((uint8_t)buf[size - 1] % 29) + 1;

		piecewise(buf, size, step, lim, 0, &part);
		if (!same(&whole, &part))
			abort();
	}
	if (rc != PX_HTTP_OK)
		return;
	if (head_len == 0 || head_len > size || head_len > lim->max_header_bytes)
		abort();
	if (req.chunked && req.content_length >= 0)
		abort();
	if (req.is_connect && (req.chunked || req.content_length >= 0))
		abort();
	if (req.nheaders > lim->max_headers)
		abort();
	{
		/* A reported path-override header is one of the request's. */
		size_t nl = 0, i;
		const char *o = px_http_path_override(&req, &nl);

		for (i = 0; o != NULL && i < req.nheaders; i++)
			if (req.headers[i].name == o && req.headers[i].name_len == nl)
				break;
		if (o != NULL && (i == req.nheaders || nl < 13))
			abort();
	}
	px_http_request_init(&again, h2, NH);
	rc = px_http_parse_request(buf, head_len - 1, lim, &again, &head2, &status, &why);
	if (rc != PX_HTTP_INCOMPLETE)
		abort();
	if (req.form != PX_TARGET_ABSOLUTE)
		return;

	out = evbuffer_new();
	if (out == NULL)
		return;
	if (px_http_build_upstream_head(&req, out) == 0) {
		size_t n = evbuffer_get_length(out);
		const char *p = (const char *)evbuffer_pullup(out, -1);

		px_http_request_init(&again, h2, NH);
		rc = px_http_parse_request(p, n, &big, &again, &head2, &status, &why);
		if (rc != PX_HTTP_OK || head2 != n)
			abort();
		if (again.form != PX_TARGET_ORIGIN || again.minor != req.minor ||
		    !again.has_host_header ||
		    !cf_host_equal(&again.host_hdr, &req.host) ||
		    again.chunked != req.chunked ||
		    again.content_length != req.content_length ||
		    again.upgrade_websocket != req.upgrade_websocket ||
		    has_proxy_header(again.headers, again.nheaders))
			abort();
	}
	evbuffer_free(out);
}

static void
check_response(const char *buf, size_t size, const struct px_http_limits *lim,
    int head)
{
	static const struct px_http_limits big = { NH, 65536 };
	struct px_http_response resp, again;
	struct evbuffer *out;
	const char *why = NULL;
	size_t head_len = 0, head2 = 0;
	int rc;

	px_http_response_init(&resp, h1, NH);
	rc = px_http_parse_response(buf, size, lim, head, &resp, &head_len, &why);
	if (rc < 0 && why == NULL)
		abort();
	if (size > 0 && !head) {
		struct answer whole = { rc, 0, rc < 0 ? why : NULL,
		    rc == PX_HTTP_OK ? head_len : 0 }, part;
		size_t step = (size_t)((uint8_t)buf[size - 1] % 29) + 1;

		piecewise(buf, size, step, lim, 1, &part);
		if (!same(&whole, &part))
			abort();
	}
	if (rc != PX_HTTP_OK)
		return;
	if (head_len == 0 || head_len > size || head_len > lim->max_header_bytes)
		abort();
	if (resp.chunked + (resp.content_length > 0) + resp.close_delimited +
	    resp.no_body > 1)
		abort();
	if (resp.status < 100 || resp.status > 599)
		abort();
	px_http_response_init(&again, h2, NH);
	if (px_http_parse_response(buf, head_len - 1, lim, head, &again, &head2,
	    &why) != PX_HTTP_INCOMPLETE)
		abort();

	out = evbuffer_new();
	if (out == NULL)
		return;
	if (px_http_build_client_head(&resp, 1, out) == 0) {
		size_t n = evbuffer_get_length(out);
		const char *p = (const char *)evbuffer_pullup(out, -1);

		px_http_response_init(&again, h2, NH);
		rc = px_http_parse_response(p, n, &big, head, &again, &head2, &why);
		if (rc != PX_HTTP_OK || head2 != n || again.status != resp.status ||
		    again.chunked != resp.chunked ||
		    again.content_length != resp.content_length ||
		    again.close_delimited != resp.close_delimited ||
		    again.no_body != resp.no_body ||
		    again.upgrade_websocket != resp.upgrade_websocket ||
		    has_proxy_header(again.headers, again.nheaders))
			abort();
	}
	evbuffer_free(out);
}

/* Scan in pieces of STEP bytes (0: uneven pieces from the data itself). */
static ssize_t
scan(const char *buf, size_t size, size_t step, const struct px_http_limits *lim,
    int *done)
{
	struct px_chunked c;
	const char *why = NULL;
	size_t off = 0;

	px_chunked_init(&c, lim);
	*done = 0;
	while (off < size) {
		size_t n = step != 0 ? step : (size_t)((uint8_t)buf[off] % 13) + 1;
		ssize_t got;

		if (n > size - off)
			n = size - off;
		got = px_chunked_scan(&c, buf + off, n, done, &why);
		if (got < 0) {
			if (why == NULL)
				abort();
			return -1;
		}
		if ((size_t)got > n || (!*done && (size_t)got != n))
			abort();
		off += (size_t)got;
		if (*done)
			break;
	}
	return (ssize_t)off;
}

static void
check_chunked(const char *buf, size_t size, const struct px_http_limits *lim)
{
	int d1, d2, d3;
	ssize_t a = scan(buf, size, size ? size : 1, lim, &d1);
	ssize_t b = scan(buf, size, 1, lim, &d2);
	ssize_t c = scan(buf, size, 0, lim, &d3);

	if (a != b || a != c || (a >= 0 && (d1 != d2 || d1 != d3)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct px_http_limits lim = { 100, 32768 };
	const char *buf = (const char *)data;

	if (size > 65536)
		return 0;
	/* Small limits too, so that the caps are reached. */
	check_request(buf, size, &lim);
	check_response(buf, size, &lim, 0);
	check_response(buf, size, &lim, 1);
	check_chunked(buf, size, &lim);
	lim.max_headers = 3;
	lim.max_header_bytes = 200;
	check_request(buf, size, &lim);
	check_chunked(buf, size, &lim);
	return 0;
}
