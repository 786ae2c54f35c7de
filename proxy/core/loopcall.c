/*
 * proxy/core/loopcall.c: run a function on the event loop's thread (see
 * loopcall.h).
 *
 * One call is in flight at a time.  Its slot moves NONE -> PENDING (a
 * caller filled it) -> RUNNING (the loop took it) -> DONE (the function
 * returned) -> NONE (the caller saw it), all under one mutex; the caller
 * waits on the condition variable.  A caller that times out may withdraw a
 * call only while it is still PENDING, so the loop never runs a function
 * whose caller has gone.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <event2/event.h>

#include "proxy/core/loopcall.h"
#include "proxy/core/prio.h"

enum slot { S_NONE, S_PENDING, S_RUNNING, S_DONE };

struct px_loopcall {
	struct event *ev;
	int efd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int closed;
	int waiting;              /* a call waits (px_loopcall_check()) */
	enum slot state;
	px_loopcall_fn fn;
	void *arg;
};

/* The loop side of the calling thread's loop (px_loopcall_bind()), and
 * the flag px_loopcall_check() reads: one per loop, so that a call
 * waiting for one worker never makes another leave its bulk queue. */
_Thread_local int *px_loopcall_waiting;
static _Thread_local struct px_loopcall *self_lc;

/* On the loop: the eventfd was written, or px_loopcall_poke() made the
 * event active. */
static void
loop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_loopcall *lc = arg;
	uint64_t v;
	px_loopcall_fn fn;
	void *fnarg;

	(void)what;
	/* Non-blocking; EAGAIN when only poked. */
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN && errno != EINTR)
		return;
	__atomic_store_n(&lc->waiting, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&lc->mu);
	if (lc->state != S_PENDING) {
		pthread_mutex_unlock(&lc->mu);
		return;
	}
	lc->state = S_RUNNING;
	fn = lc->fn;
	fnarg = lc->arg;
	pthread_mutex_unlock(&lc->mu);

	fn(fnarg);

	pthread_mutex_lock(&lc->mu);
	lc->state = S_DONE;
	pthread_cond_broadcast(&lc->cv);
	pthread_mutex_unlock(&lc->mu);
}

void
px_loopcall_poke(void)
{
	if (self_lc != NULL) {
		__atomic_store_n(&self_lc->waiting, 0, __ATOMIC_RELAXED);
		event_active(self_lc->ev, EV_READ, 1);
	}
}

void
px_loopcall_bind(struct px_loopcall *lc)
{
	self_lc = lc;
	px_loopcall_waiting = lc != NULL ? &lc->waiting : NULL;
}

struct px_loopcall *
px_loopcall_new(struct event_base *base)
{
	struct px_loopcall *lc;
	pthread_condattr_t ca;
	int e;

	if ((lc = calloc(1, sizeof(*lc))) == NULL)
		return NULL;
	lc->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (lc->efd < 0) {
		e = errno;
		free(lc);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&lc->mu, NULL);
	/* Timeouts on the monotonic clock: a clock step must not cut a wait
	 * short or stretch it. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lc->cv, &ca);
	pthread_condattr_destroy(&ca);
	lc->ev = event_new(base, lc->efd, EV_READ | EV_PERSIST, loop_cb, lc);
	if (lc->ev == NULL || event_priority_set(lc->ev, PX_PRI_CONTROL) != 0 ||
	    event_add(lc->ev, NULL) != 0) {
		px_loopcall_free(lc);
		errno = ENOMEM;
		return NULL;
	}
	if (self_lc == NULL)
		px_loopcall_bind(lc);
	return lc;
}

void
px_loopcall_close(struct px_loopcall *lc)
{
	pthread_mutex_lock(&lc->mu);
	lc->closed = 1;
	pthread_cond_broadcast(&lc->cv);
	pthread_mutex_unlock(&lc->mu);
}

void
px_loopcall_free(struct px_loopcall *lc)
{
	if (lc == NULL)
		return;
	px_loopcall_close(lc);
	if (lc->ev != NULL)
		event_free(lc->ev);
	close(lc->efd);
	pthread_cond_destroy(&lc->cv);
	pthread_mutex_destroy(&lc->mu);
	if (self_lc == lc)
		px_loopcall_bind(NULL);
	free(lc);
}

int
px_loopcall_run(struct px_loopcall *lc, px_loopcall_fn fn, void *arg, int timeout_ms)
{
	struct timespec until;
	uint64_t one = 1;
	ssize_t w;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}

	pthread_mutex_lock(&lc->mu);
	/* Take turns with other callers. */
	while (lc->state != S_NONE && !lc->closed && rc == 0)
		rc = pthread_cond_timedwait(&lc->cv, &lc->mu, &until);
	if (lc->closed || rc != 0) {
		pthread_mutex_unlock(&lc->mu);
		return lc->closed ? -ECANCELED : -ETIMEDOUT;
	}
	lc->state = S_PENDING;
	lc->fn = fn;
	lc->arg = arg;
	__atomic_store_n(&lc->waiting, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lc->mu);

	/* Wakes an idle loop; a busy one sees the flag first.  Should the
	 * write fail, the flag still reaches a busy loop, and the timeout
	 * bounds the wait. */
	w = write(lc->efd, &one, sizeof(one));
	(void)w;

	pthread_mutex_lock(&lc->mu);
	while (lc->state == S_PENDING && !lc->closed && rc == 0)
		rc = pthread_cond_timedwait(&lc->cv, &lc->mu, &until);
	if (lc->state == S_PENDING) {
		/* Not taken: withdraw it. */
		rc = lc->closed ? -ECANCELED : -ETIMEDOUT;
	} else {
		/* Taken: the loop is running FN with our ARG; wait it out. */
		while (lc->state != S_DONE)
			pthread_cond_wait(&lc->cv, &lc->mu);
		rc = 0;
	}
	lc->state = S_NONE;
	pthread_cond_broadcast(&lc->cv);
	pthread_mutex_unlock(&lc->mu);
	return rc;
}
