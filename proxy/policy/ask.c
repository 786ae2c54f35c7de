/*
 * proxy/policy/ask.c: the pending questions of mode = ask (see ask.h).
 *
 * A question is a list of waiters and a timer: the timer is the
 * question's, not each waiter's, so a request that joins late waits only
 * for what is left of it (the admin has one question to answer, with one
 * deadline).  Each waiter's client socket is watched with EV_CLOSED
 * (EPOLLRDHUP), which sees the peer close without reading a byte: the held
 * request's body, or a client's early first flight, stays in the socket.
 * A question is keyed by the request's method and target in full, not by
 * what is shown of them: a cut or escaped path never merges two requests.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "proxy/policy/ask.h"

struct px_ask_wait {
	TAILQ_ENTRY(px_ask_wait) entry;
	struct question *q;
	struct event *gone;     /* EV_CLOSED on the client socket, or NULL */
	px_ask_fn *fn;
	void *waiter;
	char *peer;
	long pid, uid;
};

struct question {
	TAILQ_ENTRY(question) entry;
	struct px_ask *a;
	unsigned id;
	char *session, *host;
	char *method, *target;  /* the key, as sent */
	size_t method_len, target_len;
	char *method_shown, *path_shown;
	size_t path_cut;
	uint16_t port;
	int settling;           /* to be settled by the answer being given */
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
	free(w->peer);
	free(w);
}

/* N bytes of S as shown: 0x21-0x7e but '\' as they are (and a space
 * when SPACE), every other byte \xNN: one way to read it back, so no two
 * inputs look alike.  NULL when out of memory. */
static char *
shown(const char *s, size_t n, int space)
{
	static const char hex[] = "0123456789abcdef";
	char *o = malloc(4 * n + 1), *p = o;
	size_t i;

	if (o == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (((ch > 0x20 && ch < 0x7f) || (ch == ' ' && space)) && ch != '\\') {
			*p++ = (char)ch;
			continue;
		}
		*p++ = '\\';
		*p++ = 'x';
		*p++ = hex[ch >> 4];
		*p++ = hex[ch & 15];
	}
	*p = '\0';
	return o;
}

/* A copy of the N bytes at S, NUL-terminated. */
static char *
copy(const char *s, size_t n)
{
	char *o = malloc(n + 1);

	if (o == NULL)
		return NULL;
	if (n > 0)
		memcpy(o, s, n);
	o[n] = '\0';
	return o;
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
	free(q->target);
	free(q->method_shown);
	free(q->path_shown);
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

/* R's method and target, as they key a question. */
static void
req_key(const struct px_ask_req *r, const char **m, size_t *ml, const char **t, size_t *tl)
{
	*m = r->method != NULL ? r->method : "";
	*ml = r->method_len != 0 ? r->method_len : strlen(*m);
	*t = r->target != NULL ? r->target : "";
	*tl = r->target != NULL ? r->target_len : 0;
}

static struct question *
question_for(struct px_ask *a, const struct px_ask_req *r)
{
	struct question *q;
	const char *m, *t;
	size_t ml, tl;

	req_key(r, &m, &ml, &t, &tl);
	TAILQ_FOREACH(q, &a->qs, entry)
		if (q->port == r->port && q->method_len == ml && q->target_len == tl &&
		    strcmp(q->session, r->session) == 0 && strcmp(q->host, r->host) == 0 &&
		    memcmp(q->method, m, ml) == 0 && (tl == 0 || memcmp(q->target, t, tl) == 0))
			return q;
	return NULL;
}

static struct question *
question_new(struct px_ask *a, const struct px_ask_req *r)
{
	struct question *q = calloc(1, sizeof(*q));
	struct timeval tv = { a->timeout_ms / 1000, (a->timeout_ms % 1000) * 1000 };
	const char *m, *t, *p;
	size_t ml, tl, pl;

	if (q == NULL)
		return NULL;
	req_key(r, &m, &ml, &t, &tl);
	p = r->path != NULL ? r->path : t;
	pl = r->path != NULL ? r->path_len : tl;
	q->a = a;
	TAILQ_INIT(&q->waiters);
	/* In the set from the start, so that question_free() undoes all. */
	TAILQ_INSERT_TAIL(&a->qs, q, entry);
	a->nq++;
	q->session = strdup(r->session);
	q->host = strdup(r->host);
	q->method = copy(m, ml);
	q->method_len = ml;
	q->target = copy(t, tl);
	q->target_len = tl;
	/* A method is a token; "SOCKS5 CONNECT" is the proxy's word. */
	q->method_shown = shown(m, ml, 1);
	q->path_cut = pl > PX_ASK_PATH_SHOWN ? pl - PX_ASK_PATH_SHOWN : 0;
	q->path_shown = shown(p, pl - q->path_cut, 0);
	q->port = r->port;
	q->timer = evtimer_new(a->base, expire_cb, q);
	if (q->session == NULL || q->host == NULL || q->method == NULL || q->target == NULL ||
	    q->method_shown == NULL || q->path_shown == NULL || q->timer == NULL ||
	    evtimer_add(q->timer, &tv) != 0) {
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
	w->pid = r->pid;
	w->uid = r->uid;
	if ((w->peer = strdup(r->peer != NULL ? r->peer : "")) == NULL)
		goto fail;
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
	const struct px_ask_wait *w = TAILQ_FIRST(&q->waiters);
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long)(q->expires.tv_sec - now.tv_sec) * 1000L + (q->expires.tv_nsec - now.tv_nsec) / 1000000L;
	o->id = q->id;
	o->session = q->session;
	o->host = q->host;
	o->method = q->method_shown;
	o->path = q->path_shown;
	o->path_cut = q->path_cut;
	/* The oldest waiter's: the one that asked first may be gone. */
	o->peer = w != NULL ? w->peer : "";
	o->pid = w != NULL ? w->pid : -1;
	o->uid = w != NULL ? w->uid : -1;
	o->port = q->port;
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
	struct question *q = by_id(a, id), *o;
	size_t n;

	*released = 0;
	if (q == NULL || (unsigned)answer >= PX_ASK_TIMEOUT)
		return -ENOENT;
	/* The grant an answer for the session leaves covers every method
	 * and path of the host and port.  The others are marked first: a
	 * waiter told may make a request that asks a new question. */
	if (answer == PX_ASK_ALLOW_SESSION || answer == PX_ASK_DENY_SESSION)
		TAILQ_FOREACH(o, &a->qs, entry)
			o->settling = o->port == q->port && strcmp(o->session, q->session) == 0 &&
			    strcmp(o->host, q->host) == 0;
	settle(q, answer, released);
	for (;;) {
		TAILQ_FOREACH(o, &a->qs, entry)
			if (o->settling)
				break;
		if (o == NULL)
			break;
		settle(o, answer, &n);
		*released += n;
	}
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
