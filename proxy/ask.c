/*
 * proxy/ask.c: the pending questions of mode = ask (see ask.h).
 *
 * A question is a list of waiters and a timer: the timer is the
 * question's, not each waiter's, so a request that joins late waits only
 * for what is left of it (the admin has one question to answer, with one
 * deadline).  Each waiter's client socket is watched with EV_CLOSED
 * (EPOLLRDHUP), which sees the peer close without reading a byte: the held
 * request's body, or a client's early first flight, stays in the socket.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "proxy/ask.h"

struct px_ask_wait {
	TAILQ_ENTRY(px_ask_wait) entry;
	struct question *q;
	struct event *gone;     /* EV_CLOSED on the client socket, or NULL */
	px_ask_fn *fn;
	void *waiter;
};

struct question {
	TAILQ_ENTRY(question) entry;
	struct px_ask *a;
	unsigned id;
	char *session, *host, *method, *path, *peer;
	uint16_t port;
	long pid, uid;
	time_t asked;
	struct timespec expires; /* CLOCK_MONOTONIC */
	struct event *timer;
	TAILQ_HEAD(, px_ask_wait) waiters;
	size_t nwaiting;
};

struct px_ask {
	struct event_base *base;
	unsigned timeout_ms;
	unsigned next_id;
	TAILQ_HEAD(, question) qs;
	size_t nq;
	uint64_t counts[PX_ASK_NANSWERS];
};

static const char *const words[] = {
	[PX_ASK_ALLOW_ONCE] = "allow_once",
	[PX_ASK_ALLOW_SESSION] = "allow_session",
	[PX_ASK_DENY_ONCE] = "deny_once",
	[PX_ASK_DENY_SESSION] = "deny_session",
	[PX_ASK_TIMEOUT] = "timeout",
	[PX_ASK_GONE] = "gone",
};

const char *
px_ask_answer_word(enum px_ask_answer a)
{
	return (unsigned)a < sizeof(words) / sizeof(words[0]) ? words[a] : "unknown";
}

struct px_ask *
px_ask_new(struct event_base *base, unsigned timeout_ms)
{
	struct px_ask *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->base = base;
	a->timeout_ms = timeout_ms;
	a->next_id = 1;
	TAILQ_INIT(&a->qs);
	return a;
}

void
px_ask_set_timeout(struct px_ask *a, unsigned timeout_ms)
{
	a->timeout_ms = timeout_ms;
}

static void
wait_free(struct px_ask_wait *w)
{
	if (w->gone != NULL)
		event_free(w->gone);
	free(w);
}

/* Unlink Q from its set and free it; its waiters must be gone. */
static void
question_free(struct question *q)
{
	struct px_ask_wait *w;

	TAILQ_REMOVE(&q->a->qs, q, entry);
	q->a->nq--;
	while ((w = TAILQ_FIRST(&q->waiters)) != NULL) {
		TAILQ_REMOVE(&q->waiters, w, entry);
		wait_free(w);
	}
	if (q->timer != NULL)
		event_free(q->timer);
	free(q->session);
	free(q->host);
	free(q->method);
	free(q->path);
	free(q->peer);
	free(q);
}

void
px_ask_free(struct px_ask *a)
{
	if (a == NULL)
		return;
	while (!TAILQ_EMPTY(&a->qs))
		question_free(TAILQ_FIRST(&a->qs));
	free(a);
}

/*
 * Tell every waiter of Q the answer and free Q.  Q leaves the set before
 * anyone is told, so that a waiter's callback (which may free its
 * connection, or make a new request that is asked again) finds neither Q
 * nor its own handle.
 */
static void
settle(struct question *q, enum px_ask_answer answer, size_t *released)
{
	struct px_ask *a = q->a;
	TAILQ_HEAD(, px_ask_wait) told;
	struct px_ask_wait *w;
	unsigned id = q->id;
	size_t n = 0;

	TAILQ_INIT(&told);
	TAILQ_CONCAT(&told, &q->waiters, entry);
	q->nwaiting = 0;
	question_free(q);
	if ((unsigned)answer < PX_ASK_NANSWERS)
		a->counts[answer]++;
	while ((w = TAILQ_FIRST(&told)) != NULL) {
		px_ask_fn *fn = w->fn;
		void *waiter = w->waiter;

		TAILQ_REMOVE(&told, w, entry);
		wait_free(w);
		n++;
		fn(waiter, id, answer);
	}
	if (released != NULL)
		*released = n;
}

static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	settle(arg, PX_ASK_TIMEOUT, NULL);
}

/* The waiter's client closed: it leaves, and is told so (its connection
 * is then closed by its owner). */
static void
gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_ask_wait *w = arg;
	px_ask_fn *fn = w->fn;
	void *waiter = w->waiter;
	unsigned id = w->q->id;

	(void)fd;
	(void)what;
	px_ask_leave(w);
	fn(waiter, id, PX_ASK_GONE);
}

static struct question *
question_for(struct px_ask *a, const struct px_ask_req *r)
{
	struct question *q;

	TAILQ_FOREACH(q, &a->qs, entry)
		if (q->port == r->port && strcmp(q->session, r->session) == 0 &&
		    strcmp(q->host, r->host) == 0)
			return q;
	return NULL;
}

static struct question *
question_new(struct px_ask *a, const struct px_ask_req *r)
{
	struct question *q = calloc(1, sizeof(*q));
	struct timeval tv = { a->timeout_ms / 1000, (a->timeout_ms % 1000) * 1000 };

	if (q == NULL)
		return NULL;
	q->a = a;
	TAILQ_INIT(&q->waiters);
	/* In the set from the start, so that question_free() undoes all. */
	TAILQ_INSERT_TAIL(&a->qs, q, entry);
	a->nq++;
	q->session = strdup(r->session);
	q->host = strdup(r->host);
	q->method = strdup(r->method != NULL ? r->method : "");
	q->path = strdup(r->path != NULL ? r->path : "");
	q->peer = strdup(r->peer != NULL ? r->peer : "");
	q->port = r->port;
	q->pid = r->pid;
	q->uid = r->uid;
	q->timer = evtimer_new(a->base, expire_cb, q);
	if (q->session == NULL || q->host == NULL || q->method == NULL || q->path == NULL ||
	    q->peer == NULL || q->timer == NULL || evtimer_add(q->timer, &tv) != 0) {
		question_free(q);
		errno = ENOMEM;
		return NULL;
	}
	q->id = a->next_id++;
	q->asked = time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &q->expires);
	q->expires.tv_sec += a->timeout_ms / 1000;
	q->expires.tv_nsec += (long)(a->timeout_ms % 1000) * 1000000L;
	if (q->expires.tv_nsec >= 1000000000L) {
		q->expires.tv_sec++;
		q->expires.tv_nsec -= 1000000000L;
	}
	return q;
}

struct px_ask_wait *
px_ask_hold(struct px_ask *a, const struct px_ask_req *r, int fd, px_ask_fn *fn, void *waiter,
    unsigned *id)
{
	struct question *q = question_for(a, r);
	struct px_ask_wait *w;
	int made = 0;

	if (q == NULL) {
		if ((q = question_new(a, r)) == NULL)
			return NULL;
		made = 1;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		goto fail;
	w->q = q;
	w->fn = fn;
	w->waiter = waiter;
	/* Without EV_CLOSED (another backend than epoll) a client that goes
	 * away is found out when its request is answered. */
	if (fd >= 0 && (event_base_get_features(a->base) & EV_FEATURE_EARLY_CLOSE)) {
		w->gone = event_new(a->base, fd, EV_CLOSED, gone_cb, w);
		if (w->gone == NULL || event_add(w->gone, NULL) != 0)
			goto fail;
	}
	TAILQ_INSERT_TAIL(&q->waiters, w, entry);
	q->nwaiting++;
	*id = q->id;
	return w;
fail:
	if (w != NULL)
		wait_free(w);
	if (made)
		question_free(q);
	errno = ENOMEM;
	return NULL;
}

void
px_ask_leave(struct px_ask_wait *w)
{
	struct question *q;

	if (w == NULL)
		return;
	q = w->q;
	TAILQ_REMOVE(&q->waiters, w, entry);
	q->nwaiting--;
	wait_free(w);
	/* The last waiter gone, nobody needs an answer: the question goes,
	 * and an admin's answer to it is a 404, not a grant for nothing. */
	if (q->nwaiting == 0)
		question_free(q);
}

static void
fill(const struct question *q, struct px_ask_q *o)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long)(q->expires.tv_sec - now.tv_sec) * 1000L + (q->expires.tv_nsec - now.tv_nsec) / 1000000L;
	o->id = q->id;
	o->session = q->session;
	o->host = q->host;
	o->method = q->method;
	o->path = q->path;
	o->peer = q->peer;
	o->port = q->port;
	o->pid = q->pid;
	o->uid = q->uid;
	o->asked = q->asked;
	o->expires_in_ms = ms > 0 ? ms : 0;
	o->waiting = q->nwaiting;
}

int
px_ask_nth(const struct px_ask *a, size_t i, struct px_ask_q *o)
{
	const struct question *q;

	TAILQ_FOREACH(q, &a->qs, entry)
		if (i-- == 0) {
			fill(q, o);
			return 0;
		}
	return -ENOENT;
}

static struct question *
by_id(const struct px_ask *a, unsigned id)
{
	struct question *q;

	TAILQ_FOREACH(q, &a->qs, entry)
		if (q->id == id)
			return q;
	return NULL;
}

int
px_ask_find(const struct px_ask *a, unsigned id, struct px_ask_q *o)
{
	const struct question *q = by_id(a, id);

	if (q == NULL)
		return -ENOENT;
	fill(q, o);
	return 0;
}

int
px_ask_answer(struct px_ask *a, unsigned id, enum px_ask_answer answer, size_t *released)
{
	struct question *q = by_id(a, id);

	*released = 0;
	if (q == NULL || (unsigned)answer >= PX_ASK_TIMEOUT)
		return -ENOENT;
	settle(q, answer, released);
	return 0;
}

size_t
px_ask_open(const struct px_ask *a)
{
	return a->nq;
}

uint64_t
px_ask_count(const struct px_ask *a, enum px_ask_answer answer)
{
	return (unsigned)answer < PX_ASK_NANSWERS ? a->counts[answer] : 0;
}
