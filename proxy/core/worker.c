/*
 * proxy/core/worker.c: the workers' threads and what they share (see worker.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "conf/config.h"
#include "proxy/core/log.h"
#include "proxy/core/loopcall.h"
#include "proxy/core/prio.h"
#include "proxy/core/server.h"
#include "proxy/core/conncount.h"
#include "proxy/core/worker.h"

#define EACH_TIMEOUT_MS 10000

struct worker {
	struct px_workers *ws;
	unsigned i;
	struct px_server *srv;
	struct px_loopcall *lc;   /* made on the worker's thread */
	struct event *stop;       /* made active by px_workers_stop() */
	struct event *pause;      /* the global "full" changed */
	struct event *turn;       /* its turn on a shared UNIX socket */
	pthread_t th;
	int started, running;     /* under ws->mu */
	uint64_t accepted;        /* atomic */
};

struct px_workers {
	unsigned n;
	struct px_workers_hooks hooks;
	pthread_mutex_t mu;       /* the shares, the count, full, running */
	pthread_cond_t cv;
	struct px_conncount_list shares;
	unsigned count;           /* held against max_connections */
	int full;                 /* atomic: the listeners pause */
	struct worker w[];
};

struct px_workers *
px_workers_new(unsigned n, const struct px_workers_hooks *hooks)
{
	struct px_workers *ws;
	unsigned i;

	if (n < 1 || n > PX_WORKERS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if ((ws = calloc(1, sizeof(*ws) + n * sizeof(ws->w[0]))) == NULL)
		return NULL;
	ws->n = n;
	ws->hooks = *hooks;
	pthread_mutex_init(&ws->mu, NULL);
	pthread_cond_init(&ws->cv, NULL);
	LIST_INIT(&ws->shares);
	for (i = 0; i < n; i++) {
		ws->w[i].ws = ws;
		ws->w[i].i = i;
	}
	return ws;
}

void
px_workers_free(struct px_workers *ws)
{
	unsigned i;

	if (ws == NULL)
		return;
	for (i = 0; i < ws->n; i++) {
		if (ws->w[i].stop != NULL)
			event_free(ws->w[i].stop);
		if (ws->w[i].pause != NULL)
			event_free(ws->w[i].pause);
		if (ws->w[i].turn != NULL)
			event_free(ws->w[i].turn);
	}
	pthread_cond_destroy(&ws->cv);
	pthread_mutex_destroy(&ws->mu);
	free(ws);
}

unsigned
px_workers_n(const struct px_workers *ws)
{
	return ws->n;
}

struct px_server *
px_workers_server(const struct px_workers *ws, unsigned i)
{
	return i < ws->n ? ws->w[i].srv : NULL;
}

static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)what;
	px_server_stop(w->srv);
	event_base_loopexit(px_server_base(w->srv), NULL);
}

/* On worker W's loop: follow the global "full". */
static void
pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	(void)fd;
	(void)what;
	w->ws->hooks.pause(w->srv, __atomic_load_n(&w->ws->full, __ATOMIC_ACQUIRE));
}

/* On worker W's loop: its turn came on a UNIX listener. */
static void
turn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)what;
	w->ws->hooks.turn(w->srv);
}

void
px_workers_set(struct px_workers *ws, unsigned i, struct px_server *srv)
{
	struct worker *w = &ws->w[i];

	w->srv = srv;
	/* Made here, on the engine's thread, before any loop runs; made
	 * active from other threads (evthread_use_pthreads()). */
	if (ws->n > 1 && w->stop == NULL) {
		w->stop = event_new(px_server_base(srv), -1, 0, stop_cb, w);
		w->pause = event_new(px_server_base(srv), -1, 0, pause_cb, w);
		w->turn = event_new(px_server_base(srv), -1, 0, turn_cb, w);
		if (w->stop != NULL)
			event_priority_set(w->stop, PX_PRI_CONTROL);
		if (w->pause != NULL)
			event_priority_set(w->pause, PX_PRI_CONTROL);
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct px_workers *ws = w->ws;
	struct event_base *base = px_server_base(w->srv);

	/* This thread's own loop side (loopcall.h), bound to it. */
	w->lc = px_loopcall_new(base);
	pthread_mutex_lock(&ws->mu);
	w->running = w->lc != NULL;
	w->started = 1;
	pthread_cond_broadcast(&ws->cv);
	pthread_mutex_unlock(&ws->mu);
	if (w->lc == NULL)
		return NULL;
	event_base_dispatch(base);
	/* Stopped: no more calls come in, then the connections of this
	 * worker close on its thread, as they lived. */
	pthread_mutex_lock(&ws->mu);
	w->running = 0;
	pthread_mutex_unlock(&ws->mu);
	px_loopcall_free(w->lc);
	w->lc = NULL;
	px_server_stop(w->srv);
	ws->hooks.end(w->srv);
	return NULL;
}

int
px_workers_start(struct px_workers *ws)
{
	unsigned i;
	int bad = 0, err;

	for (i = 1; i < ws->n; i++) {
		struct worker *w = &ws->w[i];

		err = w->stop == NULL || w->pause == NULL || w->turn == NULL ? ENOMEM :
		    pthread_create(&w->th, NULL, worker_main, w);
		if (err != 0) {
			log_errx("cannot start worker %u", i);
			bad = -err;
			break;
		}
		pthread_mutex_lock(&ws->mu);
		while (!w->started)
			pthread_cond_wait(&ws->cv, &ws->mu);
		if (!w->running)
			bad = -EAGAIN;
		pthread_mutex_unlock(&ws->mu);
		if (bad) {
			log_errx("cannot start worker %u's loop", i);
			pthread_join(w->th, NULL);
			w->started = 0;
			break;
		}
	}
	if (bad) {
		px_workers_stop(ws);
		return bad;
	}
	return 0;
}

void
px_workers_stop(struct px_workers *ws)
{
	unsigned i;

	for (i = 1; i < ws->n; i++)
		if (ws->w[i].started)
			event_active(ws->w[i].stop, EV_READ, 1);
	for (i = 1; i < ws->n; i++)
		if (ws->w[i].started) {
			pthread_join(ws->w[i].th, NULL);
			ws->w[i].started = 0;
		}
}

struct each {
	int (*fn)(struct px_server *srv, void *arg);
	void *arg;
	struct px_server *srv;
	int rc;
};

static void
each_cb(void *arg)
{
	struct each *e = arg;

	e->rc = e->fn(e->srv, e->arg);
}

int
px_workers_each(struct px_server *first, int (*fn)(struct px_server *srv, void *arg), void *arg)
{
	struct px_workers *ws = px_server_workers(first);
	unsigned i;
	int rc = 0;

	for (i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		struct each e = { fn, arg, w->srv, 0 };
		int running, r;

		pthread_mutex_lock(&ws->mu);
		running = i > 0 && w->running;
		pthread_mutex_unlock(&ws->mu);
		if (!running) {
			r = fn(w->srv, arg);
		} else if ((r = px_loopcall_run(w->lc, each_cb, &e, EACH_TIMEOUT_MS)) == 0) {
			r = e.rc;
		} else {
			log_warnx("worker %u did not take a call in %d ms: %s", i, EACH_TIMEOUT_MS,
			    strerror(-r));
		}
		if (r < 0 && rc == 0)
			rc = r;
	}
	return rc;
}

/* Under ws->mu: whether the count now fills SRV's max_connections, and
 * whether that changed. */
static int
limit_locked(struct px_workers *ws, struct px_server *srv)
{
	int full = ws->count >= cf_config_proxy(px_server_config(srv))->max_connections;

	if (full == ws->full)
		return -1;
	__atomic_store_n(&ws->full, full, __ATOMIC_RELEASE);
	return full;
}

int
px_workers_take(struct px_server *srv, const char *session, long uid, unsigned max,
    unsigned max_uid, struct px_conncount **sess, struct px_conncount **user, unsigned *held,
    int *took)
{
	struct px_workers *ws = px_server_workers(srv);
	int over = 0, change = -1;

	pthread_mutex_lock(&ws->mu);
	if (session != NULL)
		over = px_conncount_take(&ws->shares, session, uid, max, max_uid, sess, user, held);
	if (over == 0) {
		ws->count++;
		change = limit_locked(ws, srv);
	}
	pthread_mutex_unlock(&ws->mu);
	*took = over;
	return change;
}

int
px_workers_take_share(struct px_server *srv, const char *session, long uid, unsigned max,
    unsigned max_uid, struct px_conncount **sess, struct px_conncount **user, unsigned *held)
{
	struct px_workers *ws = px_server_workers(srv);
	int over;

	pthread_mutex_lock(&ws->mu);
	over = px_conncount_take(&ws->shares, session, uid, max, max_uid, sess, user, held);
	pthread_mutex_unlock(&ws->mu);
	return over;
}

int
px_workers_release(struct px_server *srv, struct px_conncount *sess, struct px_conncount *user,
    int counted)
{
	struct px_workers *ws = px_server_workers(srv);
	int change = -1;

	pthread_mutex_lock(&ws->mu);
	px_conncount_put(sess);
	px_conncount_put(user);
	if (counted) {
		ws->count--;
		change = limit_locked(ws, srv);
	}
	pthread_mutex_unlock(&ws->mu);
	return change;
}

int
px_workers_recheck(struct px_server *srv)
{
	struct px_workers *ws = px_server_workers(srv);
	int change;

	pthread_mutex_lock(&ws->mu);
	change = limit_locked(ws, srv);
	pthread_mutex_unlock(&ws->mu);
	return change;
}

void
px_workers_limit(struct px_server *srv, int pause)
{
	struct px_workers *ws = px_server_workers(srv);
	unsigned i, self = px_server_worker(srv);

	ws->hooks.pause(srv, pause);
	for (i = 0; i < ws->n; i++)
		if (i != self && ws->w[i].pause != NULL)
			event_active(ws->w[i].pause, EV_READ, 1);
}

void
px_workers_turn(struct px_server *srv, unsigned next)
{
	struct px_workers *ws = px_server_workers(srv);

	if (next < ws->n && ws->w[next].turn != NULL)
		event_active(ws->w[next].turn, EV_READ, 1);
}

int
px_workers_full(const struct px_server *srv)
{
	return __atomic_load_n(&px_server_workers(srv)->full, __ATOMIC_ACQUIRE);
}

unsigned
px_workers_count(const struct px_server *srv)
{
	struct px_workers *ws = px_server_workers(srv);
	unsigned n;

	pthread_mutex_lock(&ws->mu);
	n = ws->count;
	pthread_mutex_unlock(&ws->mu);
	return n;
}

void
px_workers_accepted(struct px_server *srv)
{
	__atomic_add_fetch(&px_server_workers(srv)->w[px_server_worker(srv)].accepted, 1,
	    __ATOMIC_RELAXED);
}

uint64_t
px_workers_accepted_by(const struct px_workers *ws, unsigned i)
{
	return i < ws->n ? __atomic_load_n(&ws->w[i].accepted, __ATOMIC_RELAXED) : 0;
}

unsigned
px_workers_auto(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	n = CPU_COUNT(&set);
	if (n < 1)
		return 1;
	return n > PX_WORKERS_MAX ? PX_WORKERS_MAX : (unsigned)n;
}
