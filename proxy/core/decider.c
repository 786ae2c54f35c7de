/*
 * proxy/core/decider.c: questions to the deciders and their answers (see
 * decider.h).  The bytes are proxy/proto/decider.c's; this file moves
 * them with bufferevents and times them out.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conf/config.h"
#include "proxy/core/decider.h"
#include "proxy/core/log.h"
#include "proxy/proto/decider.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000
#define CACHE_BUCKETS 1024

TAILQ_HEAD(qlist, px_decider_q);

/* One decider on this loop: for unix:, its connection. */
struct dconn {
	struct px_deciders *ds;
	/* decider = as written: its key.  Nothing of a snapshot is kept
	 * here: a reload may free it while a question is out. */
	char *text;
	struct bufferevent *bev;    /* unix: the connection, or NULL */
	int up;                     /* unix: connected */
	unsigned backoff_ms;
	uint64_t retry_at;          /* monotonic ms: down until then */
	uint64_t last_id;           /* the highest id sent */
	struct qlist pending;
	LIST_ENTRY(dconn) next;
};

struct px_decider_q {
	struct dconn *dc;
	struct qlist *on;           /* the list it is on, or NULL */
	uint64_t id;
	struct bufferevent *bev;    /* http: its own connection */
	struct event *timer;
	px_decider_fn *fn;
	void *arg;
	char *key;
	unsigned cache_max, timeout_ms;
	uint64_t started;           /* monotonic µs */
	/* Answered before it was sent (down): given at the timer's first run. */
	int early;
	char early_why[160];
	TAILQ_ENTRY(px_decider_q) link;
};

struct centry {
	char *key;
	int allow;
	uint64_t expires;           /* monotonic ms */
	char reason[PX_DECIDER_REASON_MAX + 1];
	struct centry *hnext;
	TAILQ_ENTRY(centry) age;
};

struct px_deciders {
	struct event_base *base;
	uint64_t next_id;
	LIST_HEAD(, dconn) conns;
	struct centry *buckets[CACHE_BUCKETS];
	TAILQ_HEAD(, centry) oldest;
	size_t ncached;
};

static const char *const words[] = {
	[PX_DECIDER_ALLOW] = "allow", [PX_DECIDER_DENY] = "deny", [PX_DECIDER_TIMEOUT] = "timeout",
	[PX_DECIDER_BAD] = "bad_answer", [PX_DECIDER_DOWN] = "down",
};

const char *
px_decider_result_word(enum px_decider_result r)
{
	return (unsigned)r < PX_DECIDER_NRESULTS ? words[r] : "unknown";
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* ---- the cache ------------------------------------------------------------ */

static size_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h % CACHE_BUCKETS);
}

static void
centry_drop(struct px_deciders *ds, struct centry *e)
{
	struct centry **pp = &ds->buckets[hash(e->key)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	TAILQ_REMOVE(&ds->oldest, e, age);
	ds->ncached--;
	free(e->key);
	free(e);
}

/* The cache key: the decider's text and the caller's KEY. */
static char *
full_key(const struct cf_decider *d, const char *key)
{
	size_t a = strlen(d->text), b = strlen(key);
	char *k = malloc(a + b + 2);

	if (k != NULL) {
		memcpy(k, d->text, a);
		k[a] = '\n';
		memcpy(k + a + 1, key, b + 1);
	}
	return k;
}

int
px_decider_cached(struct px_deciders *ds, const struct cf_decider *d, const char *key,
    int *allow, char *reason, size_t size)
{
	struct centry *e;
	char *k;
	uint64_t now = now_us() / 1000;

	if (d->cache_max == 0 || ds->ncached == 0 || (k = full_key(d, key)) == NULL)
		return 0;
	for (e = ds->buckets[hash(k)]; e != NULL; e = e->hnext)
		if (strcmp(e->key, k) == 0)
			break;
	free(k);
	if (e == NULL)
		return 0;
	if (e->expires <= now) {
		centry_drop(ds, e);
		return 0;
	}
	*allow = e->allow;
	snprintf(reason, size, "%s", e->reason);
	return 1;
}

/* Keep an answer for Q's key for TTL seconds, the oldest dropped to stay
 * within Q's bound.  Out of memory, nothing is kept. */
static void
cache_put(struct px_deciders *ds, struct px_decider_q *q, const struct px_decider_answer *a)
{
	struct centry *e;
	size_t h;

	if (q->key == NULL || a->ttl == 0 || q->cache_max == 0)
		return;
	h = hash(q->key);
	for (e = ds->buckets[h]; e != NULL; e = e->hnext)
		if (strcmp(e->key, q->key) == 0) {
			centry_drop(ds, e);
			break;
		}
	while (ds->ncached >= q->cache_max && !TAILQ_EMPTY(&ds->oldest))
		centry_drop(ds, TAILQ_FIRST(&ds->oldest));
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return;
	e->key = q->key;
	q->key = NULL;
	e->allow = a->allow;
	e->expires = now_us() / 1000 + (uint64_t)a->ttl * 1000;
	snprintf(e->reason, sizeof(e->reason), "%s", a->reason);
	e->hnext = ds->buckets[h];
	ds->buckets[h] = e;
	TAILQ_INSERT_TAIL(&ds->oldest, e, age);
	ds->ncached++;
}

/* ---- questions ------------------------------------------------------------ */

static void
q_free(struct px_decider_q *q)
{
	if (q->on != NULL)
		TAILQ_REMOVE(q->on, q, link);
	if (q->bev != NULL)
		bufferevent_free(q->bev);
	if (q->timer != NULL)
		event_free(q->timer);
	free(q->key);
	free(q);
}

/* Answer Q with R and free it. */
static void
q_answer(struct px_decider_q *q, enum px_decider_result r, const char *reason)
{
	px_decider_fn *fn = q->fn;
	void *arg = q->arg;
	double secs = q->early ? 0 : (double)(now_us() - q->started) / 1e6;
	char why[PX_DECIDER_REASON_MAX + 200];

	snprintf(why, sizeof(why), "%s", reason != NULL ? reason : "");
	q_free(q);
	fn(arg, r, why, secs);
}

void
px_decider_cancel(struct px_decider_q *q)
{
	if (q != NULL)
		q_free(q);
}

/* The decider failed (R, WHY): every question on DC is answered so, and
 * the connection (unix) is dropped.  DOWN backs off: the next question
 * before DC->retry_at is answered at once. */
static void
dc_fail(struct dconn *dc, enum px_decider_result r, const char *why)
{
	struct qlist tmp;
	struct px_decider_q *q;

	if (dc->bev != NULL) {
		bufferevent_free(dc->bev);
		dc->bev = NULL;
	}
	if (r == PX_DECIDER_DOWN) {
		if (!dc->up)
			dc->backoff_ms = dc->backoff_ms == 0 ? BACKOFF_MIN_MS :
			    dc->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : dc->backoff_ms * 2;
		else
			dc->backoff_ms = BACKOFF_MIN_MS;
		dc->retry_at = now_us() / 1000 + dc->backoff_ms;
		log_warnx("decider %s: %s; tried again in %u ms at the earliest", dc->text, why,
		    dc->backoff_ms);
	} else {
		log_warnx("decider %s: %s", dc->text, why);
	}
	dc->up = 0;
	TAILQ_INIT(&tmp);
	while ((q = TAILQ_FIRST(&dc->pending)) != NULL) {
		TAILQ_REMOVE(&dc->pending, q, link);
		TAILQ_INSERT_TAIL(&tmp, q, link);
		q->on = &tmp;
	}
	while ((q = TAILQ_FIRST(&tmp)) != NULL)
		q_answer(q, r, why);
}

/* An answer A to a question on DC. */
static void
dc_answer(struct dconn *dc, struct px_decider_q *q, const struct px_decider_answer *a)
{
	cache_put(dc->ds, q, a);
	q_answer(q, a->allow ? PX_DECIDER_ALLOW : PX_DECIDER_DENY, a->reason);
}

/* ---- unix: one connection, lines matched by id ----------------------------- */

static void
unix_read(struct bufferevent *bev, void *arg)
{
	struct dconn *dc = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct px_decider_answer a;
	struct px_decider_q *q;
	struct evbuffer_ptr eol;
	const char *why;
	char *line;
	size_t n;

	for (;;) {
		eol = evbuffer_search_eol(in, NULL, &n, EVBUFFER_EOL_LF);
		if (eol.pos < 0) {
			if (evbuffer_get_length(in) > PX_DECIDER_LINE_MAX)
				dc_fail(dc, PX_DECIDER_BAD, "an answer line is longer than 16384 bytes");
			return;
		}
		if ((size_t)eol.pos > PX_DECIDER_LINE_MAX) {
			dc_fail(dc, PX_DECIDER_BAD, "an answer line is longer than 16384 bytes");
			return;
		}
		line = (char *)evbuffer_pullup(in, eol.pos + 1);
		if (line == NULL) {
			dc_fail(dc, PX_DECIDER_DOWN, "out of memory");
			return;
		}
		/* A blank line (a keep-alive, a CR LF's CR) answers nothing. */
		if (eol.pos == 0 || (eol.pos == 1 && line[0] == '\r')) {
			evbuffer_drain(in, (size_t)eol.pos + 1);
			continue;
		}
		if (px_decider_answer_parse(line, (size_t)eol.pos, &a, &why) != 0) {
			char w[200];

			/* The stream cannot be trusted for what is in flight. */
			evbuffer_drain(in, (size_t)eol.pos + 1);
			snprintf(w, sizeof(w), "a bad answer: %s", why);
			dc_fail(dc, PX_DECIDER_BAD, w);
			return;
		}
		evbuffer_drain(in, (size_t)eol.pos + 1);
		TAILQ_FOREACH(q, &dc->pending, link)
			if (q->id == a.id)
				break;
		if (q != NULL) {
			dc_answer(dc, q, &a);
			/* The callback may have dropped the connection. */
			if (dc->bev != bev)
				return;
			continue;
		}
		if (a.id > dc->last_id) {
			dc_fail(dc, PX_DECIDER_BAD, "a bad answer: its id was never asked");
			return;
		}
		/* An answer after its question timed out: nothing waits. */
	}
}

static void
unix_event(struct bufferevent *bev, short what, void *arg)
{
	struct dconn *dc = arg;
	char why[200];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		dc->up = 1;
		dc->backoff_ms = 0;
		return;
	}
	if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof(why), "it closed the connection");
	else
		snprintf(why, sizeof(why), "%s", strerror(EVUTIL_SOCKET_ERROR() ? EVUTIL_SOCKET_ERROR() : EIO));
	dc_fail(dc, PX_DECIDER_DOWN, why);
}

/* Connect DC (unix), unless it is connected or connecting.  0, or -1 with
 * WHY (it is down). */
static int
unix_connect(struct dconn *dc, const struct cf_decider *d, char *why, size_t size)
{
	struct sockaddr_un sun;
	int fd;

	if (dc->bev != NULL)
		return 0;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", d->unix_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, size, "socket: %s", strerror(errno));
		return -1;
	}
	/* A UNIX connect finishes or fails at once; EAGAIN is a full
	 * backlog, which the bufferevent waits out. */
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 && errno != EAGAIN &&
	    errno != EINPROGRESS) {
		snprintf(why, size, "cannot connect to %s: %s", d->unix_path, strerror(errno));
		close(fd);
		return -1;
	}
	dc->bev = bufferevent_socket_new(dc->ds->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (dc->bev == NULL) {
		close(fd);
		snprintf(why, size, "out of memory");
		return -1;
	}
	dc->up = 1;
	bufferevent_setcb(dc->bev, unix_read, NULL, unix_event, dc);
	bufferevent_setwatermark(dc->bev, EV_READ, 0, PX_DECIDER_LINE_MAX * 4);
	bufferevent_enable(dc->bev, EV_READ | EV_WRITE);
	return 0;
}

/* ---- http: one POST a question ------------------------------------------- */

static void
http_read(struct bufferevent *bev, void *arg)
{
	struct px_decider_q *q = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct px_decider_answer a;
	const char *body, *why;
	size_t blen, n = evbuffer_get_length(in);
	char w[200];
	int rc;

	rc = px_decider_http_body((const char *)evbuffer_pullup(in, -1), n, 0, &body, &blen, &why);
	if (rc == 0)
		return;
	if (rc < 0) {
		snprintf(w, sizeof(w), "a bad answer: %s", why);
		q_answer(q, PX_DECIDER_BAD, w);
		return;
	}
	if (px_decider_answer_parse(body, blen, &a, &why) != 0 || a.id != q->id) {
		snprintf(w, sizeof(w), "a bad answer: %s", rc == 1 && why == NULL ? "its id is not the question's" : why);
		q_answer(q, PX_DECIDER_BAD, w);
		return;
	}
	dc_answer(q->dc, q, &a);
}

static void
http_event(struct bufferevent *bev, short what, void *arg)
{
	struct px_decider_q *q = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct px_decider_answer a;
	const char *body, *why;
	size_t blen;
	char w[200];

	if (what & BEV_EVENT_CONNECTED) {
		q->dc->backoff_ms = 0;
		return;
	}
	if ((what & BEV_EVENT_EOF) && evbuffer_get_length(in) > 0) {
		if (px_decider_http_body((const char *)evbuffer_pullup(in, -1), evbuffer_get_length(in), 1,
		    &body, &blen, &why) != 1 || px_decider_answer_parse(body, blen, &a, &why) != 0 ||
		    a.id != q->id) {
			snprintf(w, sizeof(w), "a bad answer: %s", why != NULL ? why :
			    "its id is not the question's");
			q_answer(q, PX_DECIDER_BAD, w);
			return;
		}
		dc_answer(q->dc, q, &a);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		q_answer(q, PX_DECIDER_DOWN, "it closed the connection without an answer");
		return;
	}
	/* A refused connect: the decider is down, back off. */
	q->dc->backoff_ms = q->dc->backoff_ms == 0 ? BACKOFF_MIN_MS :
	    q->dc->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : q->dc->backoff_ms * 2;
	q->dc->retry_at = now_us() / 1000 + q->dc->backoff_ms;
	snprintf(w, sizeof(w), "cannot connect to %s: %s", q->dc->text,
	    strerror(EVUTIL_SOCKET_ERROR() ? EVUTIL_SOCKET_ERROR() : EIO));
	q_answer(q, PX_DECIDER_DOWN, w);
}

/* Send Q (TEXT, LEN bytes) as one POST.  0, or -1 with WHY. */
static int
http_send(struct px_decider_q *q, const struct cf_decider *d, const char *text, size_t len, char *why,
    size_t size)
{
	struct evbuffer *out;

	q->bev = bufferevent_socket_new(q->dc->ds->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (q->bev == NULL) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	bufferevent_setcb(q->bev, http_read, NULL, http_event, q);
	bufferevent_setwatermark(q->bev, EV_READ, 0, PX_DECIDER_LINE_MAX + 1);
	out = bufferevent_get_output(q->bev);
	if (evbuffer_add_printf(out, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n", d->http_path, d->http_host, len) < 0 ||
	    evbuffer_add(out, text, len) != 0) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	if (bufferevent_socket_connect(q->bev, (const struct sockaddr *)&d->sa, (int)d->salen) != 0) {
		snprintf(why, size, "cannot connect to %s: %s", d->text, strerror(errno));
		return -1;
	}
	bufferevent_enable(q->bev, EV_READ | EV_WRITE);
	return 0;
}

/* ---- asking ---------------------------------------------------------------- */

static void
q_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct px_decider_q *q = arg;
	char w[200];

	(void)fd;
	(void)what;
	if (q->early) {
		q_answer(q, PX_DECIDER_DOWN, q->early_why);
		return;
	}
	snprintf(w, sizeof(w), "no answer from %s within decider_timeout (%u ms)", q->dc->text,
	    q->timeout_ms);
	q_answer(q, PX_DECIDER_TIMEOUT, w);
}

static struct dconn *
dconn_get(struct px_deciders *ds, const struct cf_decider *d)
{
	struct dconn *dc;

	LIST_FOREACH(dc, &ds->conns, next)
		if (strcmp(dc->text, d->text) == 0)
			return dc;
	if ((dc = calloc(1, sizeof(*dc))) == NULL)
		return NULL;
	if ((dc->text = strdup(d->text)) == NULL) {
		free(dc);
		return NULL;
	}
	dc->ds = ds;
	TAILQ_INIT(&dc->pending);
	LIST_INSERT_HEAD(&ds->conns, dc, next);
	return dc;
}

struct px_decider_q *
px_decider_ask(struct px_deciders *ds, const struct cf_decider *d,
    struct px_decider_question *qq, const char *key, px_decider_fn *fn, void *arg)
{
	struct px_decider_q *q;
	struct dconn *dc;
	struct timeval tv;
	char *text = NULL, why[160];
	size_t len = 0;
	int rc;

	if ((dc = dconn_get(ds, d)) == NULL || (q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->dc = dc;
	q->fn = fn;
	q->arg = arg;
	q->cache_max = d->cache_max;
	q->timeout_ms = d->timeout_ms;
	q->started = now_us();
	q->id = qq->id = ++ds->next_id;
	q->timer = evtimer_new(ds->base, q_timeout, q);
	if (q->timer == NULL || (key != NULL && (q->key = full_key(d, key)) == NULL) ||
	    (text = px_decider_question_json(qq, &len)) == NULL) {
		q_free(q);
		return NULL;
	}
	why[0] = '\0';
	if (now_us() / 1000 < dc->retry_at) {
		snprintf(why, sizeof(why), "%s is down (tried again after a back-off)", d->text);
		rc = -1;
	} else if (d->unix_path != NULL) {
		rc = unix_connect(dc, d, why, sizeof(why));
		if (rc == 0 && evbuffer_add(bufferevent_get_output(dc->bev), text, len) != 0) {
			snprintf(why, sizeof(why), "out of memory");
			rc = -1;
		}
		if (rc != 0 && dc->bev == NULL) {
			dc->up = 0;
			dc->backoff_ms = dc->backoff_ms == 0 ? BACKOFF_MIN_MS :
			    dc->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : dc->backoff_ms * 2;
			dc->retry_at = now_us() / 1000 + dc->backoff_ms;
		}
	} else {
		rc = http_send(q, d, text, len, why, sizeof(why));
	}
	free(text);
	if (rc != 0) {
		/* Answered from the loop, never from inside this call. */
		q->early = 1;
		snprintf(q->early_why, sizeof(q->early_why), "%s", why);
		if (q->bev != NULL) {
			bufferevent_free(q->bev);
			q->bev = NULL;
		}
		tv.tv_sec = 0;
		tv.tv_usec = 0;
		evtimer_add(q->timer, &tv);
		return q;
	}
	if (d->unix_path != NULL) {
		TAILQ_INSERT_TAIL(&dc->pending, q, link);
		q->on = &dc->pending;
		if (q->id > dc->last_id)
			dc->last_id = q->id;
	}
	tv.tv_sec = d->timeout_ms / 1000;
	tv.tv_usec = (d->timeout_ms % 1000) * 1000;
	evtimer_add(q->timer, &tv);
	return q;
}

struct px_deciders *
px_deciders_new(struct event_base *base)
{
	struct px_deciders *ds = calloc(1, sizeof(*ds));

	if (ds == NULL)
		return NULL;
	ds->base = base;
	LIST_INIT(&ds->conns);
	TAILQ_INIT(&ds->oldest);
	return ds;
}

void
px_deciders_free(struct px_deciders *ds)
{
	struct dconn *dc;
	struct px_decider_q *q;

	if (ds == NULL)
		return;
	while ((dc = LIST_FIRST(&ds->conns)) != NULL) {
		LIST_REMOVE(dc, next);
		while ((q = TAILQ_FIRST(&dc->pending)) != NULL)
			q_free(q);
		if (dc->bev != NULL)
			bufferevent_free(dc->bev);
		free(dc->text);
		free(dc);
	}
	while (!TAILQ_EMPTY(&ds->oldest))
		centry_drop(ds, TAILQ_FIRST(&ds->oldest));
	free(ds);
}
