/*
 * tests/unit/test-h2.c: proxy/flow/h2 between two real nghttp2 peers, in memory.
 * A client session (the agent) and a server session (the upstream) talk to
 * the module through byte buffers that step() moves until nothing moves.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "proxy/flow/h2.h"
#include "tests/unit/tap.h"

#define NS 64

struct buf {
	uint8_t *p;
	size_t len, cap;
};

enum mode { M_SIMPLE, M_HOLD, M_STREAM, M_TRAILERS };

struct cstream {
	int32_t id;
	int status, closed, ended;
	uint32_t code;
	char reason[64], body[128], grpc[16];
	size_t nbody, frames;
};

struct ustream {
	int32_t id;
	char path[128], auth[128];
	int nauth, ended, closed, open;
	uint32_t code;
	size_t body;
};

struct world {
	struct px_h2 *h;
	nghttp2_session *cl, *us;
	struct buf c2m, m2c, m2u, u2m;
	struct cstream cs[NS];
	struct ustream uss[NS];
	int ncs, nus, open_us, max_open_us;
	enum mode mode;
	int slow;			/* upstream gives its window back by hand */
	size_t unconsumed;		/* upstream: bytes not yet consumed */
	size_t max_buffered;
	int stream_avail, stream_sent, stream_end;
	size_t upload_left;
	int dones;
	struct px_h2_stream_info last;
	char last_edit_set[64], last_edit[64], last_path[128];
	int goaway, us_goaway;
	int client_full;		/* the module's client output is full */
	size_t chunk;			/* M_STREAM: bytes a chunk (0: a line) */
	uint32_t goaway_code;
};

static void
buf_add(struct buf *b, const uint8_t *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (b->p == NULL)
			abort();
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static struct cstream *
cs_get(struct world *w, int32_t id)
{
	for (int i = 0; i < w->ncs; i++)
		if (w->cs[i].id == id)
			return &w->cs[i];
	if (w->ncs == NS)
		abort();
	w->cs[w->ncs].id = id;
	return &w->cs[w->ncs++];
}

static struct ustream *
us_get(struct world *w, int32_t id)
{
	for (int i = 0; i < w->nus; i++)
		if (w->uss[i].id == id)
			return &w->uss[i];
	if (w->nus == NS)
		abort();
	w->uss[w->nus].id = id;
	return &w->uss[w->nus++];
}

/* ---- the module's callbacks ---- */

static ssize_t
m_send_client(void *arg, const uint8_t *p, size_t n)
{
	if (((struct world *)arg)->client_full)
		return 0;
	buf_add(&((struct world *)arg)->m2c, p, n);
	return (ssize_t)n;
}

static ssize_t
m_send_up(void *arg, const uint8_t *p, size_t n)
{
	buf_add(&((struct world *)arg)->m2u, p, n);
	return (ssize_t)n;
}

static const struct px_h2_edit edit_auth[] = { { "Authorization", "Bearer real-secret" } };
static const struct px_h2_edit edit_drop[] = { { "Authorization", NULL } };

static void
m_decide(void *arg, const struct px_h2_req *req, struct px_h2_verdict *v)
{
	if (strncmp(req->path, "/deny", 5) == 0) {
		v->action = PX_H2_REFUSE;
		v->status = 403;
		v->reason = "path_denied";
		return;
	}
	v->action = PX_H2_FORWARD;
	if (strncmp(req->path, "/inject", 7) == 0) {
		v->edits = edit_auth;
		v->nedits = 1;
		v->edit_set = "openai";
	}
	if (strncmp(req->path, "/drop", 5) == 0) {
		v->edits = edit_drop;
		v->nedits = 1;
	}
}

static void
m_done(void *arg, const struct px_h2_stream_info *info)
{
	struct world *w = arg;

	w->dones++;
	w->last = *info;
	snprintf(w->last_path, sizeof(w->last_path), "%s", info->path);
	snprintf(w->last_edit_set, sizeof(w->last_edit_set), "%s",
	    info->edit_set ? info->edit_set : "");
	snprintf(w->last_edit, sizeof(w->last_edit), "%s",
	    info->nedits ? info->edits[0] : "");
	w->last.path = w->last.method = w->last.authority = NULL;
	w->last.edit_set = NULL;
	w->last.edits = NULL;
}

/* ---- the test client ---- */

static ssize_t
cl_send(nghttp2_session *s, const uint8_t *p, size_t n, int f, void *ud)
{
	buf_add(&((struct world *)ud)->c2m, p, n);
	return (ssize_t)n;
}

static int
cl_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
    size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	struct cstream *c = cs_get(ud, f->hd.stream_id);

	if (nl == 7 && memcmp(name, ":status", 7) == 0)
		c->status = atoi((const char *)value);
	else if (nl == 16 && memcmp(name, "x-postern-reason", 16) == 0)
		snprintf(c->reason, sizeof(c->reason), "%.*s", (int)vl, value);
	else if (nl == 11 && memcmp(name, "grpc-status", 11) == 0)
		snprintf(c->grpc, sizeof(c->grpc), "%.*s", (int)vl, value);
	return 0;
}

static int
cl_data(nghttp2_session *s, uint8_t fl, int32_t id, const uint8_t *p,
    size_t n, void *ud)
{
	struct cstream *c = cs_get(ud, id);

	if (c->nbody + n < sizeof(c->body))
		memcpy(c->body + c->nbody, p, n);
	c->nbody += n;
	return 0;
}

static int
cl_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct world *w = ud;

	if (f->hd.type == NGHTTP2_GOAWAY) {
		w->goaway = 1;
		w->goaway_code = f->goaway.error_code;
	}
	if (f->hd.type == NGHTTP2_DATA)
		cs_get(w, f->hd.stream_id)->frames++;
	if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		cs_get(w, f->hd.stream_id)->ended = 1;
	return 0;
}

static int
cl_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
	struct cstream *c = cs_get(ud, id);

	c->closed = 1;
	c->code = code;
	return 0;
}

static ssize_t
upload_read(nghttp2_session *s, int32_t id, uint8_t *p, size_t n,
    uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct world *w = ud;

	if (n > w->upload_left)
		n = w->upload_left;
	memset(p, 'u', n);
	w->upload_left -= n;
	if (w->upload_left == 0)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* ---- the test upstream ---- */

static ssize_t
us_send(nghttp2_session *s, const uint8_t *p, size_t n, int f, void *ud)
{
	buf_add(&((struct world *)ud)->u2m, p, n);
	return (ssize_t)n;
}

static int
us_begin(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct world *w = ud;
	struct ustream *u = us_get(w, f->hd.stream_id);

	u->open = 1;
	if (++w->open_us > w->max_open_us)
		w->max_open_us = w->open_us;
	return 0;
}

static int
us_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
    size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	struct ustream *u = us_get(ud, f->hd.stream_id);

	if (nl == 5 && memcmp(name, ":path", 5) == 0)
		snprintf(u->path, sizeof(u->path), "%.*s", (int)vl, value);
	if (nl == 13 && strncasecmp((const char *)name, "authorization", 13) == 0) {
		u->nauth++;
		snprintf(u->auth, sizeof(u->auth), "%.*s", (int)vl, value);
	}
	return 0;
}

static ssize_t
body_read(nghttp2_session *s, int32_t id, uint8_t *p, size_t n,
    uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct world *w = ud;
	struct ustream *u = us_get(w, id);
	int len;

	if (w->mode == M_STREAM) {
		if (w->stream_sent < w->stream_avail && w->chunk > 0) {
			w->stream_sent++;
			n = n < w->chunk ? n : w->chunk;
			memset(p, 'd', n);
			return (ssize_t)n;
		}
		if (w->stream_sent < w->stream_avail) {
			len = snprintf((char *)p, n, "data: %d\n\n", w->stream_sent++);
			return len;
		}
		if (w->stream_end) {
			*flags |= NGHTTP2_DATA_FLAG_EOF;
			return 0;
		}
		return NGHTTP2_ERR_DEFERRED;
	}
	len = snprintf((char *)p, n, "ok:%s", u->path);
	*flags |= NGHTTP2_DATA_FLAG_EOF;
	if (w->mode == M_TRAILERS) {
		nghttp2_nv trl[] = { { (uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, 0 } };

		nghttp2_submit_trailer(s, id, trl, 1);
		*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	}
	return len;
}

static void
respond(struct world *w, int32_t id)
{
	nghttp2_nv nv[] = { { (uint8_t *)":status", (uint8_t *)"200", 7, 3, 0 } };
	nghttp2_data_provider prd = { .read_callback = body_read };

	nghttp2_submit_response(w->us, id, nv, 1, &prd);
}

static int
us_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct world *w = ud;
	struct ustream *u;

	if (f->hd.type == NGHTTP2_GOAWAY)
		w->us_goaway = 1;
	if (f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (!(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	u = us_get(w, f->hd.stream_id);
	u->ended = 1;
	if (w->mode != M_HOLD)
		respond(w, f->hd.stream_id);
	return 0;
}

static int
us_data(nghttp2_session *s, uint8_t fl, int32_t id, const uint8_t *p,
    size_t n, void *ud)
{
	struct world *w = ud;

	us_get(w, id)->body += n;
	if (w->slow)
		w->unconsumed += n;
	return 0;
}

static int
us_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
	struct world *w = ud;
	struct ustream *u = us_get(w, id);

	u->closed = 1;
	u->code = code;
	if (u->open) {
		u->open = 0;
		w->open_us--;
	}
	return 0;
}

static void
world_init(struct world *w, enum mode mode, int slow)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	struct px_h2_cbs cbs = { m_send_client, m_send_up, m_decide, m_done };

	memset(w, 0, sizeof(*w));
	w->mode = mode;
	w->slow = slow;
	w->h = px_h2_new(&cbs, w);
	if (w->h == NULL)
		abort();

	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_send_callback(cb, cl_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, cl_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cl_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cl_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, cl_close);
	nghttp2_session_client_new(&w->cl, cb, w);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(w->cl, NGHTTP2_FLAG_NONE, NULL, 0);

	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_send_callback(cb, us_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, us_begin);
	nghttp2_session_callbacks_set_on_header_callback(cb, us_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, us_frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, us_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, us_close);
	nghttp2_option_new(&opt);
	if (slow)
		nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_session_server_new2(&w->us, cb, w, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(w->us, NGHTTP2_FLAG_NONE, NULL, 0);
	px_h2_flush(w->h);
}

static void
world_free(struct world *w)
{
	px_h2_free(w->h);
	nghttp2_session_del(w->cl);
	nghttp2_session_del(w->us);
	free(w->c2m.p);
	free(w->m2c.p);
	free(w->m2u.p);
	free(w->u2m.p);
}

/* Move bytes both ways until nothing moves; the slow upstream gives back
 * at most SLOW_STEP bytes of window per round. */
#define SLOW_STEP 16384

static int
step(struct world *w)
{
	struct buf t;
	int rounds, moved, rv = 0, r;

	for (rounds = 0; rounds < 100000; rounds++) {
		moved = 0;
		if (w->slow && w->unconsumed > 0) {
			size_t n = w->unconsumed < SLOW_STEP ? w->unconsumed : SLOW_STEP;

			/* Stream and connection windows, as nghttp2_session_consume. */
			for (int i = 0; i < w->nus; i++)
				if (!w->uss[i].closed)
					nghttp2_session_consume(w->us, w->uss[i].id, n);
			w->unconsumed -= n;
		}
		nghttp2_session_send(w->cl);
		nghttp2_session_send(w->us);
		if (w->c2m.len) {
			t = w->c2m;
			memset(&w->c2m, 0, sizeof(w->c2m));
			r = px_h2_client_input(w->h, t.p, t.len);
			if (r != 0 && rv == 0)
				rv = r;
			free(t.p);
			moved = 1;
		}
		if (w->u2m.len) {
			t = w->u2m;
			memset(&w->u2m, 0, sizeof(w->u2m));
			r = px_h2_upstream_input(w->h, t.p, t.len);
			if (r != 0 && rv == 0)
				rv = r;
			free(t.p);
			moved = 1;
		}
		if (px_h2_buffered(w->h) > w->max_buffered)
			w->max_buffered = px_h2_buffered(w->h);
		if (w->m2c.len) {
			t = w->m2c;
			memset(&w->m2c, 0, sizeof(w->m2c));
			nghttp2_session_mem_recv(w->cl, t.p, t.len);
			free(t.p);
			moved = 1;
		}
		if (w->m2u.len) {
			t = w->m2u;
			memset(&w->m2u, 0, sizeof(w->m2u));
			nghttp2_session_mem_recv(w->us, t.p, t.len);
			free(t.p);
			moved = 1;
		}
		if (!moved && !(w->slow && w->unconsumed > 0))
			break;
	}
	return rv;
}

static int32_t
get(struct world *w, const char *path)
{
	nghttp2_nv nv[] = {
		{ (uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"https", 7, 5, 0 },
		{ (uint8_t *)":authority", (uint8_t *)"api.example.com", 10, 15, 0 },
		{ (uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0 },
		{ (uint8_t *)"authorization", (uint8_t *)"Bearer placeholder", 13, 18, 0 },
	};

	return nghttp2_submit_request(w->cl, NULL, nv, 5, NULL, NULL);
}

static struct ustream *
us_by_path(struct world *w, const char *path)
{
	for (int i = 0; i < w->nus; i++)
		if (strcmp(w->uss[i].path, path) == 0)
			return &w->uss[i];
	return NULL;
}

static void
test_inject(void)
{
	struct world w;
	struct ustream *u;
	struct cstream *c;
	int32_t id;

	world_init(&w, M_SIMPLE, 0);
	id = get(&w, "/inject/v1?key=placeholder");
	tap_ok(step(&w) == 0, "GET: no error");
	u = us_by_path(&w, "/inject/v1?key=placeholder");
	tap_ok(u != NULL, "GET: the upstream sees the request");
	tap_ok(u && u->nauth == 1 && strcmp(u->auth, "Bearer real-secret") == 0,
	    "GET: the injected authorization replaced the client's (%d, %s)",
	    u ? u->nauth : -1, u ? u->auth : "");
	c = cs_get(&w, id);
	tap_ok(c->status == 200 && c->ended && c->nbody == 29 &&
	    memcmp(c->body, "ok:/inject/v1?key=placeholder", 29) == 0,
	    "GET: the client gets the response (%d, %zu)", c->status, c->nbody);
	tap_ok(w.dones == 1 && w.last.status == 200 && w.last.bytes_down == 29 &&
	    strcmp(w.last_path, "/inject/v1") == 0 &&
	    strcmp(w.last_edit_set, "openai") == 0 &&
	    strcmp(w.last_edit, "authorization") == 0 && w.last.reset == 0,
	    "GET: audited without the query, with the edit set's name (%s %s %s)",
	    w.last_path, w.last_edit_set, w.last_edit);
	tap_ok(px_h2_buffered(w.h) == 0, "GET: nothing left buffered");
	/* A stream without edits forwards the client's header untouched. */
	id = get(&w, "/plain");
	step(&w);
	u = us_by_path(&w, "/plain");
	tap_ok(u && u->nauth == 1 && strcmp(u->auth, "Bearer placeholder") == 0 &&
	    w.last_edit_set[0] == '\0', "GET: no verdict edits, no change");
	/* An edit without a value removes the field and sets none. */
	id = get(&w, "/drop");
	step(&w);
	u = us_by_path(&w, "/drop");
	c = cs_get(&w, id);
	tap_ok(u && u->nauth == 0 && c->status == 200 && w.last_edit[0] == '\0',
	    "GET: an edit without a value drops the client's field (%d)", u ? u->nauth : -1);
	world_free(&w);
}

static void
test_refuse(void)
{
	struct world w;
	struct cstream *c;
	int32_t id;

	world_init(&w, M_SIMPLE, 0);
	id = get(&w, "/deny/x");
	step(&w);
	c = cs_get(&w, id);
	tap_ok(c->status == 403 && strcmp(c->reason, "path_denied") == 0 &&
	    c->ended && c->nbody > 0,
	    "refused: 403 with x-postern-reason (%d %s)", c->status, c->reason);
	tap_ok(w.nus == 0, "refused: the upstream sees no stream (%d)", w.nus);
	tap_ok(w.dones == 1 && w.last.refused && w.last.status == 403,
	    "refused: audited as refused");
	world_free(&w);
}

static void
test_concurrent(void)
{
	struct world w;
	int32_t ids[20];
	char path[32];
	int i, ok = 1;

	world_init(&w, M_HOLD, 0);
	for (i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "/s/%d", i);
		ids[i] = get(&w, path);
	}
	step(&w);
	tap_ok(w.max_open_us == 20, "20 streams open upstream at once (%d)",
	    w.max_open_us);
	for (i = 0; i < w.nus; i++)
		respond(&w, w.uss[i].id);
	step(&w);
	for (i = 0; i < 20; i++) {
		struct cstream *c = cs_get(&w, ids[i]);
		char want[32];

		snprintf(want, sizeof(want), "ok:/s/%d", i);
		if (c->status != 200 || c->nbody != strlen(want) ||
		    memcmp(c->body, want, c->nbody) != 0 || !c->ended)
			ok = 0;
	}
	tap_ok(ok, "20 streams: each response on its own stream");
	tap_ok(w.dones == 20, "20 streams: 20 audit calls (%d)", w.dones);
	world_free(&w);
}

static void
test_streaming(void)
{
	struct world w;
	struct cstream *c;
	int32_t id;
	int i, ok = 1;

	world_init(&w, M_STREAM, 0);
	id = get(&w, "/events");
	step(&w);
	c = cs_get(&w, id);
	tap_ok(c->status == 200 && !c->ended, "streaming: headers before any data");
	for (i = 0; i < 200; i++) {
		w.stream_avail++;
		nghttp2_session_resume_data(w.us, w.uss[0].id);
		step(&w);
		if (c->frames != (size_t)i + 1 || c->ended)
			ok = 0;
	}
	tap_ok(ok, "streaming: each of 200 DATA frames reaches the client before the end (%zu)",
	    c->frames);
	w.stream_end = 1;
	nghttp2_session_resume_data(w.us, w.uss[0].id);
	step(&w);
	tap_ok(c->ended && w.dones == 1, "streaming: then the end");
	world_free(&w);
}

/* Responses the upstream ends while the client is not reading: their bytes
 * wait in the module after the upstream stream has closed, and must still
 * be given back to the connection window when the client takes them. */
static void
test_window_after_close(void)
{
	struct world w;
	struct cstream *c;
	int32_t id;
	int i, ok = 1;

	world_init(&w, M_STREAM, 0);
	w.chunk = 16000;
	for (i = 0; i < 8 && ok; i++) {
		w.stream_sent = 0;
		w.stream_avail = 13;
		w.stream_end = 1;
		id = get(&w, "/blob");
		w.client_full = 1;
		step(&w);
		w.client_full = 0;
		px_h2_flush(w.h);
		step(&w);
		c = cs_get(&w, id);
		if (c->nbody != 13 * 16000 || !c->ended)
			ok = 0;
	}
	tap_ok(ok, "8 x 208 kB answered while the client was full: all arrive (%d)", i);
	world_free(&w);
}

static void
test_upload(void)
{
	struct world w;
	struct cstream *c;
	struct ustream *u;
	nghttp2_nv nv[] = {
		{ (uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"https", 7, 5, 0 },
		{ (uint8_t *)":authority", (uint8_t *)"api.example.com", 10, 15, 0 },
		{ (uint8_t *)":path", (uint8_t *)"/upload", 5, 7, 0 },
	};
	nghttp2_data_provider prd = { .read_callback = upload_read };
	size_t total = 10 * 1024 * 1024;
	int32_t id;

	world_init(&w, M_SIMPLE, 1);
	w.upload_left = total;
	id = nghttp2_submit_request(w.cl, NULL, nv, 4, &prd, NULL);
	step(&w);
	u = us_by_path(&w, "/upload");
	c = cs_get(&w, id);
	tap_ok(u && u->body == total && u->ended, "upload: 10 MB reach the slow upstream (%zu)",
	    u ? u->body : 0);
	tap_ok(c->status == 200 && c->ended, "upload: the client gets the answer");
	tap_ok(w.max_buffered > 0 && w.max_buffered <= PX_H2_CONN_WINDOW,
	    "upload: the module held at most its window (%zu <= %d)",
	    w.max_buffered, PX_H2_CONN_WINDOW);
	tap_ok(w.dones == 1 && w.last.bytes_up == total, "upload: audited bytes up");
	world_free(&w);
}

static void
test_trailers(void)
{
	struct world w;
	struct cstream *c;
	int32_t id;

	world_init(&w, M_TRAILERS, 0);
	id = get(&w, "/grpc.Service/Call");
	step(&w);
	c = cs_get(&w, id);
	tap_ok(c->status == 200 && strcmp(c->grpc, "0") == 0 && c->ended &&
	    c->code == 0, "trailers: grpc-status: 0 reaches the client (%s)", c->grpc);
	world_free(&w);
}

static void
test_rst(void)
{
	struct world w;
	struct cstream *c;
	int32_t id;

	world_init(&w, M_HOLD, 0);
	id = get(&w, "/a");
	step(&w);
	nghttp2_submit_rst_stream(w.cl, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
	step(&w);
	tap_ok(w.nus == 1 && w.uss[0].closed && w.uss[0].code == NGHTTP2_CANCEL,
	    "RST_STREAM from the client reaches the upstream (%u)", w.uss[0].code);
	tap_ok(w.dones == 1 && w.last.reset == NGHTTP2_CANCEL, "client RST audited");

	id = get(&w, "/b");
	step(&w);
	nghttp2_submit_rst_stream(w.us, NGHTTP2_FLAG_NONE, w.uss[1].id,
	    NGHTTP2_ENHANCE_YOUR_CALM);
	step(&w);
	c = cs_get(&w, id);
	tap_ok(c->closed && c->code == NGHTTP2_ENHANCE_YOUR_CALM,
	    "RST_STREAM from the upstream reaches the client (%u)", c->code);
	tap_ok(w.dones == 2 && w.last.reset == NGHTTP2_ENHANCE_YOUR_CALM,
	    "upstream RST audited");
	world_free(&w);
}

static void
test_goaway(void)
{
	struct world w;
	struct cstream *c;
	int32_t id;

	world_init(&w, M_HOLD, 0);
	id = get(&w, "/a");
	step(&w);
	nghttp2_submit_goaway(w.us, NGHTTP2_FLAG_NONE, w.uss[0].id,
	    NGHTTP2_NO_ERROR, NULL, 0);
	step(&w);
	tap_ok(w.goaway && w.goaway_code == NGHTTP2_NO_ERROR,
	    "GOAWAY from the upstream reaches the client");
	c = cs_get(&w, id);
	tap_ok(!c->closed && !px_h2_over(w.h), "GOAWAY: the open stream goes on");
	respond(&w, w.uss[0].id);
	step(&w);
	tap_ok(c->status == 200 && c->ended && px_h2_over(w.h),
	    "GOAWAY: the stream finishes, then the relay is over");
	world_free(&w);

	world_init(&w, M_SIMPLE, 0);
	get(&w, "/a");
	step(&w);
	nghttp2_submit_goaway(w.cl, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, NULL, 0);
	step(&w);
	tap_ok(w.us_goaway, "GOAWAY from the client reaches the upstream");
	tap_ok(px_h2_over(w.h) && px_h2_error(w.h) == NULL,
	    "client GOAWAY: over, and no error");
	world_free(&w);
}

static void
test_header_limit(void)
{
	struct world w;
	struct cstream *c;
	nghttp2_nv nv[300];
	int32_t id;
	int i;

	world_init(&w, M_SIMPLE, 0);
	nv[0] = (nghttp2_nv){ (uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0 };
	nv[1] = (nghttp2_nv){ (uint8_t *)":scheme", (uint8_t *)"https", 7, 5, 0 };
	nv[2] = (nghttp2_nv){ (uint8_t *)":authority", (uint8_t *)"a.example", 10, 9, 0 };
	nv[3] = (nghttp2_nv){ (uint8_t *)":path", (uint8_t *)"/many", 5, 5, 0 };
	for (i = 4; i < 300; i++)
		nv[i] = (nghttp2_nv){ (uint8_t *)"x-many", (uint8_t *)"v", 6, 1, 0 };
	id = nghttp2_submit_request(w.cl, NULL, nv, 300, NULL, NULL);
	step(&w);
	c = cs_get(&w, id);
	tap_ok(c->status == 431 && strcmp(c->reason, "header_too_large") == 0 &&
	    w.nus == 0, "%d header fields: 431, the upstream sees nothing (%d)",
	    300, c->status);
	world_free(&w);
}

/* The error code of the first GOAWAY in BUF (raw frames), or -1. */
static long
raw_goaway(const struct buf *b)
{
	size_t off = 0, len;

	while (off + 9 <= b->len) {
		len = (size_t)b->p[off] << 16 | (size_t)b->p[off + 1] << 8 | b->p[off + 2];
		if (b->p[off + 3] == NGHTTP2_GOAWAY && off + 9 + len <= b->len && len >= 8)
			return (long)((uint32_t)b->p[off + 13] << 24 |
			    (uint32_t)b->p[off + 14] << 16 |
			    (uint32_t)b->p[off + 15] << 8 | b->p[off + 16]);
		off += 9 + len;
	}
	return -1;
}

static void
test_malformed(void)
{
	static const uint8_t bad[] =
	    "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	    "\x00\x00\x00\x04\x00\x00\x00\x00\x00"	/* SETTINGS */
	    "\x00\x00\x01\x00\x00\x00\x00\x00\x00x";	/* DATA on stream 0 */
	struct world w;
	int rv;

	world_init(&w, M_SIMPLE, 0);
	free(w.m2c.p);
	memset(&w.m2c, 0, sizeof(w.m2c));
	rv = px_h2_client_input(w.h, bad, sizeof(bad) - 1);
	tap_ok(rv == -EPROTO, "malformed: the input call fails (%d)", rv);
	tap_ok(px_h2_error(w.h) != NULL && strncmp(px_h2_error(w.h), "client:", 7) == 0,
	    "malformed: an error to log (%s)", px_h2_error(w.h) ? px_h2_error(w.h) : "none");
	tap_ok(raw_goaway(&w.m2c) == NGHTTP2_PROTOCOL_ERROR,
	    "malformed: the client gets GOAWAY PROTOCOL_ERROR (%ld)", raw_goaway(&w.m2c));
	tap_ok(px_h2_over(w.h), "malformed: the relay is over");
	world_free(&w);

	/* Not even a preface. */
	world_init(&w, M_SIMPLE, 0);
	rv = px_h2_client_input(w.h, (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18);
	tap_ok(rv == -EPROTO && px_h2_error(w.h) != NULL && px_h2_over(w.h),
	    "no preface: an error, and over (%d)", rv);
	world_free(&w);
}

int
main(void)
{
	test_inject();
	test_refuse();
	test_concurrent();
	test_streaming();
	test_upload();
	test_window_after_close();
	test_trailers();
	test_rst();
	test_goaway();
	test_header_limit();
	test_malformed();
	return tap_done();
}
