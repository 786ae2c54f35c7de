/*
 * proxy/core/loopcall.h: run a function on the event loop's thread from another
 * thread, and wait for it.
 *
 * The admin socket is served by a thread of its own (admin.c), so that a
 * loop busy with ten thousand tunnels never delays its I/O; but everything
 * it reports or changes (counters, the config, the listeners) belongs to the
 * loop and is only ever touched there.  px_loopcall_run() hands the loop one
 * function at a time: the loop runs it between two callbacks, at its
 * control priority (prio.h), never inside another callback.
 *
 * A loop that is idle wakes on an eventfd.  A loop that is busy would only
 * see that eventfd after the thousands of descriptors ready before it, so
 * the relay callbacks also call px_loopcall_check() first thing: one
 * relaxed load of a flag, and when it is set, the call is made active at
 * control priority, which makes libevent leave the bulk queue after the
 * current callback.
 */
#ifndef POSTERN_PROXY_LOOPCALL_H
#define POSTERN_PROXY_LOOPCALL_H

struct event_base;
struct px_loopcall;

/* What px_loopcall_run() runs on the loop's thread. */
typedef void (*px_loopcall_fn)(void *arg);

/*
 * The loop's side: an eventfd and its event at control priority on BASE.
 * One per loop (each worker's, worker.h); made on the loop's thread, it is
 * that thread's at once, else px_loopcall_bind() makes it so.  NULL +
 * errno on failure.
 */
struct px_loopcall *px_loopcall_new(struct event_base *base);
/* On the loop's thread, before its loop runs: LC is the one whose waiting
 * call px_loopcall_check() looks for (NULL: none). */
void px_loopcall_bind(struct px_loopcall *lc);

/*
 * Refuse further calls and release one that is waiting (it returns
 * -ECANCELED); from the loop's thread, before the threads that call
 * px_loopcall_run() are joined.  Idempotent.
 */
void px_loopcall_close(struct px_loopcall *lc);

/* Close (as above) and free; from the loop's thread.  NULL is a no-op. */
void px_loopcall_free(struct px_loopcall *lc);

/*
 * From any thread but the loop's: run FN(ARG) on the loop and return 0 once
 * it has returned.  Calls from several threads take turns.  -ETIMEDOUT
 * when the loop has not started FN after TIMEOUT_MS (FN will then not
 * run), -ECANCELED after px_loopcall_close().
 */
int px_loopcall_run(struct px_loopcall *lc, px_loopcall_fn fn, void *arg, int timeout_ms);

/* This thread's loop's flag, set while a call waits for it; read by
 * px_loopcall_check() (NULL on a thread without a loop side). */
extern _Thread_local int *px_loopcall_waiting;
void px_loopcall_poke(void);

/*
 * For the relay's callbacks, at their start: when a call is waiting, have
 * the loop take it after this callback.
 */
static inline void
px_loopcall_check(void)
{
	int *w = px_loopcall_waiting;

	if (w != NULL && __atomic_load_n(w, __ATOMIC_RELAXED))
		px_loopcall_poke();
}

#endif
