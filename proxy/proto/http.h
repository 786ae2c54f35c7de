/*
 * proxy/proto/http.h: the strict HTTP/1.1 message parser of postern-proxy.
 *
 * Request heads from clients, response heads from upstream servers and
 * chunked bodies are all hostile bytes.  They are parsed here through one
 * bounds-checked cursor, with every ambiguity that lets two parsers disagree
 * about where a message ends (request smuggling) refused rather than
 * repaired: RFC 9112 lets a recipient choose between rejecting and fixing up
 * many of these forms, and a proxy that fixes them up is exactly the second
 * parser an attacker needs.  This module owns no sockets and no buffers; it
 * reads the caller's bytes and, for the head builders, appends to the
 * caller's evbuffer.
 */
#ifndef POSTERN_PROXY_HTTP_H
#define POSTERN_PROXY_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf/host.h"

struct evbuffer;

/* Return values of the head parsers.  Every negative value means "refuse":
 * the caller answers with *STATUS (requests) or 502 (responses) and closes
 * the connection, since after a framing error nothing that follows on the
 * same connection can be trusted. */
#define PX_HTTP_OK 0
#define PX_HTTP_INCOMPLETE 1
#define PX_HTTP_ERROR (-1)
/* A forward request whose Host header names another host or port than its
 * absolute URI (reason host_mismatch).  *STATUS is 400. */
#define PX_HTTP_HOST_MISMATCH (-2)

/* Defaults of the [proxy] keys max_headers and max_header_bytes. */
#define PX_HTTP_DEFAULT_MAX_HEADERS 100
#define PX_HTTP_DEFAULT_MAX_HEADER_BYTES 32768

/* Longest chunk-size line (size and extensions) the chunked scanner takes.
 * Extensions carry nothing we use; an unbounded one is a way to make the
 * proxy read forever without ever counting body bytes (CVE-2024-22019). */
#define PX_CHUNK_LINE_MAX 4096

struct px_http_limits {
	size_t max_headers;      /* header (or trailer) field lines */
	size_t max_header_bytes; /* bytes of the whole head, final CRLFCRLF included */
};

/* One field line.  NAME and VALUE point into the caller's buffer and are not
 * NUL-terminated; VALUE has its leading and trailing whitespace removed. */
struct px_http_header {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
};

/*
 * Private to the parser: where a call that returned PX_HTTP_INCOMPLETE
 * stopped, so that the next call on the same, grown buffer checks only the
 * new bytes instead of starting over (feeding a 32 KiB head one byte at a
 * time must not cost 32 Ki full scans).  Lives in the caller's struct so
 * that nothing is allocated; the caller never looks inside it.  Only this
 * member carries over from one call to the next, so a caller that keeps its
 * struct px_http_request (or _response) on the stack may keep just this
 * between reads: copy it out after PX_HTTP_INCOMPLETE, and back in after
 * px_http_request_init() before the next call (proxy/flow/conn.c does, to keep
 * a connection small).
 */
struct px_http_resume {
	size_t len;       /* bytes seen by the call that saved it; 0: none */
	size_t pos;       /* bytes before this were checked */
	int phase;
	size_t m1, m2, m3, m4;
	size_t lines;
	int64_t content_length;
	unsigned flags;
	unsigned n_upgrade;
};

enum px_http_target {
	PX_TARGET_ORIGIN = 1, /* "/path?q"            RFC 9112 §3.2.1 */
	PX_TARGET_ABSOLUTE,   /* "http://host/path"   RFC 9112 §3.2.2 */
	PX_TARGET_AUTHORITY,  /* "host:port" (CONNECT) RFC 9112 §3.2.3 */
	PX_TARGET_ASTERISK,   /* "*" (OPTIONS)        RFC 9112 §3.2.4 */
};

/*
 * A parsed request head.  Every pointer points into the buffer given to
 * px_http_parse_request() (or, for PATH, to a static "/"), so the buffer must
 * stay unchanged and in place while the request is used.  HEADERS is an
 * array owned by the caller (see px_http_request_init()).
 */
struct px_http_request {
	const char *method;
	size_t method_len;
	int is_connect;
	int is_head;
	const char *target;
	size_t target_len;
	enum px_http_target form;
	int minor; /* 0 or 1: HTTP/1.0 or HTTP/1.1 */
	/* From an absolute-form or authority-form target, in normal form. */
	struct cf_host host;
	uint16_t port; /* the URI's port, or 80 for http:// without one */
	int port_given;
	/*
	 * Origin form: the target.  Absolute form: the path and query, never
	 * the fragment; "/" when the URI has neither.  When the URI has a query
	 * but an empty path ("http://h?q") this starts with '?' and the origin
	 * form sent upstream is "/" followed by it (RFC 9112 §3.2.1);
	 * px_http_build_upstream_head() does that.
	 */
	const char *path;
	size_t path_len;
	int has_host_header;
	struct cf_host host_hdr;
	uint16_t host_hdr_port; /* 0 when the Host header has no port */
	int64_t content_length; /* -1 when absent */
	int chunked;            /* Transfer-Encoding: chunked */
	int keep_alive;         /* RFC 9112 §9.3, as seen by a proxy */
	int upgrade_websocket;  /* HTTP/1.1, Upgrade: websocket, Connection: upgrade */
	int expect_continue;    /* Expect: 100-continue */
	size_t nheaders;
	struct px_http_header *headers; /* set by px_http_request_init() */
	size_t headers_cap;
	struct px_http_resume resume;   /* private */
};

/*
 * A parsed upstream response head.  Pointers into the parsed buffer as for
 * struct px_http_request.
 */
struct px_http_response {
	int minor;      /* 0 or 1 */
	int status;     /* 100-599 */
	const char *reason;
	size_t reason_len;
	/* Body bytes after the head: 0 when no_body (whatever the header
	 * says, e.g. for HEAD), -1 when chunked or close-delimited. */
	int64_t content_length;
	int chunked;            /* body framed by px_chunked_scan() */
	int close_delimited;    /* body runs until upstream closes (RFC 9112 §6.3 item 8) */
	int no_body;            /* HEAD, 1xx, 204, 304: the head is the whole message */
	int informational;      /* 1xx other than 101: another response head follows */
	int keep_alive;         /* the upstream connection may be reused */
	int upgrade_websocket;  /* 101 with Upgrade: websocket and Connection: upgrade */
	size_t nheaders;
	struct px_http_header *headers; /* set by px_http_response_init() */
	size_t headers_cap;
	struct px_http_resume resume;   /* private */
};

/*
 * Prepare REQ for px_http_parse_request(): zero it and give it the caller's
 * array HEADERS of CAP entries, which the parser fills and the caller owns
 * (stack or connection memory; nothing here allocates).  The number of header
 * lines accepted is the smaller of CAP and the limit's max_headers, so CAP
 * should be at least max_headers.
 */
void px_http_request_init(struct px_http_request *req,
    struct px_http_header *headers, size_t cap);

/*
 * Parse a request head from BUF[0..LEN).  REQ must have been prepared with
 * px_http_request_init().  After PX_HTTP_INCOMPLETE the caller calls again
 * with the same REQ (or one given its resume, see struct px_http_resume)
 * and the same bytes grown by what arrived since (the
 * buffer may have moved, e.g. by evbuffer_pullup(), but its first bytes must
 * be unchanged); the new call then checks only the new bytes.  To parse
 * anything else (the next request on the connection), call
 * px_http_request_init() first.  Returns:
 *   PX_HTTP_OK: *HEAD_LEN is the length of the head including its final
 *     CRLFCRLF (and one tolerated leading CRLF, RFC 9112 §2.2); the body,
 *     if any, starts there.
 *   PX_HTTP_INCOMPLETE: no complete head yet; every byte seen so far was
 *     checked, so a bad byte fails on arrival rather than at the end.
 *   PX_HTTP_ERROR: refuse with *STATUS (400, or 431 when the head exceeds
 *     LIM's max_headers or max_header_bytes, also while still incomplete).
 *   PX_HTTP_HOST_MISMATCH: a forward request whose Host header names another
 *     host or port than its URI; *STATUS is 400; REQ's target fields and
 *     host_hdr are filled so that the refusal can name both.  (For CONNECT
 *     the Host header is checked for syntax only: the tunnel goes to the
 *     authority, and clients differ on whether Host carries the port.)
 * On a negative return *WHY is a static English phrase for the 400 body and
 * the audit log; REQ's fields other than those named above are unspecified.
 * LIM NULL means the defaults.  The calls that make up one head cost
 * O(head length) in all, plus one full pass when it completes.
 */
int px_http_parse_request(const char *buf, size_t len,
    const struct px_http_limits *lim, struct px_http_request *req,
    size_t *head_len, int *status, const char **why);

/* As px_http_request_init(), for a response. */
void px_http_response_init(struct px_http_response *resp,
    struct px_http_header *headers, size_t cap);

/*
 * Parse an upstream response head from BUF[0..LEN), with the same calling
 * convention as px_http_parse_request().  REQUEST_WAS_HEAD says whether the
 * request was HEAD, which with the status decides whether a body follows
 * (RFC 9112 §6.3).  Returns PX_HTTP_OK with *HEAD_LEN set,
 * PX_HTTP_INCOMPLETE, or PX_HTTP_ERROR with *WHY: a malformed or oversized
 * upstream head, for which the caller answers 502 and closes the upstream
 * connection.  A 101 that does not switch to WebSocket is refused (the only
 * upgrade postern passes through).  After a 1xx (resp->informational) the
 * caller forwards it and parses the next head.
 */
int px_http_parse_response(const char *buf, size_t len,
    const struct px_http_limits *lim, int request_was_head,
    struct px_http_response *resp, size_t *head_len, const char **why);

/*
 * The name of the first header of REQ that some back end takes as the
 * request's path instead of the request line's (X-Original-URL and
 * X-Rewrite-URL: IIS URL Rewrite, Symfony, Zend; X-Original-URI: nginx
 * auth_request set-ups; X-Forwarded-Prefix, X-Forwarded-Path,
 * X-Forwarded-Uri: Spring, Traefik, ASP.NET PathBase; X-Envoy-Original-Path),
 * as it appears in the request (NAME_LEN bytes, not NUL-terminated), or NULL
 * when there is none.  A path-prefix rule cannot vouch for such a request.
 */
const char *px_http_path_override(const struct px_http_request *req, size_t *name_len);
/* Nonzero when the header name NAME (LEN bytes, any case) is one of
 * those px_http_path_override() looks for (HTTP/2 streams ask it). */
int px_http_is_path_override(const char *name, size_t len);

/*
 * The name of the first header of REQ that some back end takes as the
 * request's method instead of the request line's (X-HTTP-Method-Override:
 * Google APIs, Express method-override, ASP.NET Web API; X-HTTP-Method:
 * OData, SharePoint; X-Method-Override), as px_http_path_override() gives
 * it, or NULL.  A rule narrowed by method cannot vouch for such a request.
 */
const char *px_http_method_override(const struct px_http_request *req, size_t *name_len);
/* Nonzero when the header name NAME (LEN bytes, any case) is one of
 * those px_http_method_override() looks for. */
int px_http_is_method_override(const char *name, size_t len);

/*
 * Append to OUT the head to send upstream for the absolute-form request REQ:
 * the origin-form request line "METHOD PATH HTTP/1.1", a Host header made
 * from the URI (RFC 9112 §3.2.2: a proxy regenerates Host), every other
 * header in its order except the hop-by-hop ones (Connection, Keep-Alive,
 * Proxy-Connection, TE, Trailer, Upgrade unless WebSocket is passed through,
 * and every header named in Connection) and every Proxy-* header (so
 * Proxy-Authorization never leaks upstream), then "Via: 1.1 postern" and
 * "Connection: keep-alive" ("Connection: Upgrade" for WebSocket).
 * Content-Length and Transfer-Encoding are kept: the body is streamed
 * unchanged.  REQ and the buffer it points into are only read.  Returns 0,
 * -EINVAL when REQ is not absolute-form, or -ENOMEM (OUT may then hold part
 * of the head; the caller closes the connection).
 */
int px_http_build_upstream_head(const struct px_http_request *req,
    struct evbuffer *out);

/*
 * Append to OUT the head to send upstream for REQ, an origin-form request
 * read inside a TLS tunnel the proxy terminates: the request
 * line "METHOD TARGET HTTP/1.x", where TARGET is REQ's path and query with
 * QUERY (QLEN bytes, "NAME=VALUE", or NULL) as the last query parameter
 * (and, with QUERY, every parameter of REQ named NAME and every empty one
 * dropped); "Host: HOST" (HOST as text, with ":PORT" unless PORT is 443,
 * RFC 9110 §7.2); REQ's headers as px_http_build_upstream_head() passes
 * them (hop-by-hop and Proxy-* dropped, and Host, regenerated above);
 * EXTRA (ELEN bytes of whole "Name: value\r\n" lines, or NULL); then Via
 * and Connection.  The caller removes from REQ's table the headers EXTRA
 * replaces.  Returns 0 or -ENOMEM.
 */
int px_http_build_tls_head(const struct px_http_request *req, const char *host, uint16_t port,
    const char *query, size_t qlen, const char *extra, size_t elen, struct evbuffer *out);

/*
 * Append to OUT the head to send to the client for the upstream response
 * RESP: "HTTP/1.1 STATUS REASON" (a proxy sends its own version, RFC 9110
 * §6.2), the headers less hop-by-hop and Proxy-* ones as above, then
 * "Via: 1.1 postern" and, except on a 1xx, "Connection: keep-alive" when
 * KEEP_ALIVE (the client connection stays open: the caller decides from
 * req->keep_alive and resp->close_delimited) or "Connection: close", or
 * "Connection: Upgrade" with the Upgrade header for a WebSocket 101.
 * Returns 0 or -ENOMEM.
 */
int px_http_build_client_head(const struct px_http_response *resp,
    int keep_alive, struct evbuffer *out);

/* The chunked-body scanner's state; treat as opaque, it is public only so
 * that it can live inside the caller's connection without an allocation. */
struct px_chunked {
	int state;
	unsigned ndigits;       /* hex digits of the current chunk size */
	size_t line;            /* bytes of the current size or trailer line */
	uint64_t remaining;     /* data bytes left in the current chunk */
	size_t trailer_lines;
	size_t trailer_bytes;
	size_t max_headers;
	size_t max_header_bytes;
	const char *why;        /* sticky error */
};

/*
 * Start scanning a new chunked body (RFC 9112 §7.1) whose trailer section is
 * held to LIM (NULL: the defaults).  C is the caller's; nothing is
 * allocated and nothing needs freeing.
 */
void px_chunked_init(struct px_chunked *c, const struct px_http_limits *lim);

/*
 * Scan the next LEN bytes at BUF of a chunked body.  The bytes are only read:
 * they pass through unchanged, and this finds where the body ends and
 * refuses malformed framing.  Returns how many bytes at BUF belong to the
 * body: LEN while it goes on, fewer when it ends inside BUF, in which case
 * *DONE is set to 1 and the rest belongs to the next message.  Returns -1
 * with *WHY set on malformed framing: a chunk size with more than 16 hex
 * digits or of 2^63 or more, a bad chunk extension or a size line over
 * PX_CHUNK_LINE_MAX, a bare CR or LF, data not followed by CRLF, or a
 * trailer section that is malformed or over the limits.  After an error or
 * the end, further calls return -1 or 0 respectively.
 */
ssize_t px_chunked_scan(struct px_chunked *c, const char *buf, size_t len,
    int *done, const char **why);

/*
 * The same scan, for a recipient that cannot take the chunked coding (an
 * HTTP/1.0 client, RFC 9112 §7.1): the chunk data of BUF[0..LEN) is
 * appended to DATA, the framing (sizes, extensions, CRLFs, trailers) is
 * dropped.  Returns the bytes of BUF consumed, -1 with *WHY, or -ENOMEM.
 */
ssize_t px_chunked_decode(struct px_chunked *c, const char *buf, size_t len,
    struct evbuffer *data, int *done, const char **why);

#endif
