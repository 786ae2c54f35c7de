/*
 * proxy/proto/http.c: the strict HTTP/1.1 message parser (see http.h).
 *
 * Heads are parsed from the start of the caller's buffer on every call,
 * through the base cursor (base/cursor.h), which can never read past the
 * bytes it was given.  Every step reports one of three outcomes: done, "ran
 * out of bytes" (the head is not complete yet) or a refusal.  So a prefix of
 * a valid head is always INCOMPLETE, and a bad byte is refused as soon as it
 * arrives instead of after the head completes.  The cursor is clipped to
 * max_header_bytes, which makes the byte cap hold before anything more is
 * buffered, not after a line ends.
 *
 * Wire bytes are classified by the tables below, never by <ctype.h> (whose
 * answers depend on the locale and which is undefined for negative chars).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/cursor.h"
#include "conf/host.h"
#include "proxy/proto/http.h"

/* ------------------------------------------------------------------ */
/* Byte classes (RFC 9110 §5.6.2, §5.5; RFC 5234 B.1)                  */

/* tchar: the characters of a token (method, field name, coding). */
static int
is_tchar(uint8_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'':
	case '*': case '+': case '-': case '.': case '^': case '_':
	case '`': case '|': case '~':
		return 1;
	default:
		return 0;
	}
}

/* A byte allowed inside a field value: field-vchar (VCHAR / obs-text), SP
 * and HTAB.  Everything else is a control byte (NUL, CR, LF, DEL, ...). */
static int
is_field_byte(uint8_t c)
{
	return (c >= 0x21 && c != 0x7f) || c == ' ' || c == '\t';
}

static int
is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

static uint8_t
lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

/* Case-insensitive comparison of S[0..LEN) with the lower-case literal LIT. */
static int
ieq(const char *s, size_t len, const char *lit)
{
	size_t i;

	if (len != strlen(lit))
		return 0;
	for (i = 0; i < len; i++)
		if (lower((uint8_t)s[i]) != (uint8_t)lit[i])
			return 0;
	return 1;
}

/* Does S[0..LEN) start with the lower-case literal LIT, ignoring case? */
static int
iprefix(const char *s, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return len >= n && ieq(s, n, lit);
}

/* Results of one parsing step. */
enum { R_ERR = -1, R_OK = 0, R_NEED = 1 };

/* ------------------------------------------------------------------ */
/* Head parsing shared by requests and responses                       */

struct hp {
	struct bs_cursor c;
	const char *buf;	/* the bytes under the cursor; m1..m4 index it */
	int status;      /* on R_ERR: 400, 431 or 502 */
	int err_status;  /* 400 for a request, 502 for a response */
	int mismatch;    /* the error is host_mismatch */
	const char *why;
	size_t max_lines;
	struct px_http_header *hdrs;
	size_t cap;
	size_t n;
	/* What the field lines said. */
	int64_t content_length;
	int seen_te;
	int chunked;
	int seen_host;
	struct cf_host host_hdr;
	uint16_t host_hdr_port;
	int conn_close;
	int conn_keepalive;
	int conn_upgrade;
	int n_upgrade;
	int upgrade_ws;
	int expect_continue;
	/* Where the scan stands: the phase of the line in progress and its
	 * offsets, saved in struct px_http_resume between calls. */
	int phase;
	size_t m1, m2, m3, m4;
};

static int
fail(struct hp *h, const char *why)
{
	h->status = h->err_status;
	h->why = why;
	return R_ERR;
}

static int
fail_431(struct hp *h, const char *why)
{
	/* RFC 6585 §5; an upstream that sends an oversized head is a 502. */
	h->status = h->err_status == 400 ? 431 : h->err_status;
	h->why = why;
	return R_ERR;
}

/* CRLF.  A lone LF or a CR followed by anything but LF is refused: RFC 9112
 * §2.2 allows a recipient to take a bare LF as a line end, which is how a
 * front end and a back end come to disagree (CVE-2023-30589). */
static int
parse_crlf(struct hp *h)
{
	int b = bs_cur_peek(&h->c);

	if (b < 0)
		return R_NEED;
	if (b == '\n')
		return fail(h, "bare LF (line ends must be CRLF)");
	if (b != '\r')
		return fail(h, "unexpected byte at the end of a line");
	b = bs_cur_peek_at(&h->c, 1);
	if (b < 0)
		return R_NEED;
	if (b != '\n')
		return fail(h, "bare CR (line ends must be CRLF)");
	bs_cur_consume(&h->c, 2);
	return R_OK;
}

/*
 * A comma-separated list of tokens (RFC 9110 §5.6.1): empty elements and OWS
 * around commas are allowed, anything else that is not a token is not.
 * Returns 1 with the next token, 0 at the end, -EINVAL when malformed.
 */
static int
list_next(struct bs_cursor *c, const char **tok, size_t *tok_len)
{
	const unsigned char *start;
	int b;

	bs_cur_skip(c, ", \t");
	if (bs_cur_left(c) == 0)
		return 0;
	start = bs_cur_ptr(c);
	while ((b = bs_cur_peek(c)) >= 0 && is_tchar(b))
		bs_cur_consume(c, 1);
	if (bs_cur_ptr(c) == start)
		return -EINVAL;
	*tok = (const char *)start;
	*tok_len = (size_t)(bs_cur_ptr(c) - start);
	bs_cur_skip(c, " \t");
	if (bs_cur_left(c) > 0 && bs_cur_peek(c) != ',')
		return -EINVAL;
	return 1;
}

/* Content-Length (RFC 9110 §8.6): 1*DIGIT.  No sign, no space, no list
 * ("5, 5"), at most 2^62, so that the body length always fits an int64_t
 * with room to add to it.  Returns 0 or -EINVAL. */
static int
parse_content_length(const char *v, size_t len, int64_t *out)
{
	uint64_t n;

	/* Leading zeros are allowed (RFC 9110 §8.6 is 1*DIGIT); the cap
	 * keeps every later sum of lengths far from overflow. */
	if (bs_num_parse(v, len, (uint64_t)1 << 62, BS_NUM_ZEROS, &n) < 0)
		return -EINVAL;
	*out = (int64_t)n;
	return 0;
}

/* What one complete field line means for framing and routing. */
static int
field_semantics(struct hp *h, const struct px_http_header *f)
{
	struct bs_cursor list;
	const char *tok;
	size_t tok_len;
	int rc;

	if (ieq(f->name, f->name_len, "content-length")) {
		/* Even an equal duplicate is refused: RFC 9110 §8.6 lets a
		 * recipient merge them, and merging is a decision another
		 * parser on the path may make differently. */
		if (h->content_length >= 0)
			return fail(h, "duplicate Content-Length header");
		if (parse_content_length(f->value, f->value_len,
		    &h->content_length) < 0)
			return fail(h, "Content-Length is not plain digits up to 2^62");
	} else if (ieq(f->name, f->name_len, "transfer-encoding")) {
		/* Only exactly "chunked": RFC 9112 §6.1 would have a server
		 * answer an unknown coding with 501, and a list such as
		 * "chunked, chunked" or "gzip, chunked" is where parsers part
		 * ways; one header line only, since two lines are one list. */
		if (h->seen_te)
			return fail(h, "duplicate Transfer-Encoding header");
		h->seen_te = 1;
		if (!ieq(f->value, f->value_len, "chunked"))
			return fail(h, "Transfer-Encoding other than exactly chunked");
		h->chunked = 1;
	} else if (h->err_status == 400 && ieq(f->name, f->name_len, "host")) {
		/* (Host means something in requests only.) */
		/* RFC 9112 §3.2: more than one Host line, or an invalid one,
		 * is a 400. */
		if (h->seen_host)
			return fail(h, "duplicate Host header");
		if (f->value_len == 0)
			return fail(h, "empty Host header");
		if (cf_authority_parse(f->value, f->value_len, 0, &h->host_hdr,
		    &h->host_hdr_port, NULL) != 0)
			return fail(h, "malformed Host header");
		h->seen_host = 1;
	} else if (ieq(f->name, f->name_len, "connection")) {
		/* RFC 9110 §7.6.1: connection options are tokens. */
		bs_cur_init(&list, f->value, f->value_len);
		while ((rc = list_next(&list, &tok, &tok_len)) == 1) {
			if (ieq(tok, tok_len, "close"))
				h->conn_close = 1;
			else if (ieq(tok, tok_len, "keep-alive"))
				h->conn_keepalive = 1;
			else if (ieq(tok, tok_len, "upgrade"))
				h->conn_upgrade = 1;
			else if (ieq(tok, tok_len, "content-length") ||
			    ieq(tok, tok_len, "transfer-encoding") ||
			    ieq(tok, tok_len, "host"))
				/* Naming a framing header as hop-by-hop would
				 * make us strip it and desynchronise the next
				 * hop (RFC 9110 §7.6.1: a connection option
				 * never names an end-to-end field). */
				return fail(h, "Connection header names Content-Length, Transfer-Encoding or Host");
		}
		if (rc < 0)
			return fail(h, "malformed Connection header");
	} else if (ieq(f->name, f->name_len, "upgrade")) {
		h->n_upgrade++;
		if (ieq(f->value, f->value_len, "websocket"))
			h->upgrade_ws = 1;
	} else if (h->err_status == 400 && ieq(f->name, f->name_len, "expect")) {
		if (ieq(f->value, f->value_len, "100-continue"))
			h->expect_continue = 1;
	}
	/* RFC 9112 §6.3 item 3 lets Transfer-Encoding override
	 * Content-Length; refusing both is the smuggling-proof reading. */
	if (h->seen_te && h->content_length >= 0)
		return fail(h, "both Content-Length and Transfer-Encoding");
	return R_OK;
}

/* Phases of the line in progress. */
enum {
	P_RL_BEGIN,   /* request line: optional empty line, then the method */
	P_RL_METHOD,  /* m1: method start */
	P_RL_TARGET,  /* m1, m2: method start and end */
	P_RL_VERSION, /* m3: target end */
	P_SL_BEGIN,   /* status line up to the reason phrase */
	P_SL_REASON,  /* m1: reason start */
	P_F_START,    /* at the start of a field line or of the final CRLF */
	P_F_NAME,     /* m1: name start */
	P_F_VALUE,    /* m1 name start, m2 colon, m3 first and m4 after last
	               * non-OWS value byte (m3 SIZE_MAX: none yet) */
};

/*
 * The field lines (RFC 9112 §5.1: field-name ":" OWS field-value OWS CRLF),
 * up to and including the empty line that ends the head.  Written as phases
 * so that a later call can resume inside a line (see struct
 * px_http_resume).
 */
static int
parse_fields(struct hp *h)
{
	struct bs_cursor *c = &h->c;
	struct px_http_header f;
	int b;
	int rc;

	for (;;) {
		switch (h->phase) {
		case P_F_START:
			if ((b = bs_cur_peek(c)) < 0)
				return R_NEED;
			if (b == '\r' || b == '\n')
				return parse_crlf(h);
			/* The count cap holds as soon as one line too many
			 * starts. */
			if (h->n >= h->max_lines)
				return fail_431(h, "too many header lines");
			/* RFC 9112 §5.2 (obs-fold) and §2.2 (whitespace
			 * after the start line): a proxy may reject or
			 * unfold; unfolding is a rewrite the next hop would
			 * not have made, so reject. */
			if (is_ows(b))
				return fail(h, "obs-fold (a header line starting with whitespace)");
			h->m1 = bs_cur_pos(c);
			h->phase = P_F_NAME;
			/* fallthrough */
		case P_F_NAME:
			while ((b = bs_cur_peek(c)) >= 0 && is_tchar(b))
				bs_cur_consume(c, 1);
			if ((b = bs_cur_peek(c)) < 0)
				return R_NEED;
			if (b != ':') {
				/* RFC 9112 §5.1: no whitespace between name and
				 * colon; a server MUST reject it (CVE-2024-27982
				 * is what happens when "Content-Length : 5" is
				 * read as another field). */
				if (is_ows(b))
					return fail(h, "whitespace between header name and colon");
				if (b == '\r' || b == '\n')
					return fail(h, "header line without a colon");
				return fail(h, "invalid character in header name");
			}
			if (bs_cur_pos(c) == h->m1)
				return fail(h, "empty header name");
			h->m2 = bs_cur_pos(c);
			bs_cur_consume(c, 1);
			h->m3 = SIZE_MAX;
			h->m4 = 0;
			h->phase = P_F_VALUE;
			/* fallthrough */
		case P_F_VALUE:
			for (;;) {
				if ((b = bs_cur_peek(c)) < 0)
					return R_NEED;
				if (b == '\r')
					break;
				if (b == '\n')
					return fail(h, "bare LF (line ends must be CRLF)");
				/* RFC 9110 §5.5: NUL, CR, LF and the other
				 * controls are not field content; a recipient
				 * MAY replace them, we refuse. */
				if (!is_field_byte(b))
					return fail(h, "control character in header value");
				if (!is_ows(b)) {
					if (h->m3 == SIZE_MAX)
						h->m3 = bs_cur_pos(c);
					h->m4 = bs_cur_pos(c) + 1;
				}
				bs_cur_consume(c, 1);
			}
			if (h->m3 == SIZE_MAX)
				h->m3 = h->m4 = bs_cur_pos(c);
			if ((rc = parse_crlf(h)) != R_OK)
				return rc;
			f.name = h->buf + h->m1;
			f.name_len = h->m2 - h->m1;
			f.value = h->buf + h->m3;
			f.value_len = h->m4 - h->m3;
			h->hdrs[h->n++] = f;
			h->phase = P_F_START;
			if ((rc = field_semantics(h, &f)) != R_OK)
				return rc;
			break;
		default:
			return fail(h, "parser in a bad state");
		}
	}
}

/* Semantic flags kept across calls in struct px_http_resume. */
#define RS_TE 0x01
#define RS_CHUNKED 0x02
#define RS_HOST 0x04
#define RS_CLOSE 0x08
#define RS_KEEPALIVE 0x10
#define RS_UPGRADE 0x20
#define RS_WS 0x40
#define RS_EXPECT 0x80

static void
hp_save(const struct hp *h, size_t len, struct px_http_resume *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->len = len;
	rs->pos = bs_cur_pos(&h->c);
	rs->phase = h->phase;
	rs->m1 = h->m1;
	rs->m2 = h->m2;
	rs->m3 = h->m3;
	rs->m4 = h->m4;
	rs->lines = h->n;
	rs->content_length = h->content_length;
	rs->n_upgrade = (unsigned)h->n_upgrade;
	rs->flags = (h->seen_te ? RS_TE : 0) | (h->chunked ? RS_CHUNKED : 0) |
	    (h->seen_host ? RS_HOST : 0) | (h->conn_close ? RS_CLOSE : 0) |
	    (h->conn_keepalive ? RS_KEEPALIVE : 0) |
	    (h->conn_upgrade ? RS_UPGRADE : 0) | (h->upgrade_ws ? RS_WS : 0) |
	    (h->expect_continue ? RS_EXPECT : 0);
}

/* Take up a saved scan if it fits the buffer of LEN bytes: the same bytes,
 * grown.  Returns 1 when resumed. */
static int
hp_restore(struct hp *h, size_t len, const struct px_http_resume *rs)
{
	if (rs->len == 0 || len < rs->len || rs->lines > h->max_lines ||
	    bs_cur_set_pos(&h->c, rs->pos) < 0)
		return 0;
	h->phase = rs->phase;
	h->m1 = rs->m1;
	h->m2 = rs->m2;
	h->m3 = rs->m3;
	h->m4 = rs->m4;
	h->n = rs->lines;
	h->content_length = rs->content_length;
	h->n_upgrade = (int)rs->n_upgrade;
	h->seen_te = !!(rs->flags & RS_TE);
	h->chunked = !!(rs->flags & RS_CHUNKED);
	h->seen_host = !!(rs->flags & RS_HOST);
	h->conn_close = !!(rs->flags & RS_CLOSE);
	h->conn_keepalive = !!(rs->flags & RS_KEEPALIVE);
	h->conn_upgrade = !!(rs->flags & RS_UPGRADE);
	h->upgrade_ws = !!(rs->flags & RS_WS);
	h->expect_continue = !!(rs->flags & RS_EXPECT);
	return 1;
}

static void
hp_init(struct hp *h, const char *buf, size_t len,
    const struct px_http_limits *lim, struct px_http_header *hdrs, size_t cap,
    int err_status, int phase)
{
	size_t max_bytes = PX_HTTP_DEFAULT_MAX_HEADER_BYTES;
	size_t max_lines = PX_HTTP_DEFAULT_MAX_HEADERS;

	if (lim != NULL) {
		max_bytes = lim->max_header_bytes;
		max_lines = lim->max_headers;
	}
	memset(h, 0, sizeof(*h));
	bs_cur_init(&h->c, buf, len < max_bytes ? len : max_bytes);
	h->buf = buf;
	h->err_status = err_status;
	h->max_lines = max_lines < cap ? max_lines : cap;
	h->hdrs = hdrs;
	h->cap = cap;
	h->content_length = -1;
	h->phase = phase;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */

/*
 * Path and query of an origin-form or absolute-form target.  Besides the
 * VCHAR check already made on the request line: a %-escape must be complete
 * (RFC 3986 §2.1), a backslash is refused (some servers read it as '/'), and
 * so is a dot segment, literal or %-encoded, because the path-prefix rules
 * of allow_hosts compare paths as sent and "/hooks/../admin" must not pass
 * as a path under /hooks/ (RFC 3986 §5.2.4: clients remove dot segments
 * before sending).
 */
static int
check_path(struct hp *h, const char *p, size_t len)
{
	size_t i, seg = 0, qpos = len;

	for (i = 0; i < len; i++) {
		if (p[i] == '\\')
			return fail(h, "backslash in request target");
		if (p[i] == '%' && (i + 2 >= len ||
		    cf_hex_value((uint8_t)p[i + 1]) < 0 ||
		    cf_hex_value((uint8_t)p[i + 2]) < 0))
			return fail(h, "malformed %-escape in request target");
		if (p[i] == '?' && qpos == len)
			qpos = i;
	}
	/* Each segment of the path part (before the query). */
	for (i = 0; i <= qpos; i++) {
		if (i < qpos && p[i] != '/')
			continue;
		if (i > seg) {
			size_t j = seg, dots = 0;

			while (j < i) {
				if (p[j] == '.') {
					j++;
				} else if (j + 3 <= i && p[j] == '%' &&
				    p[j + 1] == '2' && lower((uint8_t)p[j + 2]) == 'e') {
					j += 3;
				} else {
					break;
				}
				dots++;
			}
			if (j == i && (dots == 1 || dots == 2))
				return fail(h, "dot segment in request path");
		}
		seg = i + 1;
	}
	return R_OK;
}

/* The request target (RFC 9112 §3.2), once the SP after it has arrived. */
static int
parse_target(struct hp *h, struct px_http_request *req)
{
	const char *t = req->target, *cwhy = NULL;
	size_t len = req->target_len, i, auth_start, auth_end, end;
	uint16_t port = 0;

	if (req->is_connect) {
		/* RFC 9110 §9.3.6 / RFC 9112 §3.2.3: CONNECT takes exactly
		 * host:port, and the port is not optional. */
		if (t[0] == '/' || (len == 1 && t[0] == '*'))
			return fail(h, "CONNECT target must be host:port");
		if (cf_authority_parse(t, len, 0, &req->host, &port, &cwhy) != 0)
			return fail(h, cwhy);
		if (port == 0)
			return fail(h, "CONNECT target without a port");
		req->form = PX_TARGET_AUTHORITY;
		req->port = port;
		req->port_given = 1;
		return R_OK;
	}
	if (len == 1 && t[0] == '*') {
		/* RFC 9112 §3.2.4: only for a server-wide OPTIONS. */
		if (!(req->method_len == 7 && memcmp(req->method, "OPTIONS", 7) == 0))
			return fail(h, "asterisk target with a method other than OPTIONS");
		req->form = PX_TARGET_ASTERISK;
		return R_OK;
	}
	if (t[0] == '/') {
		/* Origin form parses; the caller answers it (it is not a
		 * proxy request).  A fragment is not part of the origin form
		 * (RFC 9112 §3.2.1) and is cut off. */
		const char *hash = memchr(t, '#', len);

		req->form = PX_TARGET_ORIGIN;
		req->path = t;
		req->path_len = hash != NULL ? (size_t)(hash - t) : len;
		return check_path(h, req->path, req->path_len);
	}

	/* Absolute form (RFC 9112 §3.2.2, RFC 3986 §3): scheme ":" "//"
	 * authority path-abempty [ "?" query ]. */
	for (i = 0; i < len && t[i] != ':'; i++) {
		uint8_t b = (uint8_t)t[i];
		int alpha = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');

		if (!alpha && (i == 0 || !((b >= '0' && b <= '9') ||
		    b == '+' || b == '-' || b == '.')))
			return fail(h, "malformed request target");
	}
	if (i == 0 || i == len)
		return fail(h, "malformed request target");
	if (ieq(t, i, "https"))
		/* TLS is end to end: an https URI goes through CONNECT, the
		 * proxy never originates TLS for the client. */
		return fail(h, "https:// URI in a forward request (use CONNECT)");
	if (!ieq(t, i, "http"))
		return fail(h, "only http:// URIs are forwarded");
	if (len - i < 3 || t[i + 1] != '/' || t[i + 2] != '/')
		return fail(h, "absolute URI without an authority");
	auth_start = i + 3;
	for (auth_end = auth_start; auth_end < len; auth_end++)
		if (t[auth_end] == '/' || t[auth_end] == '?' || t[auth_end] == '#')
			break;
	if (memchr(t + auth_start, '@', auth_end - auth_start) != NULL)
		return fail(h, "userinfo in request target");
	if (cf_authority_parse(t + auth_start, auth_end - auth_start, 0,
	    &req->host, &port, &cwhy) != 0)
		return fail(h, cwhy);
	req->form = PX_TARGET_ABSOLUTE;
	req->port_given = port != 0;
	req->port = port != 0 ? port : 80; /* RFC 9110 §4.2.1 */
	/* The fragment is the client's business and never sent on. */
	for (end = auth_end; end < len && t[end] != '#'; end++)
		;
	if (end == auth_end) {
		req->path = "/";
		req->path_len = 1;
		return R_OK;
	}
	req->path = t + auth_end;
	req->path_len = end - auth_end;
	return check_path(h, req->path, req->path_len);
}

/* method SP request-target SP HTTP-version CRLF (RFC 9112 §3). */
static int
parse_request_line(struct hp *h, struct px_http_request *req)
{
	struct bs_cursor *c = &h->c;
	int b;
	int rc;

	switch (h->phase) {
	case P_RL_BEGIN:
		/* RFC 9112 §2.2: a server SHOULD ignore at least one empty
		 * line before the request line (old clients sent CRLF after a
		 * POST body).  Exactly one is ignored; more is refused. */
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b == '\r' || b == '\n') {
			if ((rc = parse_crlf(h)) != R_OK)
				return rc;
			if ((b = bs_cur_peek(c)) < 0)
				return R_NEED;
			if (b == '\r' || b == '\n')
				return fail(h, "more than one empty line before the request line");
		}
		h->m1 = bs_cur_pos(c);
		h->phase = P_RL_METHOD;
		/* fallthrough */
	case P_RL_METHOD:
		while ((b = bs_cur_peek(c)) >= 0 && is_tchar(b))
			bs_cur_consume(c, 1);
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b != ' ') {
			if (bs_cur_pos(c) != h->m1 && (is_ows(b) || b == '\r' || b == '\n'))
				return fail(h, "request line must be METHOD SP TARGET SP VERSION");
			return fail(h, "invalid character in method");
		}
		if (bs_cur_pos(c) == h->m1)
			return fail(h, "request line must be METHOD SP TARGET SP VERSION");
		h->m2 = bs_cur_pos(c);
		bs_cur_consume(c, 1);
		h->phase = P_RL_TARGET;
		/* fallthrough */
	case P_RL_TARGET:
		req->method = h->buf + h->m1;
		req->method_len = h->m2 - h->m1;
		req->is_connect = req->method_len == 7 &&
		    memcmp(req->method, "CONNECT", 7) == 0;
		req->is_head = req->method_len == 4 &&
		    memcmp(req->method, "HEAD", 4) == 0;
		/* The target: VCHARs only (RFC 9112 §3.2, RFC 3986 §2);
		 * exactly one SP on each side, so "GET  /" and
		 * "GET /\tHTTP/1.1" fail. */
		for (;;) {
			if ((b = bs_cur_peek(c)) < 0)
				return R_NEED;
			if (b == ' ')
				break;
			if (b == '\r' || b == '\n' || b == '\t')
				return fail(h, "request line must be METHOD SP TARGET SP VERSION");
			if (b >= 0x80)
				return fail(h, "non-ASCII byte in request target");
			if (b < 0x21 || b == 0x7f)
				return fail(h, "control character in request target");
			bs_cur_consume(c, 1);
		}
		if (bs_cur_pos(c) == h->m2 + 1)
			return fail(h, "request line must be METHOD SP TARGET SP VERSION");
		req->target = h->buf + h->m2 + 1;
		req->target_len = bs_cur_pos(c) - h->m2 - 1;
		if ((rc = parse_target(h, req)) != R_OK)
			return rc;
		h->m3 = bs_cur_pos(c);
		h->phase = P_RL_VERSION;
		/* fallthrough */
	case P_RL_VERSION:
		/* Short enough to be read again from its start. */
		if (bs_cur_set_pos(c, h->m3 + 1) < 0)
			return R_NEED;
		/* RFC 9112 §2.3: only the two versions this proxy speaks. */
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b == ' ')
			return fail(h, "request line must be METHOD SP TARGET SP VERSION");
		rc = bs_cur_expect(c, "HTTP/1.", 7);
		if (rc == -EINVAL)
			return fail(h, "unsupported HTTP version (only HTTP/1.0 and HTTP/1.1)");
		if (rc < 0)
			return R_NEED;
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b != '0' && b != '1')
			return fail(h, "unsupported HTTP version (only HTTP/1.0 and HTTP/1.1)");
		req->minor = b - '0';
		bs_cur_consume(c, 1);
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b == ' ' || b == '\t')
			return fail(h, "request line must be METHOD SP TARGET SP VERSION");
		if (b != '\r' && b != '\n')
			return fail(h, "unsupported HTTP version (only HTTP/1.0 and HTTP/1.1)");
		if ((rc = parse_crlf(h)) != R_OK)
			return rc;
		h->phase = P_F_START;
		return R_OK;
	default:
		return fail(h, "parser in a bad state");
	}
}

/* Decisions that need the whole head. */
static int
finish_request(struct hp *h, struct px_http_request *req)
{
	/* RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400. */
	if (req->minor == 1 && !h->seen_host)
		return fail(h, "missing Host header (required by HTTP/1.1)");
	/* RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means the
	 * framing is faulty. */
	if (h->chunked && req->minor == 0)
		return fail(h, "Transfer-Encoding in an HTTP/1.0 request");
	/* RFC 9110 §9.3.6: a CONNECT request has no content; a length header
	 * on one would make the bytes after the head ambiguous (body, or the
	 * start of the tunnel?). */
	if (req->is_connect && (h->content_length >= 0 || h->chunked))
		return fail(h, "CONNECT request with a body length header");

	req->content_length = h->content_length;
	req->chunked = h->chunked;
	req->expect_continue = h->expect_continue;
	req->has_host_header = h->seen_host;
	if (h->seen_host) {
		req->host_hdr = h->host_hdr;
		req->host_hdr_port = h->host_hdr_port;
	}
	/* RFC 9112 §9.3: "close" ends the connection; HTTP/1.1 persists by
	 * default; an HTTP/1.0 "keep-alive" is honoured only when the
	 * recipient is not a proxy, and we are one. */
	req->keep_alive = !h->conn_close && req->minor == 1;
	/* RFC 9110 §7.8 (Upgrade is ignored in HTTP/1.0) and RFC 6455 §4.1
	 * (a WebSocket handshake is a GET).  Any other upgrade (h2c!) is
	 * stripped as hop-by-hop, so it never reaches upstream. */
	req->upgrade_websocket = req->minor == 1 && h->conn_upgrade &&
	    h->n_upgrade == 1 && h->upgrade_ws && req->method_len == 3 &&
	    memcmp(req->method, "GET", 3) == 0;

	/*
	 * RFC 9112 §3.2.2 has an origin server ignore Host for an absolute
	 * target; a proxy that checks one name and a server that routes on
	 * the other is a bypass, so the two must agree
	 * (host_mismatch).  Ports compare as effective ports.  For CONNECT the
	 * Host header is only checked for syntax: the tunnel goes to the
	 * authority, and clients differ in whether Host there has a port.
	 */
	if (req->form == PX_TARGET_ABSOLUTE && h->seen_host) {
		uint16_t hport = h->host_hdr_port != 0 ? h->host_hdr_port : 80;

		if (!cf_host_equal(&req->host, &h->host_hdr) || hport != req->port) {
			h->mismatch = 1;
			return fail(h, "host_mismatch: the Host header names another host than the request URI");
		}
	}
	return R_OK;
}

void
px_http_request_init(struct px_http_request *req,
    struct px_http_header *headers, size_t cap)
{
	memset(req, 0, sizeof(*req));
	req->headers = headers;
	req->headers_cap = headers != NULL ? cap : 0;
	req->content_length = -1;
}

/* The whole request head from the start of the buffer. */
static int
parse_request_full(struct hp *h, struct px_http_request *req)
{
	int rc = R_OK;

	if (h->phase <= P_RL_VERSION)
		rc = parse_request_line(h, req);
	if (rc == R_OK)
		rc = parse_fields(h);
	req->nheaders = h->n;
	if (rc == R_OK)
		rc = finish_request(h, req);
	return rc;
}

int
px_http_parse_request(const char *buf, size_t len,
    const struct px_http_limits *lim, struct px_http_request *req,
    size_t *head_len, int *status, const char **why)
{
	struct px_http_header *hdrs = req->headers;
	size_t cap = req->headers_cap;
	struct px_http_resume rs = req->resume;
	struct hp h;
	int rc;

	px_http_request_init(req, hdrs, cap);
	hp_init(&h, buf, len, lim, hdrs, req->headers_cap, 400, P_RL_BEGIN);
	/* A resumed scan only checks the new bytes; its fields are not
	 * kept, so when it finds the end of the head, the head is parsed
	 * once more from its start to fill REQ with pointers into this
	 * buffer (which may have moved since the last call). */
	if (rs.phase >= P_RL_METHOD && hp_restore(&h, len, &rs)) {
		rc = h.phase <= P_RL_VERSION ? parse_request_line(&h, req) : R_OK;
		if (rc == R_OK)
			rc = parse_fields(&h);
		if (rc == R_OK) {
			px_http_request_init(req, hdrs, cap);
			hp_init(&h, buf, len, lim, hdrs, req->headers_cap, 400,
			    P_RL_BEGIN);
			rc = parse_request_full(&h, req);
		}
	} else {
		rc = parse_request_full(&h, req);
	}
	if (rc == R_NEED) {
		/* The cursor stopped at max_header_bytes: more bytes than
		 * that and still no end of head. */
		if (len > h.c.len) {
			*status = 431;
			*why = "request head larger than max_header_bytes";
			return PX_HTTP_ERROR;
		}
		hp_save(&h, len, &req->resume);
		return PX_HTTP_INCOMPLETE;
	}
	if (rc == R_ERR) {
		*status = h.status;
		*why = h.why;
		return h.mismatch ? PX_HTTP_HOST_MISMATCH : PX_HTTP_ERROR;
	}
	*head_len = bs_cur_pos(&h.c);
	return PX_HTTP_OK;
}

/* ------------------------------------------------------------------ */
/* Responses                                                           */

/* HTTP-version SP status-code SP [ reason-phrase ] CRLF (RFC 9112 §4). */
static int
parse_status_line(struct hp *h, struct px_http_response *resp)
{
	struct bs_cursor *c = &h->c;
	size_t i;
	int b;
	int rc;

	if (h->phase == P_SL_BEGIN) {
		rc = bs_cur_expect(c, "HTTP/1.", 7);
		if (rc == -EINVAL)
			return fail(h, "upstream response is not HTTP/1.0 or HTTP/1.1");
		if (rc < 0)
			return R_NEED;
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b != '0' && b != '1')
			return fail(h, "upstream response is not HTTP/1.0 or HTTP/1.1");
		resp->minor = b - '0';
		bs_cur_consume(c, 1);
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b != ' ')
			return fail(h, "malformed upstream status line");
		bs_cur_consume(c, 1);
		/* RFC 9110 §15: three digits, 100-599. */
		resp->status = 0;
		for (i = 0; i < 3; i++) {
			if ((b = bs_cur_peek(c)) < 0)
				return R_NEED;
			if (b < '0' || b > '9' || (i == 0 && (b < '1' || b > '5')))
				return fail(h, "malformed upstream status code");
			resp->status = resp->status * 10 + (b - '0');
			bs_cur_consume(c, 1);
		}
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		/* A missing reason phrase and its SP ("HTTP/1.1 200\r\n") is
		 * taken: it changes nothing about framing, and servers send
		 * it. */
		if (b == '\r' || b == '\n') {
			h->m1 = bs_cur_pos(c);
		} else if (b != ' ') {
			return fail(h, "malformed upstream status code");
		} else {
			bs_cur_consume(c, 1);
			h->m1 = bs_cur_pos(c);
		}
		h->phase = P_SL_REASON;
	}
	if (h->phase != P_SL_REASON)
		return fail(h, "parser in a bad state");
	for (;;) {
		if ((b = bs_cur_peek(c)) < 0)
			return R_NEED;
		if (b == '\r' || b == '\n')
			break;
		if (!is_field_byte(b))
			return fail(h, "control character in upstream reason phrase");
		bs_cur_consume(c, 1);
	}
	resp->reason = h->buf + h->m1;
	resp->reason_len = bs_cur_pos(c) - h->m1;
	if ((rc = parse_crlf(h)) != R_OK)
		return rc;
	h->phase = P_F_START;
	return R_OK;
}

/* Message length of a response, RFC 9112 §6.3. */
static int
finish_response(struct hp *h, struct px_http_response *resp, int request_was_head)
{
	int st = resp->status;

	if (h->chunked && resp->minor == 0)
		return fail(h, "Transfer-Encoding in an HTTP/1.0 upstream response");
	/* 101 turns the connection into something else; the only something
	 * else postern relays is WebSocket (RFC 9110 §15.2.2, §7.8). */
	if (st == 101) {
		if (resp->minor != 1 || !h->conn_upgrade || h->n_upgrade != 1 ||
		    !h->upgrade_ws)
			return fail(h, "upstream 101 that does not switch to WebSocket");
		resp->upgrade_websocket = 1;
		resp->no_body = 1;
		resp->content_length = 0;
		return R_OK;
	}
	/* Item 1: HEAD, 1xx, 204 and 304 end at the head, whatever
	 * Content-Length or Transfer-Encoding say. */
	if (request_was_head || (st >= 100 && st < 200) || st == 204 || st == 304) {
		resp->no_body = 1;
		resp->informational = st >= 100 && st < 200;
		resp->content_length = 0;
		resp->keep_alive = !h->conn_close &&
		    (resp->minor == 1 || h->conn_keepalive);
		return R_OK;
	}
	if (h->chunked) {
		resp->chunked = 1;               /* item 4 */
	} else if (h->content_length >= 0) {
		resp->content_length = h->content_length; /* item 6 */
	} else {
		resp->close_delimited = 1;       /* item 8 */
	}
	/* RFC 9112 §9.3; a close-delimited body ends the connection. */
	resp->keep_alive = !h->conn_close && !resp->close_delimited &&
	    (resp->minor == 1 || h->conn_keepalive);
	return R_OK;
}

void
px_http_response_init(struct px_http_response *resp,
    struct px_http_header *headers, size_t cap)
{
	memset(resp, 0, sizeof(*resp));
	resp->headers = headers;
	resp->headers_cap = headers != NULL ? cap : 0;
	resp->content_length = -1;
}

static int
parse_response_full(struct hp *h, struct px_http_response *resp,
    int request_was_head)
{
	int rc = R_OK;

	if (h->phase <= P_SL_REASON)
		rc = parse_status_line(h, resp);
	if (rc == R_OK)
		rc = parse_fields(h);
	resp->nheaders = h->n;
	if (rc == R_OK)
		rc = finish_response(h, resp, request_was_head);
	return rc;
}

int
px_http_parse_response(const char *buf, size_t len,
    const struct px_http_limits *lim, int request_was_head,
    struct px_http_response *resp, size_t *head_len, const char **why)
{
	struct px_http_header *hdrs = resp->headers;
	size_t cap = resp->headers_cap;
	struct px_http_resume rs = resp->resume;
	struct hp h;
	int rc;

	px_http_response_init(resp, hdrs, cap);
	hp_init(&h, buf, len, lim, hdrs, resp->headers_cap, 502, P_SL_BEGIN);
	/* As for requests: resume, and parse again in full at the end. */
	if (rs.phase >= P_SL_REASON && hp_restore(&h, len, &rs)) {
		rc = h.phase == P_SL_REASON ? parse_status_line(&h, resp) : R_OK;
		if (rc == R_OK)
			rc = parse_fields(&h);
		if (rc == R_OK) {
			px_http_response_init(resp, hdrs, cap);
			hp_init(&h, buf, len, lim, hdrs, resp->headers_cap, 502,
			    P_SL_BEGIN);
			rc = parse_response_full(&h, resp, request_was_head);
		}
	} else {
		rc = parse_response_full(&h, resp, request_was_head);
	}
	if (rc == R_NEED) {
		if (len > h.c.len) {
			*why = "upstream response head larger than max_header_bytes";
			return PX_HTTP_ERROR;
		}
		hp_save(&h, len, &resp->resume);
		return PX_HTTP_INCOMPLETE;
	}
	if (rc == R_ERR) {
		*why = h.why;
		return PX_HTTP_ERROR;
	}
	*head_len = bs_cur_pos(&h.c);
	return PX_HTTP_OK;
}

/* ------------------------------------------------------------------ */
/* Head building                                                       */

/* Is NAME listed as a connection option in any Connection header? */
static int
named_in_connection(const struct px_http_header *hdrs, size_t n,
    const char *name, size_t name_len)
{
	struct bs_cursor list;
	const char *tok;
	size_t i, tok_len;

	for (i = 0; i < n; i++) {
		if (!ieq(hdrs[i].name, hdrs[i].name_len, "connection"))
			continue;
		bs_cur_init(&list, hdrs[i].value, hdrs[i].value_len);
		while (list_next(&list, &tok, &tok_len) == 1) {
			if (tok_len == name_len) {
				size_t k;

				for (k = 0; k < tok_len; k++)
					if (lower((uint8_t)tok[k]) != lower((uint8_t)name[k]))
						break;
				if (k == tok_len)
					return 1;
			}
		}
	}
	return 0;
}

/*
 * Headers that describe one connection and not the message (RFC 9110
 * §7.6.1): the fixed list, whatever Connection names, and every Proxy-*
 * header, which was meant for us and never for the next hop.
 */
static int
is_hop_by_hop(const struct px_http_header *hdrs, size_t n,
    const struct px_http_header *f, int keep_upgrade)
{
	if (ieq(f->name, f->name_len, "upgrade"))
		return !keep_upgrade;
	if (ieq(f->name, f->name_len, "connection") ||
	    ieq(f->name, f->name_len, "keep-alive") ||
	    ieq(f->name, f->name_len, "te") ||
	    ieq(f->name, f->name_len, "trailer") ||
	    iprefix(f->name, f->name_len, "proxy-"))
		return 1;
	return named_in_connection(hdrs, n, f->name, f->name_len);
}

static int
add_headers(struct evbuffer *out, const struct px_http_header *hdrs, size_t n,
    int keep_upgrade, int skip_host)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct px_http_header *f = &hdrs[i];

		if (is_hop_by_hop(hdrs, n, f, keep_upgrade))
			continue;
		if (skip_host && ieq(f->name, f->name_len, "host"))
			continue;
		if (evbuffer_add(out, f->name, f->name_len) != 0 ||
		    evbuffer_add(out, ": ", 2) != 0 ||
		    evbuffer_add(out, f->value, f->value_len) != 0 ||
		    evbuffer_add(out, "\r\n", 2) != 0)
			return -ENOMEM;
	}
	return 0;
}

int
px_http_is_path_override(const char *name, size_t len)
{
	static const char *const names[] = {
		"x-original-url", "x-rewrite-url", "x-original-uri", "x-forwarded-prefix",
		"x-forwarded-path", "x-forwarded-uri", "x-envoy-original-path",
	};
	size_t k;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (ieq(name, len, names[k]))
			return 1;
	return 0;
}

const char *
px_http_path_override(const struct px_http_request *req, size_t *name_len)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++) {
		const struct px_http_header *f = &req->headers[i];

		if (px_http_is_path_override(f->name, f->name_len)) {
			*name_len = f->name_len;
			return f->name;
		}
	}
	return NULL;
}

/*
 * The heads are built with evbuffer_add() only: evbuffer_add_printf()
 * formats into a scratch buffer first and cost some 1,100 instructions a
 * call, three or four calls a request.
 */

/* "Host: HOST\r\n", with ":PORT" unless PORT is DEFPORT. */
static int
add_host(struct evbuffer *out, const char *host, uint16_t port, uint16_t defport)
{
	char p[8];
	size_t i = sizeof(p);
	unsigned v = port;

	p[--i] = '\n';
	p[--i] = '\r';
	if (port != defport) {
		do {
			p[--i] = (char)('0' + v % 10);
			v /= 10;
		} while (v != 0);
		p[--i] = ':';
	}
	return evbuffer_add(out, "Host: ", 6) != 0 || evbuffer_add(out, host, strlen(host)) != 0 ||
	    evbuffer_add(out, p + i, sizeof(p) - i) != 0 ? -ENOMEM : 0;
}

/* Via, Connection and the end of a request head. */
static int
add_via(struct evbuffer *out, int upgrade)
{
	static const char ka[] = "Via: 1.1 postern\r\nConnection: keep-alive\r\n\r\n";
	static const char up[] = "Via: 1.1 postern\r\nConnection: Upgrade\r\n\r\n";

	return (upgrade ? evbuffer_add(out, up, sizeof(up) - 1) :
	    evbuffer_add(out, ka, sizeof(ka) - 1)) != 0 ? -ENOMEM : 0;
}

int
px_http_is_method_override(const char *name, size_t len)
{
	return ieq(name, len, "x-http-method-override") || ieq(name, len, "x-http-method") ||
	    ieq(name, len, "x-method-override");
}

const char *
px_http_method_override(const struct px_http_request *req, size_t *name_len)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++) {
		const struct px_http_header *f = &req->headers[i];

		if (px_http_is_method_override(f->name, f->name_len)) {
			*name_len = f->name_len;
			return f->name;
		}
	}
	return NULL;
}

int
px_http_build_upstream_head(const struct px_http_request *req,
    struct evbuffer *out)
{
	char host[CF_HOST_TEXT_MAX];
	int rc = -EINVAL;

	if (req->form != PX_TARGET_ABSOLUTE)
		goto out;
	rc = -ENOMEM;
	if (evbuffer_add(out, req->method, req->method_len) != 0 ||
	    evbuffer_add(out, " ", 1) != 0 ||
	    (req->path[0] != '/' && evbuffer_add(out, "/", 1) != 0) ||
	    evbuffer_add(out, req->path, req->path_len) != 0 ||
	    /*
	     * An HTTP/1.0 client's request goes upstream as HTTP/1.0, so that
	     * the server answers with a framing the client understands: no
	     * chunked coding and no 1xx (RFC 9110 §15.2, RFC 9112 §7.1).
	     */
	    evbuffer_add(out, req->minor == 0 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n", 11) != 0)
		goto out;
	/* RFC 9112 §3.2.2: a proxy generates Host from the target; RFC 9110
	 * §7.2: first, and without the default port. */
	cf_host_format(&req->host, host, sizeof(host));
	if (add_host(out, host, req->port, 80) != 0)
		goto out;
	if (add_headers(out, req->headers, req->nheaders,
	    req->upgrade_websocket, 1) != 0)
		goto out;
	/* RFC 9110 §7.6.3: every intermediary adds itself to Via. */
	if (add_via(out, req->upgrade_websocket) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

int
px_http_build_tls_head(const struct px_http_request *req, const char *host, uint16_t port,
    const char *query, size_t qlen, const char *extra, size_t elen, struct evbuffer *out)
{
	int rc = -ENOMEM;

	if (evbuffer_add(out, req->method, req->method_len) != 0 ||
	    evbuffer_add(out, " ", 1) != 0)
		goto out;
	if (query == NULL || qlen == 0) {
		if (evbuffer_add(out, req->path, req->path_len) != 0)
			goto out;
	} else {
		/* The client's parameters of the injected name (its
		 * placeholder, typically) are dropped, the others kept in
		 * order, and the injected one comes last. */
		const char *q = memchr(req->path, '?', req->path_len), *eq = memchr(query, '=', qlen);
		const char *end = req->path + req->path_len, *p, *amp;
		size_t nlen = eq != NULL ? (size_t)(eq - query) : qlen;
		int first = 1;

		if (evbuffer_add(out, req->path, q != NULL ? (size_t)(q - req->path) : req->path_len) != 0)
			goto out;
		for (p = q != NULL ? q + 1 : end; p < end; p = amp + 1) {
			size_t l, pl;

			amp = memchr(p, '&', (size_t)(end - p));
			if (amp == NULL)
				amp = end;
			l = (size_t)(amp - p);
			eq = memchr(p, '=', l);
			pl = eq != NULL ? (size_t)(eq - p) : l;
			if (l == 0 || (pl == nlen && memcmp(p, query, nlen) == 0))
				continue;
			if (evbuffer_add(out, first ? "?" : "&", 1) != 0 || evbuffer_add(out, p, l) != 0)
				goto out;
			first = 0;
		}
		if (evbuffer_add(out, first ? "?" : "&", 1) != 0 || evbuffer_add(out, query, qlen) != 0)
			goto out;
	}
	if (evbuffer_add(out, req->minor == 0 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n", 11) != 0)
		goto out;
	if (add_host(out, host, port, 443) != 0)
		goto out;
	if (add_headers(out, req->headers, req->nheaders, req->upgrade_websocket, 1) != 0)
		goto out;
	if (extra != NULL && elen > 0 && evbuffer_add(out, extra, elen) != 0)
		goto out;
	if (add_via(out, req->upgrade_websocket) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

int
px_http_build_client_head(const struct px_http_response *resp, int keep_alive,
    struct evbuffer *out)
{
	const char *conn;
	int rc = -ENOMEM;

	char st[13] = "HTTP/1.1 000 ";
	int v = resp->status < 0 ? 0 : resp->status % 1000;

	st[9] = (char)('0' + v / 100);
	st[10] = (char)('0' + v / 10 % 10);
	st[11] = (char)('0' + v % 10);
	if (evbuffer_add(out, st, sizeof(st)) != 0 ||
	    evbuffer_add(out, resp->reason, resp->reason_len) != 0 ||
	    evbuffer_add(out, "\r\n", 2) != 0)
		goto out;
	if (add_headers(out, resp->headers, resp->nheaders,
	    resp->upgrade_websocket, 0) != 0)
		goto out;
	if (resp->upgrade_websocket)
		conn = "Connection: Upgrade\r\n";
	else if (resp->informational)
		conn = "";
	else if (keep_alive)
		conn = "Connection: keep-alive\r\n";
	else
		conn = "Connection: close\r\n";
	if (evbuffer_add(out, "Via: 1.1 postern\r\n", 18) != 0 ||
	    evbuffer_add(out, conn, strlen(conn)) != 0 || evbuffer_add(out, "\r\n", 2) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* ------------------------------------------------------------------ */
/* Chunked bodies (RFC 9112 §7.1)                                      */

enum {
	CS_SIZE_FIRST,   /* first hex digit of a chunk size */
	CS_SIZE,         /* more digits, or what follows them */
	CS_EXT_SEMI,     /* BWS before ";" */
	CS_EXT_NAME_PRE, /* BWS after ";" */
	CS_EXT_NAME,
	CS_EXT_EQ,       /* BWS after the name: "=" or ";" */
	CS_EXT_VAL_PRE,  /* BWS after "=" */
	CS_EXT_TOKVAL,
	CS_EXT_QSTR,
	CS_EXT_QPAIR,
	CS_EXT_AFTER_Q,  /* after a closing quote */
	CS_SIZE_LF,      /* LF ending the size line */
	CS_DATA,
	CS_DATA_CR,
	CS_DATA_LF,
	CS_TR_START,     /* a trailer line, or the final CRLF */
	CS_TR_NAME,
	CS_TR_OWS,
	CS_TR_VALUE,
	CS_TR_LF,
	CS_END_LF,
	CS_DONE,
	CS_ERROR,
};

void
px_chunked_init(struct px_chunked *c, const struct px_http_limits *lim)
{
	memset(c, 0, sizeof(*c));
	c->state = CS_SIZE_FIRST;
	c->max_headers = lim != NULL ? lim->max_headers : PX_HTTP_DEFAULT_MAX_HEADERS;
	c->max_header_bytes = lim != NULL ? lim->max_header_bytes :
	    PX_HTTP_DEFAULT_MAX_HEADER_BYTES;
}

static int
ck_fail(struct px_chunked *c, const char *why)
{
	c->state = CS_ERROR;
	c->why = why;
	return -1;
}

/* The byte after a size, an extension name or value: ";" starts another
 * extension, CR ends the line, BWS must be followed by ";" (RFC 9112
 * §7.1.1).  Returns the next state or -1. */
static int
ck_after_ext_item(struct px_chunked *c, uint8_t b)
{
	if (b == ';')
		return CS_EXT_NAME_PRE;
	if (b == '\r')
		return CS_SIZE_LF;
	if (is_ows(b))
		return CS_EXT_SEMI;
	if (b == '\n')
		return ck_fail(c, "bare LF in chunked framing");
	return ck_fail(c, "bad chunk extension");
}

/* One byte of everything but chunk data. */
static int
ck_byte(struct px_chunked *c, uint8_t b)
{
	int v, next;

	if (c->state <= CS_SIZE_LF) {
		if (++c->line > PX_CHUNK_LINE_MAX)
			return ck_fail(c, "chunk size line too long");
	} else if (c->state >= CS_TR_START && c->state <= CS_END_LF) {
		if (++c->trailer_bytes > c->max_header_bytes)
			return ck_fail(c, "trailer section larger than max_header_bytes");
	}

	switch (c->state) {
	case CS_SIZE_FIRST:
		if ((v = cf_hex_value(b)) < 0)
			return ck_fail(c, "chunk size is not hexadecimal");
		c->remaining = (uint64_t)v;
		c->ndigits = 1;
		c->state = CS_SIZE;
		return 0;
	case CS_SIZE:
		if ((v = cf_hex_value(b)) >= 0) {
			/* 1*HEXDIG, but a size of 2^63 or more, or more than
			 * 16 digits even with leading zeros, is an overflow
			 * waiting to happen somewhere down the line. */
			if (++c->ndigits > 16 || (c->remaining >> 59) != 0)
				return ck_fail(c, "chunk size too large");
			c->remaining = (c->remaining << 4) | (uint64_t)v;
			return 0;
		}
		next = ck_after_ext_item(c, b);
		break;
	case CS_EXT_SEMI:
		if (is_ows(b))
			return 0;
		if (b != ';')
			return ck_fail(c, "bad chunk extension");
		next = CS_EXT_NAME_PRE;
		break;
	case CS_EXT_NAME_PRE:
		if (is_ows(b))
			return 0;
		if (!is_tchar(b))
			return ck_fail(c, "bad chunk extension");
		next = CS_EXT_NAME;
		break;
	case CS_EXT_NAME:
		if (is_tchar(b))
			return 0;
		if (b == '=') {
			next = CS_EXT_VAL_PRE;
		} else if (is_ows(b)) {
			next = CS_EXT_EQ;
		} else {
			next = ck_after_ext_item(c, b);
		}
		break;
	case CS_EXT_EQ:
		if (is_ows(b))
			return 0;
		if (b == '=')
			next = CS_EXT_VAL_PRE;
		else if (b == ';')
			next = CS_EXT_NAME_PRE;
		else
			return ck_fail(c, "bad chunk extension");
		break;
	case CS_EXT_VAL_PRE:
		if (is_ows(b))
			return 0;
		if (b == '"')
			next = CS_EXT_QSTR;
		else if (is_tchar(b))
			next = CS_EXT_TOKVAL;
		else
			return ck_fail(c, "bad chunk extension");
		break;
	case CS_EXT_TOKVAL:
		if (is_tchar(b))
			return 0;
		next = ck_after_ext_item(c, b);
		break;
	case CS_EXT_QSTR:
		/* qdtext and quoted-pair, RFC 9110 §5.6.4. */
		if (b == '"')
			next = CS_EXT_AFTER_Q;
		else if (b == '\\')
			next = CS_EXT_QPAIR;
		else if (is_field_byte(b))
			return 0;
		else
			return ck_fail(c, "bad chunk extension");
		break;
	case CS_EXT_QPAIR:
		if (!is_field_byte(b))
			return ck_fail(c, "bad chunk extension");
		next = CS_EXT_QSTR;
		break;
	case CS_EXT_AFTER_Q:
		next = ck_after_ext_item(c, b);
		break;
	case CS_SIZE_LF:
		if (b != '\n')
			return ck_fail(c, "bare CR in chunked framing");
		c->line = 0;
		next = c->remaining == 0 ? CS_TR_START : CS_DATA;
		break;
	case CS_DATA_CR:
		if (b != '\r')
			return ck_fail(c, "chunk data not followed by CRLF");
		next = CS_DATA_LF;
		break;
	case CS_DATA_LF:
		if (b != '\n')
			return ck_fail(c, "chunk data not followed by CRLF");
		next = CS_SIZE_FIRST;
		break;
	case CS_TR_START:
		if (b == '\r') {
			next = CS_END_LF;
			break;
		}
		if (b == '\n')
			return ck_fail(c, "bare LF in chunked framing");
		if (is_ows(b))
			return ck_fail(c, "obs-fold in trailer section");
		if (!is_tchar(b))
			return ck_fail(c, "invalid character in trailer field name");
		if (++c->trailer_lines > c->max_headers)
			return ck_fail(c, "too many trailer fields");
		next = CS_TR_NAME;
		break;
	case CS_TR_NAME:
		if (is_tchar(b))
			return 0;
		if (b == ':')
			next = CS_TR_OWS;
		else if (is_ows(b))
			return ck_fail(c, "whitespace between trailer name and colon");
		else
			return ck_fail(c, "invalid character in trailer field name");
		break;
	case CS_TR_OWS:
	case CS_TR_VALUE:
		if (b == '\r')
			next = CS_TR_LF;
		else if (b == '\n')
			return ck_fail(c, "bare LF in chunked framing");
		else if (!is_field_byte(b))
			return ck_fail(c, "control character in trailer value");
		else
			next = CS_TR_VALUE;
		break;
	case CS_TR_LF:
		if (b != '\n')
			return ck_fail(c, "bare CR in chunked framing");
		next = CS_TR_START;
		break;
	case CS_END_LF:
		if (b != '\n')
			return ck_fail(c, "bare CR in chunked framing");
		next = CS_DONE;
		break;
	default:
		return ck_fail(c, "chunked scanner in a bad state");
	}
	if (next < 0)
		return -1;
	c->state = next;
	return 0;
}

/* The scan of px_chunked_scan(); with DATA, the chunk data is also appended
 * there (px_chunked_decode). */
static ssize_t
chunked_run(struct px_chunked *c, const char *buf, size_t len, struct evbuffer *data,
    int *done, const char **why)
{
	size_t off = 0;

	*done = c->state == CS_DONE;
	if (c->state == CS_ERROR) {
		*why = c->why;
		return -1;
	}
	while (off < len && c->state != CS_DONE) {
		if (c->state == CS_DATA) {
			size_t n = len - off;

			if ((uint64_t)n > c->remaining)
				n = (size_t)c->remaining;
			if (data != NULL && evbuffer_add(data, buf + off, n) != 0) {
				*why = "out of memory";
				return -ENOMEM;
			}
			off += n;
			c->remaining -= n;
			if (c->remaining == 0)
				c->state = CS_DATA_CR;
			continue;
		}
		if (ck_byte(c, (uint8_t)buf[off]) != 0) {
			*why = c->why;
			return -1;
		}
		off++;
	}
	*done = c->state == CS_DONE;
	return (ssize_t)off;
}

ssize_t
px_chunked_scan(struct px_chunked *c, const char *buf, size_t len, int *done,
    const char **why)
{
	return chunked_run(c, buf, len, NULL, done, why);
}

ssize_t
px_chunked_decode(struct px_chunked *c, const char *buf, size_t len, struct evbuffer *data,
    int *done, const char **why)
{
	return chunked_run(c, buf, len, data, done, why);
}
