/*
 * proxy/flow/h2.c: the HTTP/2 relay of a terminated tunnel (see h2.h).
 *
 * Two nghttp2 sessions: "srv" (a server session, faces the client) and "up"
 * (a client session, faces the upstream).  A struct h2_stream joins a
 * client stream (cid) to its upstream stream (uid); it is the stream user
 * data in both sessions and lives until both halves are closed.
 *
 * Bytes one side sends on a stream wait in that stream's buffer (up: client
 * to upstream, dn: upstream to client) until the other session's data
 * source takes them into a DATA frame; only then are they consumed on the
 * receiving session (nghttp2_session_consume), which is what lets it send
 * WINDOW_UPDATE.  Automatic window updates are off, so a side that sends
 * faster than the other reads runs out of window instead of filling memory.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>

#include "proxy/flow/h2.h"
#include "proxy/proto/scrub.h"

/* The header fields of one block, copied (nghttp2's are valid only during
 * the callback). */
struct hlist {
	nghttp2_nv *nv;
	size_t n, cap;
	size_t bytes;		/* RFC 9113 §6.5.2: name + value + 32 each */
	int too_big;
};

struct h2_stream {
	struct px_h2 *h;
	struct h2_stream *prev, *next;
	int32_t cid, uid;		/* uid < 0: not forwarded */
	struct hlist req, req_trl;	/* request headers, request trailers */
	struct hlist resp, resp_trl;	/* response block being read, trailers */
	struct evbuffer *up, *dn;	/* client to upstream, upstream to client */
	unsigned req_done : 1;		/* request headers complete */
	unsigned up_eof : 1;		/* client ended its half */
	unsigned dn_eof : 1;		/* upstream ended its half (or refusal body) */
	unsigned up_deferred : 1, dn_deferred : 1;
	unsigned cl_closed : 1, up_closed : 1;
	unsigned got_final : 1;		/* final response headers received */
	unsigned refused : 1;
	int status;
	uint32_t reset;
	uint64_t bytes_up, bytes_down;
	char *method, *authority, *path, *reason, *edit_set, *note, *note_at;
	const char *would;		/* the verdict's, not copied (h2.h) */
	unsigned long generation;	/* the verdict's */
	char config[16];		/* the verdict's, copied ("": none) */
	char **edits;
	size_t nedits;
	size_t dn_safe;			/* bytes at dn's front scanned and free to go */
	struct px_scrub_state dn_scan;
	size_t reflected;		/* occurrences overwritten (scrub.h) */
	const char *reflected_name, *reflected_where;
	const struct px_leak *leak;	/* the verdict's scan of the DATA (leak.h) */
	uint64_t leak_active;
	struct px_leak_carry leak_carry;
	int leak_hit;
	struct px_leak_hit leak_what;
};

struct px_h2 {
	struct px_h2_cbs cbs;
	void *arg;
	nghttp2_session *srv, *up;
	struct h2_stream *streams;
	size_t buffered;
	int blocked_client, blocked_up;
	uint64_t sent;			/* bytes handed to the send functions */
	int send_err;			/* a send function's negative code */
	int client_goaway;		/* the client sent GOAWAY */
	int srv_goaway;			/* we sent the client a graceful GOAWAY */
	int up_goaway;			/* the upstream sent GOAWAY or went away */
	int up_local_goaway;		/* we sent the upstream GOAWAY */
	int up_dead;			/* upstream EOF or protocol error */
	int failed;			/* a protocol error ended a session */
	char last_srv[160], last_up[160];	/* nghttp2's last error texts */
	char err[256];
	const struct px_scrub *scrub;	/* what no response may carry (NULL: none) */
};

static void
set_err(struct px_h2 *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
set_err(struct px_h2 *h, const char *fmt, ...)
{
	va_list ap;

	if (h->err[0] != '\0')
		return; /* the first error is the one that ended it */
	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
}

/* ---- header lists ---- */

static void
hlist_clear(struct hlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->nv[i].name);
		/* A forwarded request's list holds the injected credential. */
		if (l->nv[i].value != NULL)
			OPENSSL_cleanse(l->nv[i].value, l->nv[i].valuelen);
		free(l->nv[i].value);
	}
	free(l->nv);
	memset(l, 0, sizeof(*l));
}

/* Append a copy of NAME: VALUE.  Over the caps, the field is dropped and
 * the list marked too_big (the caller refuses the block as a whole). */
static int
hlist_add(struct hlist *l, const uint8_t *name, size_t namelen,
    const uint8_t *value, size_t valuelen, uint8_t flags)
{
	nghttp2_nv *nv;

	if (l->too_big)
		return 0;
	l->bytes += namelen + valuelen + 32;
	if (l->bytes > PX_H2_MAX_HEADER_LIST || l->n >= PX_H2_MAX_HEADERS) {
		l->too_big = 1;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;

		nv = realloc(l->nv, cap * sizeof(*nv));
		if (nv == NULL)
			return -ENOMEM;
		l->nv = nv;
		l->cap = cap;
	}
	nv = &l->nv[l->n];
	nv->name = malloc(namelen + 1);
	nv->value = malloc(valuelen + 1);
	if (nv->name == NULL || nv->value == NULL) {
		free(nv->name);
		free(nv->value);
		return -ENOMEM;
	}
	memcpy(nv->name, name, namelen);
	nv->name[namelen] = '\0';
	memcpy(nv->value, value, valuelen);
	nv->value[valuelen] = '\0';
	nv->namelen = namelen;
	nv->valuelen = valuelen;
	nv->flags = flags & NGHTTP2_NV_FLAG_NO_INDEX;
	l->n++;
	return 0;
}

static const char *
hlist_get(const struct hlist *l, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < l->n; i++)
		if (l->nv[i].namelen == len && memcmp(l->nv[i].name, name, len) == 0)
			return (const char *)l->nv[i].value;
	return NULL;
}

/* ---- streams ---- */

static char *
dup_or_empty(const char *s, size_t max)
{
	size_t len = s ? strnlen(s, max) : 0;
	char *d = malloc(len + 1);

	if (d == NULL)
		return NULL;
	if (len > 0)
		memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

static struct h2_stream *
stream_new(struct px_h2 *h, int32_t cid)
{
	struct h2_stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->up = evbuffer_new();
	s->dn = evbuffer_new();
	if (s->up == NULL || s->dn == NULL) {
		if (s->up)
			evbuffer_free(s->up);
		if (s->dn)
			evbuffer_free(s->dn);
		free(s);
		return NULL;
	}
	s->h = h;
	s->cid = cid;
	s->uid = -1;
	s->next = h->streams;
	if (h->streams)
		h->streams->prev = s;
	h->streams = s;
	return s;
}

/* Drop what a stream still holds, giving it back to the connection windows
 * of the sessions it came from (the stream itself is gone or reset). */
static void
drop_up(struct h2_stream *s)
{
	size_t n = evbuffer_get_length(s->up);

	if (n == 0)
		return;
	evbuffer_drain(s->up, n);
	s->h->buffered -= n;
	if (!s->refused)
		nghttp2_session_consume(s->h->srv, s->cid, n);
}

static void
drop_dn(struct h2_stream *s)
{
	size_t n = evbuffer_get_length(s->dn);

	s->dn_safe = 0;
	memset(&s->dn_scan, 0, sizeof(s->dn_scan));
	if (n == 0)
		return;
	evbuffer_drain(s->dn, n);
	if (!s->refused) {
		s->h->buffered -= n;
		if (s->uid >= 0)
			nghttp2_session_consume(s->h->up, s->uid, n);
	}
}

static void
stream_report_free(struct h2_stream *s)
{
	struct px_h2 *h = s->h;
	struct px_h2_stream_info info;

	drop_up(s);
	drop_dn(s);
	if (h->cbs.done != NULL) {
		memset(&info, 0, sizeof(info));
		info.stream_id = s->cid;
		info.method = s->method ? s->method : "";
		info.authority = s->authority ? s->authority : "";
		info.path = s->path ? s->path : "";
		info.status = s->status;
		info.refused = s->refused;
		info.reason = s->reason;
		info.bytes_up = s->bytes_up;
		info.bytes_down = s->bytes_down;
		info.reset = s->reset;
		info.edit_set = s->nedits ? s->edit_set : NULL;
		info.edits = (const char *const *)s->edits;
		info.nedits = s->nedits;
		info.note = s->note;
		info.note_at = s->note_at;
		info.would = s->would;
		info.generation = s->generation;
		info.config = s->config[0] ? s->config : NULL;
		info.reflected = s->reflected;
		info.reflected_name = s->reflected_name;
		info.reflected_where = s->reflected_where;
		if (s->leak_hit) {
			info.refused = 1;
			info.reason = "secret_misdirected";
			info.leak_hit = 1;
			/* Its line is a refusal's, not an allow's. */
			info.note = info.note_at = NULL;
			info.leak = s->leak;
			info.leak_needle = s->leak_what.needle;
			info.leak_enc = (int)s->leak_what.enc;
		}
		h->cbs.done(h->arg, &info);
	}
	if (s->prev)
		s->prev->next = s->next;
	else
		h->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	if (s->cid > 0)
		nghttp2_session_set_stream_user_data(h->srv, s->cid, NULL);
	if (s->uid > 0)
		nghttp2_session_set_stream_user_data(h->up, s->uid, NULL);
	hlist_clear(&s->req);
	hlist_clear(&s->req_trl);
	hlist_clear(&s->resp);
	hlist_clear(&s->resp_trl);
	evbuffer_free(s->up);
	evbuffer_free(s->dn);
	px_leak_carry_free(&s->leak_carry);
	free(s->method);
	free(s->authority);
	free(s->path);
	free(s->reason);
	free(s->edit_set);
	free(s->note);
	free(s->note_at);
	for (size_t i = 0; i < s->nedits; i++)
		free(s->edits[i]);
	free(s->edits);
	free(s);
}

static void
maybe_finish(struct h2_stream *s)
{
	if (s->cl_closed && (s->uid < 0 || s->up_closed))
		stream_report_free(s);
}

static void
note_reset(struct h2_stream *s, uint32_t code)
{
	if (s->reset == 0)
		s->reset = code;
}

/* Reset the client's half of S with CODE (unless it is closed). */
static void
reset_client(struct h2_stream *s, uint32_t code)
{
	if (s->cl_closed)
		return;
	note_reset(s, code);
	nghttp2_submit_rst_stream(s->h->srv, NGHTTP2_FLAG_NONE, s->cid, code);
	drop_up(s);
}

static void
reset_upstream(struct h2_stream *s, uint32_t code)
{
	if (s->uid < 0 || s->up_closed)
		return;
	note_reset(s, code);
	nghttp2_submit_rst_stream(s->h->up, NGHTTP2_FLAG_NONE, s->uid, code);
	drop_dn(s);
}

/* ---- data sources: one side's buffer into the other side's frames ---- */

static ssize_t
read_buf(struct h2_stream *s, struct evbuffer *b, int eof, struct hlist *trl,
    nghttp2_session *sess, int32_t sid, nghttp2_session *from, int32_t fromid,
    uint8_t *buf, size_t len, uint32_t *flags, uint64_t *count,
    unsigned *deferred, int counted)
{
	size_t n = evbuffer_get_length(b);

	if (n > len)
		n = len;
	if (n > 0) {
		evbuffer_remove(b, buf, n);
		*count += n;
		if (counted) {
			s->h->buffered -= n;
			/* The other side has taken these bytes: only now may the
			 * side that sent them send more (RFC 9113 §5.2). */
			if (from != NULL && fromid > 0)
				nghttp2_session_consume(from, fromid, n);
		}
	}
	if (evbuffer_get_length(b) == 0 && eof) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (trl->n > 0 && nghttp2_submit_trailer(sess, sid, trl->nv,
		    trl->n) == 0)
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
		return (ssize_t)n;
	}
	if (n == 0) {
		*deferred = 1;
		return NGHTTP2_ERR_DEFERRED;
	}
	return (ssize_t)n;
}

static ssize_t
up_read_cb(nghttp2_session *sess, int32_t sid, uint8_t *buf, size_t len,
    uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2_stream *s = src->ptr;
	unsigned d = 0;
	ssize_t r;

	r = read_buf(s, s->up, s->up_eof, &s->req_trl, sess, sid, s->h->srv,
	    s->cid, buf, len, flags, &s->bytes_up, &d, 1);
	if (d)
		s->up_deferred = 1;
	return r;
}

/* ---- what a response may not carry back (scrub.h) ---- */

static void
reflected(struct h2_stream *s, size_t n, const char *name, const char *where)
{
	if (n == 0)
		return;
	if (s->reflected == 0) {
		s->reflected_name = name;
		s->reflected_where = where;
	}
	s->reflected += n;
}

/* Scan what arrived in S's dn since the last scan; dn_safe grows by what
 * may go (all of it once the upstream ended the stream).  -ENOMEM: no memory. */
static int
scrub_dn(struct h2_stream *s)
{
	size_t len = evbuffer_get_length(s->dn), m = 0;
	const char *name = NULL;
	unsigned char *p;

	if (len == s->dn_safe)
		return 0;
	if ((p = evbuffer_pullup(s->dn, (ev_ssize_t)len)) == NULL)
		return -ENOMEM;
	s->dn_safe += px_scrub_stream(s->h->scrub, &s->dn_scan, p + s->dn_safe, len - s->dn_safe,
	    s->dn_eof, &m, &name);
	reflected(s, m, name, "body");
	return 0;
}

/* Overwrite what the fields of L carry of a value, names and values. */
static void
scrub_fields(struct h2_stream *s, struct hlist *l)
{
	const char *name = NULL;
	size_t i, m = 0;

	if (s->h->scrub == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		m += px_scrub_mask(s->h->scrub, l->nv[i].name, l->nv[i].namelen, &name);
		m += px_scrub_mask(s->h->scrub, l->nv[i].value, l->nv[i].valuelen, &name);
	}
	reflected(s, m, name, "header");
}

/* Does L name a content coding, which would hide a value from the scan? */
static int
coded(const struct hlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->nv[i].namelen == 16 && memcmp(l->nv[i].name, "content-encoding", 16) == 0 &&
		    !(l->nv[i].valuelen == 8 && strncasecmp((char *)l->nv[i].value, "identity", 8) == 0))
			return 1;
	return 0;
}

static ssize_t
dn_read_cb(nghttp2_session *sess, int32_t sid, uint8_t *buf, size_t len,
    uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2_stream *s = src->ptr;
	unsigned d = 0;
	ssize_t r;

	if (s->h->scrub != NULL && !s->refused) {
		/* Only what the scan has passed goes; the rest waits for
		 * the bytes that tell whether it begins a value. */
		if (scrub_dn(s) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		if (len > s->dn_safe)
			len = s->dn_safe;
		if (len == 0 && !(s->dn_eof && evbuffer_get_length(s->dn) == 0)) {
			s->dn_deferred = 1;
			return NGHTTP2_ERR_DEFERRED;
		}
		s->dn_safe -= len;
	}
	r = read_buf(s, s->dn, s->dn_eof, &s->resp_trl, sess, sid,
	    s->refused ? NULL : s->h->up, s->uid, buf, len,
	    flags, &s->bytes_down, &d, !s->refused);
	if (d)
		s->dn_deferred = 1;
	return r;
}

static void
wake_up(struct h2_stream *s)
{
	if (s->up_deferred && s->uid > 0 && !s->up_closed) {
		s->up_deferred = 0;
		nghttp2_session_resume_data(s->h->up, s->uid);
	}
}

static void
wake_dn(struct h2_stream *s)
{
	if (s->dn_deferred && !s->cl_closed) {
		s->dn_deferred = 0;
		nghttp2_session_resume_data(s->h->srv, s->cid);
	}
}

/* ---- the client-facing session ---- */

/* Is C allowed in a reason token (it goes into a header and a body)? */
static int
reason_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Answer S ourselves: STATUS, x-postern-reason, a short text body. */
static void
refuse(struct h2_stream *s, int status, const char *reason)
{
	struct px_h2 *h = s->h;
	char st[8], body[160], len[24], why[64];
	nghttp2_data_provider prd;
	size_t i;
	int blen;

	if (status < 200 || status > 599)
		status = 500;
	for (i = 0; reason && reason[i] && i + 1 < sizeof(why); i++)
		why[i] = reason_char(reason[i]) ? reason[i] : '_';
	why[i] = '\0';
	if (i == 0)
		snprintf(why, sizeof(why), "refused");
	s->refused = 1;
	s->status = status;
	free(s->reason);
	s->reason = dup_or_empty(why, sizeof(why));
	drop_up(s);
	snprintf(st, sizeof(st), "%d", status);
	blen = snprintf(body, sizeof(body), "postern: refused (%s)\n", why);
	snprintf(len, sizeof(len), "%d", blen);
	evbuffer_add(s->dn, body, (size_t)blen);
	s->dn_eof = 1;
	nghttp2_nv nva[] = {
		{ (uint8_t *)":status", (uint8_t *)st, 7, strlen(st), 0 },
		{ (uint8_t *)"content-type", (uint8_t *)"text/plain", 12, 10, 0 },
		{ (uint8_t *)"content-length", (uint8_t *)len, 14, strlen(len), 0 },
		{ (uint8_t *)"x-postern-reason", (uint8_t *)why, 16, strlen(why), 0 },
	};
	prd.source.ptr = s;
	prd.read_callback = dn_read_cb;
	if (nghttp2_submit_response(h->srv, s->cid, nva, 4, &prd) != 0)
		reset_client(s, NGHTTP2_INTERNAL_ERROR);
}

static int
edit_valid(const struct px_h2_edit *e, char *lname, size_t lsz)
{
	size_t i, len;
	static const char *const hop[] = { "connection", "keep-alive",
		"proxy-connection", "transfer-encoding", "upgrade", "te", "host" };

	if (e->name == NULL)
		return 0;
	len = strlen(e->name);
	if (len == 0 || len >= lsz)
		return 0;
	/* HTTP/2 field names are lower case (RFC 9113 §8.2.1). */
	for (i = 0; i < len; i++)
		lname[i] = (e->name[i] >= 'A' && e->name[i] <= 'Z') ?
		    (char)(e->name[i] + 32) : e->name[i];
	lname[len] = '\0';
	/* Connection-specific fields are forbidden in HTTP/2 (RFC 9113
	 * §8.2.2); host and pseudo-headers are the caller's to check, not to
	 * set. */
	for (i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (strcmp(lname, hop[i]) == 0)
			return 0;
	return nghttp2_check_header_name((const uint8_t *)lname, len) &&
	    (e->value == NULL || nghttp2_check_header_value_rfc9113(
	    (const uint8_t *)e->value, strlen(e->value)));
}

/* S's request headers are complete: decide, then forward or refuse. */
static int
handle_request(struct px_h2 *h, struct h2_stream *s, int end_stream)
{
	const char *method = hlist_get(&s->req, ":method");
	const char *scheme = hlist_get(&s->req, ":scheme");
	const char *authority = hlist_get(&s->req, ":authority");
	const char *path = hlist_get(&s->req, ":path");
	struct px_h2_header *hdrs = NULL;
	struct px_h2_verdict v;
	struct px_h2_req req;
	struct hlist out = { 0 };
	nghttp2_data_provider prd;
	char lname[128];
	size_t i, j, nh = 0;
	int32_t uid;
	int rv = 0;

	s->req_done = 1;
	if (end_stream)
		s->up_eof = 1;
	if (authority == NULL)
		authority = hlist_get(&s->req, "host");
	s->method = dup_or_empty(method, 64);
	s->authority = dup_or_empty(authority, 256);
	s->path = dup_or_empty(path, 2048);
	if (s->method == NULL || s->authority == NULL || s->path == NULL)
		goto nomem;
	/* The audit's path has no query: it may carry a credential. */
	s->path[strcspn(s->path, "?")] = '\0';

	if (s->req.too_big) {
		refuse(s, 431, "header_too_large");
		goto out;
	}
	/* A tunnel inside the terminated tunnel would escape every
	 * per-request rule (RFC 9113 §8.5): not relayed. */
	if (method != NULL && strcmp(method, "CONNECT") == 0) {
		refuse(s, 405, "connect_in_h2");
		goto out;
	}
	if (h->up_goaway || h->up_dead) {
		/* The upstream takes no new stream: REFUSED_STREAM tells the
		 * client it may retry on a new connection (RFC 9113 §8.7). */
		reset_client(s, NGHTTP2_REFUSED_STREAM);
		goto out;
	}

	hdrs = calloc(s->req.n ? s->req.n : 1, sizeof(*hdrs));
	if (hdrs == NULL)
		goto nomem;
	for (i = 0; i < s->req.n; i++) {
		if (s->req.nv[i].name[0] == ':')
			continue;
		hdrs[nh].name = (const char *)s->req.nv[i].name;
		hdrs[nh].namelen = s->req.nv[i].namelen;
		hdrs[nh].value = (const char *)s->req.nv[i].value;
		hdrs[nh].valuelen = s->req.nv[i].valuelen;
		nh++;
	}
	memset(&req, 0, sizeof(req));
	req.stream_id = s->cid;
	req.method = method;
	req.scheme = scheme;
	req.authority = authority;
	req.path = path;
	req.headers = hdrs;
	req.nheaders = nh;
	memset(&v, 0, sizeof(v));
	v.action = PX_H2_REFUSE;
	v.status = 500;
	v.reason = "no_verdict";
	h->cbs.decide(h->arg, &req, &v);
	s->generation = v.generation;
	if (v.config != NULL)
		snprintf(s->config, sizeof(s->config), "%s", v.config);

	if (v.action != PX_H2_FORWARD) {
		refuse(s, v.status, v.reason);
		goto out;
	}
	for (j = 0; j < v.nedits; j++)
		if (!edit_valid(&v.edits[j], lname, sizeof(lname))) {
			refuse(s, 500, "bad_header_edit");
			goto out;
		}
	s->would = v.would;
	s->leak = v.leak;
	s->leak_active = v.leak_active;
	if ((v.note != NULL && (s->note = dup_or_empty(v.note, 512)) == NULL) ||
	    (v.note_at != NULL && (s->note_at = dup_or_empty(v.note_at, 512)) == NULL))
		goto nomem;

	/* The request as forwarded: pseudo-headers first (RFC 9113 §8.3),
	 * then the client's fields minus those an edit sets, then the
	 * edits, never indexed. */
	for (i = 0; i < s->req.n; i++)
		if (s->req.nv[i].name[0] == ':' && hlist_add(&out,
		    s->req.nv[i].name, s->req.nv[i].namelen, s->req.nv[i].value,
		    s->req.nv[i].valuelen, s->req.nv[i].flags) < 0)
			goto nomem;
	for (i = 0; i < s->req.n; i++) {
		int replaced = 0;

		if (s->req.nv[i].name[0] == ':')
			continue;
		for (j = 0; j < v.nedits && !replaced; j++)
			replaced = strcasecmp((const char *)s->req.nv[i].name,
			    v.edits[j].name) == 0;
		if (!replaced && hlist_add(&out, s->req.nv[i].name,
		    s->req.nv[i].namelen, s->req.nv[i].value,
		    s->req.nv[i].valuelen, s->req.nv[i].flags) < 0)
			goto nomem;
	}
	if (v.nedits > 0) {
		s->edits = calloc(v.nedits, sizeof(*s->edits));
		s->edit_set = dup_or_empty(v.edit_set, 128);
		if (s->edits == NULL || s->edit_set == NULL)
			goto nomem;
	}
	for (j = 0; j < v.nedits; j++) {
		/* An edit without a value only removes. */
		if (v.edits[j].value == NULL)
			continue;
		edit_valid(&v.edits[j], lname, sizeof(lname));
		s->edits[s->nedits] = dup_or_empty(lname, sizeof(lname));
		if (s->edits[s->nedits] == NULL)
			goto nomem;
		s->nedits++;
		if (hlist_add(&out, (const uint8_t *)lname, strlen(lname),
		    (const uint8_t *)v.edits[j].value, strlen(v.edits[j].value),
		    NGHTTP2_NV_FLAG_NO_INDEX) < 0)
			goto nomem;
	}
	if (out.too_big) {
		refuse(s, 431, "header_too_large");
		goto out;
	}
	prd.source.ptr = s;
	prd.read_callback = up_read_cb;
	uid = nghttp2_submit_request(h->up, NULL, out.nv, out.n,
	    s->up_eof ? NULL : &prd, s);
	if (uid < 0) {
		reset_client(s, NGHTTP2_REFUSED_STREAM);
		goto out;
	}
	s->uid = uid;
	goto out;
nomem:
	rv = NGHTTP2_ERR_CALLBACK_FAILURE;
	set_err(h, "out of memory");
out:
	/* The request's headers are kept for trailers' sake no longer. */
	hlist_clear(&s->req);
	hlist_clear(&out);
	free(hdrs);
	return rv;
}

static int
srv_begin_headers(nghttp2_session *sess, const nghttp2_frame *f, void *ud)
{
	struct px_h2 *h = ud;
	struct h2_stream *s;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	s = stream_new(h, f->hd.stream_id);
	if (s == NULL) {
		set_err(h, "out of memory");
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	nghttp2_session_set_stream_user_data(sess, f->hd.stream_id, s);
	return 0;
}

static int
srv_header(nghttp2_session *sess, const nghttp2_frame *f, const uint8_t *name,
    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
    void *ud)
{
	struct h2_stream *s;

	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	s = nghttp2_session_get_stream_user_data(sess, f->hd.stream_id);
	if (s == NULL)
		return 0;
	if (hlist_add(s->req_done ? &s->req_trl : &s->req, name, namelen,
	    value, valuelen, flags) < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int
srv_frame_recv(nghttp2_session *sess, const nghttp2_frame *f, void *ud)
{
	struct px_h2 *h = ud;
	struct h2_stream *s;
	int es = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

	if (f->hd.type == NGHTTP2_GOAWAY) {
		/* The client opens no more streams; the upstream is told it
		 * will get none (RFC 9113 §6.8). */
		h->client_goaway = 1;
		if (!h->up_local_goaway && !h->up_dead) {
			h->up_local_goaway = 1;
			nghttp2_submit_goaway(h->up, NGHTTP2_FLAG_NONE, 0,
			    f->goaway.error_code, NULL, 0);
		}
		return 0;
	}
	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	s = nghttp2_session_get_stream_user_data(sess, f->hd.stream_id);
	if (s == NULL)
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
		return handle_request(h, s, es);
	if (f->hd.type == NGHTTP2_HEADERS && s->req_trl.too_big) {
		reset_client(s, NGHTTP2_INTERNAL_ERROR);
		reset_upstream(s, NGHTTP2_INTERNAL_ERROR);
		return 0;
	}
	if (es) {
		s->up_eof = 1;
		wake_up(s);
	}
	return 0;
}

static int
srv_data(nghttp2_session *sess, uint8_t flags, int32_t sid,
    const uint8_t *data, size_t len, void *ud)
{
	struct px_h2 *h = ud;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(sess, sid);

	if (s == NULL || s->refused || s->uid < 0 || s->up_closed || s->leak_hit) {
		/* Nobody will take these bytes: give the window back now. */
		nghttp2_session_consume(sess, sid, len);
		return 0;
	}
	if (s->leak != NULL && px_leak_feed(s->leak, s->leak_active, &s->leak_carry, data, len,
	    &s->leak_what) != 0) {
		/* A secret where it is not bound, or a canary: these bytes
		 * never go, nor the rest of the stream. */
		s->leak_hit = 1;
		nghttp2_session_consume(sess, sid, len);
		reset_upstream(s, NGHTTP2_CANCEL);
		reset_client(s, NGHTTP2_CANCEL);
		return 0;
	}
	if (evbuffer_add(s->up, data, len) != 0) {
		set_err(h, "out of memory");
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	h->buffered += len;
	wake_up(s);
	return 0;
}

static int
srv_stream_close(nghttp2_session *sess, int32_t sid, uint32_t code, void *ud)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(sess, sid);

	if (s == NULL)
		return 0;
	if (code != NGHTTP2_NO_ERROR)
		note_reset(s, code);
	drop_up(s);
	s->cl_closed = 1;
	drop_dn(s);
	/* The client is gone from this stream: so is the upstream (a client
	 * that ended normally has had the whole response). */
	reset_upstream(s, code != NGHTTP2_NO_ERROR ? code : NGHTTP2_CANCEL);
	maybe_finish(s);
	return 0;
}

/* ---- the upstream-facing session ---- */

static int
up_begin_headers(nghttp2_session *sess, const nghttp2_frame *f, void *ud)
{
	struct h2_stream *s;

	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	s = nghttp2_session_get_stream_user_data(sess, f->hd.stream_id);
	if (s != NULL)
		hlist_clear(s->got_final ? &s->resp_trl : &s->resp);
	return 0;
}

static int
up_header(nghttp2_session *sess, const nghttp2_frame *f, const uint8_t *name,
    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
    void *ud)
{
	struct h2_stream *s;

	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	s = nghttp2_session_get_stream_user_data(sess, f->hd.stream_id);
	if (s == NULL)
		return 0;
	if (hlist_add(s->got_final ? &s->resp_trl : &s->resp, name, namelen,
	    value, valuelen, flags) < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int
up_response(struct px_h2 *h, struct h2_stream *s, int es)
{
	const char *st = hlist_get(&s->resp, ":status");
	nghttp2_data_provider prd;
	int status = 0, i;

	if (s->resp.too_big || st == NULL || strlen(st) != 3) {
		reset_upstream(s, NGHTTP2_INTERNAL_ERROR);
		reset_client(s, NGHTTP2_INTERNAL_ERROR);
		return 0;
	}
	for (i = 0; i < 3; i++) {
		if (st[i] < '0' || st[i] > '9') {
			reset_upstream(s, NGHTTP2_PROTOCOL_ERROR);
			reset_client(s, NGHTTP2_INTERNAL_ERROR);
			return 0;
		}
		status = status * 10 + (st[i] - '0');
	}
	scrub_fields(s, &s->resp);
	if (status >= 200 && !es && h->scrub != NULL && coded(&s->resp)) {
		/* The request asked for no coding; one would hide a value. */
		reset_upstream(s, NGHTTP2_CANCEL);
		hlist_clear(&s->resp);
		refuse(s, 502, "bad_upstream_response");
		return 0;
	}
	if (status < 200) {
		/* An interim response (103, 100) passes as a HEADERS frame
		 * of its own (RFC 9113 §8.1). */
		nghttp2_submit_headers(h->srv, NGHTTP2_FLAG_NONE, s->cid, NULL,
		    s->resp.nv, s->resp.n, NULL);
		hlist_clear(&s->resp);
		return 0;
	}
	s->got_final = 1;
	s->status = status;
	if (es)
		s->dn_eof = 1;
	prd.source.ptr = s;
	prd.read_callback = dn_read_cb;
	if (nghttp2_submit_response(h->srv, s->cid, s->resp.nv, s->resp.n,
	    es ? NULL : &prd) != 0) {
		reset_upstream(s, NGHTTP2_INTERNAL_ERROR);
		reset_client(s, NGHTTP2_INTERNAL_ERROR);
	}
	hlist_clear(&s->resp);
	return 0;
}

static int
up_frame_recv(nghttp2_session *sess, const nghttp2_frame *f, void *ud)
{
	struct px_h2 *h = ud;
	struct h2_stream *s;
	int es = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

	if (f->hd.type == NGHTTP2_GOAWAY) {
		/* Streams above last_stream_id were not processed and are
		 * closed by nghttp2 (REFUSED_STREAM, passed on); the client
		 * is told no new stream will be taken. */
		h->up_goaway = 1;
		if (!h->srv_goaway) {
			h->srv_goaway = 1;
			nghttp2_submit_goaway(h->srv, NGHTTP2_FLAG_NONE,
			    nghttp2_session_get_last_proc_stream_id(h->srv),
			    NGHTTP2_NO_ERROR, NULL, 0);
		}
		return 0;
	}
	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	s = nghttp2_session_get_stream_user_data(sess, f->hd.stream_id);
	if (s == NULL || s->cl_closed)
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS && !s->got_final)
		return up_response(h, s, es);
	if (f->hd.type == NGHTTP2_HEADERS && s->resp_trl.too_big) {
		reset_upstream(s, NGHTTP2_INTERNAL_ERROR);
		reset_client(s, NGHTTP2_INTERNAL_ERROR);
		return 0;
	}
	if (f->hd.type == NGHTTP2_HEADERS)
		scrub_fields(s, &s->resp_trl);
	if (es) {
		s->dn_eof = 1;
		wake_dn(s);
	}
	return 0;
}

static int
up_data(nghttp2_session *sess, uint8_t flags, int32_t sid,
    const uint8_t *data, size_t len, void *ud)
{
	struct px_h2 *h = ud;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(sess, sid);

	if (s == NULL || s->cl_closed) {
		nghttp2_session_consume(sess, sid, len);
		return 0;
	}
	if (evbuffer_add(s->dn, data, len) != 0) {
		set_err(h, "out of memory");
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	h->buffered += len;
	wake_dn(s);
	return 0;
}

static void
up_closed(struct h2_stream *s, uint32_t code)
{
	if (s->up_closed)
		return;
	s->up_closed = 1;
	drop_up(s);
	if (code != NGHTTP2_NO_ERROR) {
		note_reset(s, code);
		drop_dn(s);
		reset_client(s, code);
	} else if (!s->dn_eof) {
		/* Closed without a whole response: the client must not take
		 * a truncated one for complete. */
		drop_dn(s);
		reset_client(s, NGHTTP2_INTERNAL_ERROR);
	}
	maybe_finish(s);
}

static int
up_stream_close(nghttp2_session *sess, int32_t sid, uint32_t code, void *ud)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(sess, sid);

	if (s != NULL)
		up_closed(s, code);
	return 0;
}

static int
up_not_send(nghttp2_session *sess, const nghttp2_frame *f, int err, void *ud)
{
	struct h2_stream *s;

	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	s = nghttp2_session_get_stream_user_data(sess, f->hd.stream_id);
	if (s != NULL && !s->up_closed)
		up_closed(s, NGHTTP2_REFUSED_STREAM);
	return 0;
}

/* ---- both ---- */

static ssize_t
send_cb(nghttp2_session *sess, const uint8_t *data, size_t len, int flags,
    void *ud)
{
	struct px_h2 *h = ud;
	int client = sess == h->srv;
	ssize_t n;

	n = (client ? h->cbs.send_client : h->cbs.send_upstream)(h->arg, data, len);
	if (n < 0) {
		if (h->send_err == 0)
			h->send_err = (int)n;
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	if (n == 0) {
		if (client)
			h->blocked_client = 1;
		else
			h->blocked_up = 1;
		return NGHTTP2_ERR_WOULDBLOCK;
	}
	if (n > (ssize_t)len)
		n = (ssize_t)len;
	h->sent += (uint64_t)n;
	return n;
}

static int
error_cb(nghttp2_session *sess, int code, const char *msg, size_t len,
    void *ud)
{
	struct px_h2 *h = ud;
	char *dst = sess == h->srv ? h->last_srv : h->last_up;
	size_t i, max = sizeof(h->last_srv) - 1;

	/* nghttp2's text may quote peer bytes: keep it printable. */
	for (i = 0; i < len && i < max; i++)
		dst[i] = (msg[i] >= 0x20 && msg[i] < 0x7f) ? msg[i] : '?';
	dst[i] = '\0';
	return 0;
}

static nghttp2_session *
session_new(struct px_h2 *h, int server)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_option *opt = NULL;
	nghttp2_session *sess = NULL;
	int rv;

	if (nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		goto out;
	nghttp2_session_callbacks_set_send_callback(cb, send_cb);
	nghttp2_session_callbacks_set_error_callback2(cb, error_cb);
	if (server) {
		nghttp2_session_callbacks_set_on_begin_headers_callback(cb, srv_begin_headers);
		nghttp2_session_callbacks_set_on_header_callback(cb, srv_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame_recv);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, srv_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, srv_stream_close);
	} else {
		nghttp2_session_callbacks_set_on_begin_headers_callback(cb, up_begin_headers);
		nghttp2_session_callbacks_set_on_header_callback(cb, up_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, up_frame_recv);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, up_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, up_stream_close);
		nghttp2_session_callbacks_set_on_frame_not_send_callback(cb, up_not_send);
	}
	/* The windows are given back by hand, when the other side has taken
	 * the bytes (see the top of this file). */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	/* Until the upstream's SETTINGS arrive, open no more streams than the
	 * client may. */
	nghttp2_option_set_peer_max_concurrent_streams(opt, PX_H2_MAX_STREAMS);
	nghttp2_option_set_max_send_header_block_length(opt, PX_H2_MAX_HEADER_LIST + 16384);
	rv = server ? nghttp2_session_server_new2(&sess, cb, h, opt) :
	    nghttp2_session_client_new2(&sess, cb, h, opt);
	if (rv != 0) {
		sess = NULL;
		goto out;
	}
	{
		nghttp2_settings_entry iv[] = {
			{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, PX_H2_MAX_STREAMS },
			{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, PX_H2_STREAM_WINDOW },
			{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, PX_H2_MAX_HEADER_LIST },
			/* No server push to the relay (RFC 9113 §8.4). */
			{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		};
		if (nghttp2_submit_settings(sess, NGHTTP2_FLAG_NONE, iv,
		    server ? 3 : 4) != 0 ||
		    nghttp2_session_set_local_window_size(sess, NGHTTP2_FLAG_NONE,
		    0, PX_H2_CONN_WINDOW) != 0) {
			nghttp2_session_del(sess);
			sess = NULL;
		}
	}
out:
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	return sess;
}

void
px_h2_set_scrub(struct px_h2 *h, const struct px_scrub *scrub)
{
	h->scrub = scrub;
}

struct px_h2 *
px_h2_new(const struct px_h2_cbs *cbs, void *arg)
{
	struct px_h2 *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->cbs = *cbs;
	h->arg = arg;
	h->srv = session_new(h, 1);
	h->up = session_new(h, 0);
	if (h->srv == NULL || h->up == NULL) {
		px_h2_free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

void
px_h2_free(struct px_h2 *h)
{
	if (h == NULL)
		return;
	while (h->streams != NULL) {
		if (h->streams->reset == 0 && !(h->streams->dn_eof &&
		    h->streams->cl_closed))
			h->streams->reset = NGHTTP2_CANCEL;
		stream_report_free(h->streams);
	}
	nghttp2_session_del(h->srv);
	nghttp2_session_del(h->up);
	free(h);
}

/* Is SESS over (nothing more to read or write)? */
static int
sess_over(nghttp2_session *sess)
{
	return !nghttp2_session_want_read(sess) && !nghttp2_session_want_write(sess);
}

/* The upstream is gone (EOF or its protocol error): what it had not
 * finished is reset to the client, which is told to go away. */
static void
upstream_lost(struct px_h2 *h)
{
	struct h2_stream *s, *next;

	if (h->up_dead)
		return;
	h->up_dead = 1;
	for (s = h->streams; s != NULL; s = next) {
		next = s->next;
		if (s->uid >= 0 && !s->up_closed)
			up_closed(s, NGHTTP2_INTERNAL_ERROR);
	}
	if (!h->srv_goaway) {
		h->srv_goaway = 1;
		nghttp2_submit_goaway(h->srv, NGHTTP2_FLAG_NONE,
		    nghttp2_session_get_last_proc_stream_id(h->srv),
		    NGHTTP2_NO_ERROR, NULL, 0);
	}
}

/* Write what both sessions have, until neither has more or can write. */
static int
pump(struct px_h2 *h)
{
	uint64_t before;
	int i, rv;

	/* Sending on one session can consume (WINDOW_UPDATE) or resume data
	 * on the other: go round until nothing moves. */
	for (i = 0; i < 64; i++) {
		before = h->sent;
		if (!h->blocked_client && nghttp2_session_want_write(h->srv)) {
			rv = nghttp2_session_send(h->srv);
			if (rv != 0)
				goto fail;
		}
		if (!h->up_dead && !h->blocked_up &&
		    nghttp2_session_want_write(h->up)) {
			rv = nghttp2_session_send(h->up);
			if (rv != 0) {
				if (h->send_err == 0)
					goto fail;
				return h->send_err;
			}
		}
		if (h->sent == before)
			break;
	}
	return h->send_err;
fail:
	if (h->send_err != 0)
		return h->send_err;
	set_err(h, "nghttp2: %s", nghttp2_strerror(rv));
	return -ENOMEM;
}

/* Feed SESS (the side WHO) with BUF; end the session on an error nghttp2
 * returns instead of handling (bad preface, flood, our callback failed). */
static int
feed(struct px_h2 *h, nghttp2_session *sess, const char *who,
    const uint8_t *buf, size_t len)
{
	const char *last = sess == h->srv ? h->last_srv : h->last_up;
	ssize_t n;
	int rv = 0;

	if (h->failed || (sess == h->up && h->up_dead))
		return h->failed ? -EPROTO : 0;
	n = nghttp2_session_mem_recv(sess, buf, len);
	if (n < 0) {
		/* A fatal error nghttp2 ended no session for (bad preface,
		 * flood, our callback's failure): end it ourselves. */
		if (h->err[0] == '\0')
			set_err(h, "%s: %s%s%s", who, nghttp2_strerror((int)n),
			    last[0] ? ": " : "", last);
		nghttp2_session_terminate_session(sess,
		    n == NGHTTP2_ERR_CALLBACK_FAILURE || n == NGHTTP2_ERR_NOMEM ?
		    NGHTTP2_INTERNAL_ERROR : NGHTTP2_PROTOCOL_ERROR);
		rv = n == NGHTTP2_ERR_NOMEM ? -ENOMEM : -EPROTO;
	}
	if (rv == -EPROTO || rv == -ENOMEM) {
		if (sess == h->srv) {
			h->failed = 1;
			/* The upstream gets no more from this client. */
			if (!h->up_local_goaway) {
				h->up_local_goaway = 1;
				nghttp2_submit_goaway(h->up, NGHTTP2_FLAG_NONE,
				    0, NGHTTP2_CANCEL, NULL, 0);
			}
		} else {
			upstream_lost(h);
		}
	}
	return rv;
}

/* After a pump: did nghttp2 end a session on a connection error?  It does
 * so by sending GOAWAY and wanting no more reads (RFC 9113 §5.4.1); a
 * graceful end (GOAWAY either way, no stream left) is not an error. */
static int
check_ended(struct px_h2 *h)
{
	int rv = 0;

	if (!h->failed && !nghttp2_session_want_read(h->srv) &&
	    !h->client_goaway && !h->srv_goaway) {
		set_err(h, "client: protocol error%s%s",
		    h->last_srv[0] ? ": " : "", h->last_srv);
		h->failed = 1;
		rv = -EPROTO;
		if (!h->up_local_goaway) {
			h->up_local_goaway = 1;
			nghttp2_submit_goaway(h->up, NGHTTP2_FLAG_NONE, 0,
			    NGHTTP2_CANCEL, NULL, 0);
		}
	}
	if (!h->up_dead && !nghttp2_session_want_read(h->up) &&
	    !h->up_goaway && !h->up_local_goaway) {
		set_err(h, "upstream: protocol error%s%s",
		    h->last_up[0] ? ": " : "", h->last_up);
		upstream_lost(h);
		rv = -EPROTO;
	}
	if (rv != 0) {
		int prv = pump(h);

		if (prv != 0 && prv != -ENOMEM)
			return prv;
	}
	return rv;
}

static int
input(struct px_h2 *h, nghttp2_session *sess, const char *who,
    const uint8_t *buf, size_t len)
{
	int rv = feed(h, sess, who, buf, len);
	int prv = pump(h);
	int erv = check_ended(h);

	if (rv != 0)
		return rv;
	if (prv != 0)
		return prv;
	return erv;
}

int
px_h2_client_input(struct px_h2 *h, const uint8_t *buf, size_t len)
{
	return input(h, h->srv, "client", buf, len);
}

int
px_h2_upstream_input(struct px_h2 *h, const uint8_t *buf, size_t len)
{
	return input(h, h->up, "upstream", buf, len);
}

int
px_h2_upstream_eof(struct px_h2 *h)
{
	int rv;

	upstream_lost(h);
	rv = pump(h);
	return rv != 0 ? rv : check_ended(h);
}

int
px_h2_flush(struct px_h2 *h)
{
	int rv;

	h->blocked_client = 0;
	h->blocked_up = 0;
	rv = pump(h);
	return rv != 0 ? rv : check_ended(h);
}

int
px_h2_over(const struct px_h2 *h)
{
	return sess_over(h->srv) || h->send_err != 0;
}

const char *
px_h2_error(const struct px_h2 *h)
{
	return h->err[0] ? h->err : NULL;
}

size_t
px_h2_buffered(const struct px_h2 *h)
{
	return h->buffered;
}
