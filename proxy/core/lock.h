/*
 * proxy/core/lock.h: a module's one mutex, held for the rest of a block.
 *
 * With workers = N (worker.h) the modules every worker shares (the
 * counters, budgets, grants, the tally, learn, the sessions' CAs) are
 * touched from N loops.  Each guards its state with one recursive mutex,
 * taken first thing in every public function and released by the
 * compiler on every return (the cleanup attribute, GCC and Clang), so
 * that an early return can never leave it held.  Recursive, because some
 * public functions call others of their module.  The sections are short
 * (a table lookup, a counter) and uncontended with one worker.
 */
#ifndef POSTERN_PROXY_LOCK_H
#define POSTERN_PROXY_LOCK_H

#include <pthread.h>

#define PX_LOCK_INIT PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP

static inline pthread_mutex_t *
px_lock_take(pthread_mutex_t *mu)
{
	pthread_mutex_lock(mu);
	return mu;
}

static inline void
px_lock_drop(pthread_mutex_t **mu)
{
	if (*mu != NULL)
		pthread_mutex_unlock(*mu);
}

/* Hold MU (a pthread_mutex_t *) until the end of the enclosing block. */
#define PX_LOCKED(mu) \
	pthread_mutex_t *px_held_ __attribute__((cleanup(px_lock_drop), unused)) = px_lock_take(mu)

#endif
