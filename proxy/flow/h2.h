/*
 * proxy/flow/h2.h: an HTTP/2 relay between a client and one upstream inside a
 * terminated TLS tunnel, on libnghttp2.
 *
 * One nghttp2 server session faces the client and one client session faces
 * the upstream; each client stream becomes one upstream stream.  The module
 * does no I/O: the caller feeds the decrypted bytes each side sent
 * (px_h2_client_input(), px_h2_upstream_input()) and the module hands the
 * bytes for each side to the send functions the caller gave.  Every request
 * is put to the caller's decide function once its headers are complete; the
 * module parses and relays, the caller decides (host, path, injection).
 *
 * Flow control: DATA is relayed as it arrives.  Each side's received bytes
 * are given back to that side's flow-control window (WINDOW_UPDATE) only
 * once the other side's session has taken them into a frame, so what the
 * module holds per direction is bounded by the windows it advertises
 * (PX_H2_STREAM_WINDOW per stream, PX_H2_CONN_WINDOW per connection).
 */
#ifndef POSTERN_PROXY_H2_H
#define POSTERN_PROXY_H2_H

#include "proxy/proto/leak.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The limits the client-facing session advertises in its SETTINGS and
 * enforces (RFC 9113 §6.5.2), and the windows both sessions advertise. */
#define PX_H2_MAX_STREAMS 100
#define PX_H2_MAX_HEADER_LIST 65536	/* bytes, RFC 9113 §6.5.2 accounting */
#define PX_H2_MAX_HEADERS 256		/* fields in one header block */
#define PX_H2_STREAM_WINDOW (256 * 1024)
#define PX_H2_CONN_WINDOW (1024 * 1024)

struct px_h2;

/* One header field as received: lower-case name (HTTP/2 allows no other),
 * not NUL-terminated, valid during the decide call only. */
struct px_h2_header {
	const char *name;
	size_t namelen;
	const char *value;
	size_t valuelen;
};

/* A request whose headers are complete.  The strings are NUL-terminated
 * and valid during the decide call only.  authority is :authority, or the
 * Host header when the client sent no :authority (RFC 9113 §8.3.1), or NULL.
 * headers are the regular fields (no pseudo-header) in the client's order. */
struct px_h2_req {
	int32_t stream_id;
	const char *method;
	const char *scheme;
	const char *authority;
	const char *path;
	const struct px_h2_header *headers;
	size_t nheaders;
};

/* One header the module sets on a forwarded request: every field of that
 * name the client sent is removed (case-insensitively) and NAME: VALUE is
 * added, never indexed by HPACK (RFC 7541 §7.1.3: a credential must not
 * sit in the compression table).  This is how a credential is injected.
 * VALUE NULL: the fields of that name are removed, nothing is added. */
struct px_h2_edit {
	const char *name;
	const char *value;
};

enum px_h2_action {
	PX_H2_REFUSE = 0,	/* the default: deny unless told otherwise */
	PX_H2_FORWARD,
};

/* What decide answers.  The module fills it with a refusal (500,
 * "no_verdict") before the call.  FORWARD: edits[0..nedits) are applied,
 * edit_set names them for the audit (e.g. the secret's name; never a
 * value).  REFUSE: the module answers the stream itself with status, an
 * x-postern-reason: reason field and a short text body; the upstream never
 * sees the stream.  Every pointer must stay valid until the
 * px_h2_client_input() call that called decide returns (the module applies
 * the edits after decide returns, and copies what it keeps); reason must
 * be a token (letters, digits, '_', '-'). */
struct px_h2_verdict {
	enum px_h2_action action;
	const struct px_h2_edit *edits;
	size_t nedits;
	const char *edit_set;
	int status;
	const char *reason;
	/* FORWARD: text the module keeps for the done callback (the audit's
	 * rule and its FILE:LINE; NULL: none), copied. */
	const char *note, *note_at;
	/* FORWARD: a string that lives as long as the program (a reason
	 * code), kept for the done callback; NULL: none. */
	const char *would;
	/* The snapshot that decided the stream, kept for the done callback
	 * (config copied, at most 15 bytes; NULL: none): a later stream's
	 * decision may have moved the connection to another. */
	unsigned long generation;
	const char *config;
	/* FORWARD: the request's DATA is scanned with LEAK (proxy/proto/
	 * leak.h; NULL: not scanned), which must outlive the stream, for the
	 * needles of LEAK_ACTIVE.  One found resets the stream both ways
	 * before that DATA goes, and the done callback is told (leak_hit). */
	const struct px_leak *leak;
	uint64_t leak_active;
};

/* What the done callback is told when a stream ends.  Strings are valid
 * during the call only; method/path/authority are "" when the client sent
 * none.  path has no query.  status is the final status the client was sent
 * (0: none).  refused: the module answered (a verdict or a limit), reason
 * says why.  bytes_up/bytes_down count DATA payload relayed client to
 * upstream and to the client.  reset: the HTTP/2 error code of a
 * RST_STREAM either way (0: none).  edits names the header fields set
 * (names only), edit_set the verdict's name for them (NULL: none); note and
 * note_at the FORWARD verdict's. */
struct px_h2_stream_info {
	int32_t stream_id;
	const char *method;
	const char *authority;
	const char *path;
	int status;
	int refused;
	const char *reason;
	uint64_t bytes_up;
	uint64_t bytes_down;
	uint32_t reset;
	const char *edit_set;
	const char *const *edits;
	size_t nedits;
	const char *note, *note_at;	/* the verdict's (NULL: none) */
	const char *would;		/* the verdict's (NULL: none) */
	unsigned long generation;	/* the verdict's */
	const char *config;		/* the verdict's (NULL: none) */
	/* Occurrences of a value the response carried, overwritten before
	 * the client (px_h2_set_scrub()): how many, the first one's secret
	 * and where ("header", "body"). */
	size_t reflected;
	const char *reflected_name, *reflected_where;
	/* The request's DATA carried a needle of the verdict's leak scan:
	 * which, and in which encoding (enum px_leak_enc); the stream was
	 * reset, and refused/reason say "secret_misdirected". */
	int leak_hit;
	const struct px_leak *leak;	/* the verdict's */
	size_t leak_needle;
	int leak_enc;
};

/* Take LEN bytes for one side.  Return how many were taken (0..LEN; 0 means
 * "full now": the module stops writing that side until px_h2_flush()), or
 * a negative errno-style code to end the relay. */
typedef ssize_t (*px_h2_send_fn)(void *arg, const uint8_t *buf, size_t len);
typedef void (*px_h2_decide_fn)(void *arg, const struct px_h2_req *req,
    struct px_h2_verdict *v);
typedef void (*px_h2_done_fn)(void *arg, const struct px_h2_stream_info *info);

struct px_h2_cbs {
	px_h2_send_fn send_client;
	px_h2_send_fn send_upstream;
	px_h2_decide_fn decide;
	px_h2_done_fn done;	/* may be NULL */
};

/* A relay with the callbacks CBS (copied) and ARG passed to each.  Queues
 * the server SETTINGS for the client and the client preface for the
 * upstream; call px_h2_flush() to write them.  Returns NULL with errno set
 * (ENOMEM). */
struct px_h2 *px_h2_new(const struct px_h2_cbs *cbs, void *arg);

/*
 * From now on, every response field (names and values, interim heads and
 * trailers too) and every DATA byte from the upstream is scanned with
 * SCRUB (proxy/proto/scrub.h; NULL: none), which must outlive H: a value is
 * overwritten, the bytes that could begin one wait for the next DATA or
 * the stream's end, and a response with a Content-Encoding is refused
 * (502, bad_upstream_response).
 */
struct px_scrub;
void px_h2_set_scrub(struct px_h2 *h, const struct px_scrub *scrub);

/* Free H: streams still open are reported to done (with reset
 * NGHTTP2_CANCEL when they had none).  Writes nothing.  NULL is a no-op. */
void px_h2_free(struct px_h2 *h);

/* Feed LEN bytes the client (upstream) sent, then write what both sides
 * have to be sent.  Returns 0; -EPROTO when that side broke the protocol
 * (its session is being ended with GOAWAY, px_h2_error() says why; keep
 * flushing until px_h2_over()); -ENOMEM; or the negative code a send
 * function returned.  Decide and done are called from inside. */
int px_h2_client_input(struct px_h2 *h, const uint8_t *buf, size_t len);
int px_h2_upstream_input(struct px_h2 *h, const uint8_t *buf, size_t len);

/* The upstream closed its side (EOF or a TLS error): streams it had not
 * finished are reset to the client, which is sent GOAWAY; streams already
 * answered are finished.  Returns as px_h2_upstream_input(). */
int px_h2_upstream_eof(struct px_h2 *h);

/* Both sides may take bytes again: write what is pending.  Returns as
 * px_h2_client_input(). */
int px_h2_flush(struct px_h2 *h);

/* 1 when the relay is over (the client-facing session neither reads nor
 * writes any more: GOAWAY exchanged and streams finished, or a protocol
 * error): the caller closes both sides.  0 otherwise. */
int px_h2_over(const struct px_h2 *h);

/* Why the relay ended on an error ("client: ...", "upstream: ..."), or NULL.
 * Owned by H. */
const char *px_h2_error(const struct px_h2 *h);

/* Bytes of DATA the module holds (received from one side, not yet taken by
 * the other), for tests and /status. */
size_t px_h2_buffered(const struct px_h2 *h);

#endif
