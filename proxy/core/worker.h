/*
 * proxy/core/worker.h: workers = N, one event loop per worker thread, internal
 * to proxy/.
 *
 * Each worker is a struct px_server of its own (server.h) with its own
 * event_base, connections (conns.h), listeners (listen.h: the copies of
 * the first worker's, see there), DNS channel and cache (dns.h), splice
 * pipes and scratch buffers (thread-local); a connection lives and dies on
 * the worker that accepted it.  What the workers share is here: the list
 * of them, the count of connections held against [proxy] max_connections
 * and whether that holds the listeners, and the sessions' shares of it
 * (conncount.h), so that both limits are global, not per worker.  The other
 * shared modules (the counters, audit log, budgets, grants, tally, learn,
 * sessions' CAs) lock inside (lock.h); each snapshot is shared read-only,
 * every worker holding its own reference, swapped on its own loop after a
 * reload (reload.c).
 *
 * The first worker (0) runs on the engine's thread and is the one the
 * admin thread, the signals and the watch talk to: reloads run there, once,
 * and then reach the others through px_workers_each().
 */
#ifndef POSTERN_PROXY_WORKER_H
#define POSTERN_PROXY_WORKER_H

#include <stdint.h>

struct px_conn;
struct px_server;
struct px_conncount;
struct px_workers;

/*
 * What the workers ask of the modules above them (the engine wires them,
 * so that this module names none of them): on worker SRV's loop, have its
 * listeners follow FULL (pause them when nonzero, else resume), see
 * whether it is its turn on a UNIX listener every worker watches, and,
 * at the end of its thread, close its connections and free the thread's
 * scratch.
 */
struct px_workers_hooks {
	void (*pause)(struct px_server *srv, int full);
	void (*turn)(struct px_server *srv);
	void (*end)(struct px_server *srv);
};

/* Room for N workers (1..PX_WORKERS_MAX), none added yet, calling HOOKS
 * (copied); NULL (errno). */
struct px_workers *px_workers_new(unsigned n, const struct px_workers_hooks *hooks);
/* Free WS once every worker's thread has ended; NULL is a no-op. */
void px_workers_free(struct px_workers *ws);
/* How many workers WS has room for, and the I-th server (NULL before
 * px_workers_set()). */
unsigned px_workers_n(const struct px_workers *ws);
struct px_server *px_workers_server(const struct px_workers *ws, unsigned i);
/* SRV (made with WS and I in its struct px_server_init) is worker I of
 * WS; the engine calls it once SRV is made. */
void px_workers_set(struct px_workers *ws, unsigned i, struct px_server *srv);

/* A server's workers and its index among them: px_server_workers() and
 * px_server_worker() (server.h). */

/*
 * Start a thread for every worker but the first, each running its loop,
 * and return once all are running; 0, or a negative errno (logged) with
 * those started stopped again.  px_workers_stop() stops them (a stop event
 * on each loop) and joins them; each first closes its connections.
 */
int px_workers_start(struct px_workers *ws);
void px_workers_stop(struct px_workers *ws);

/*
 * From the first worker's thread only: run FN(SRV_I, ARG) for every worker
 * I in order, on that worker's own loop (a loopcall, loopcall.h; directly
 * for the first, and for all while their threads are not running), and
 * wait for each.  Returns 0, or the first failure (FN's negative value, or
 * -ETIMEDOUT for a worker that did not take the call in 10 s: it is told).
 */
int px_workers_each(struct px_server *first, int (*fn)(struct px_server *srv, void *arg),
    void *arg);

/*
 * Take C's share of its session's (and peer uid's) connections and count
 * C against max_connections, under the workers' one lock (conns.c calls
 * these; the arguments are px_conncount_take()'s).  px_workers_release() gives
 * back what px_workers_take() took (COUNTED: C was counted).  Both return
 * whether the listeners of every worker must now pause (1) or resume (0),
 * or -1 when nothing changed; px_workers_limit() tells the other workers.
 */
int px_workers_take(struct px_server *srv, const char *session, long uid, unsigned max,
    unsigned max_uid, struct px_conncount **sess, struct px_conncount **user, unsigned *held,
    int *took);
/* The session's share alone, for a connection already counted whose
 * session became known after its accept (an auth=token listener):
 * px_conncount_take()'s result. */
int px_workers_take_share(struct px_server *srv, const char *session, long uid, unsigned max,
    unsigned max_uid, struct px_conncount **sess, struct px_conncount **user, unsigned *held);
int px_workers_release(struct px_server *srv, struct px_conncount *sess, struct px_conncount *user,
    int counted);
/* Re-check the limit of SRV's snapshot against the global count (after a
 * reload moved it); the same return as above. */
int px_workers_recheck(struct px_server *srv);
/* Every worker's listeners follow the global "full" (PAUSE) on their own
 * loops: SRV's at once, the others' through an event on their loop. */
void px_workers_limit(struct px_server *srv, int pause);
/* Whether the listeners must be paused now (all workers). */
int px_workers_full(const struct px_server *srv);
/* The connections counted against max_connections, over all workers. */
unsigned px_workers_count(const struct px_server *srv);

/* Wake worker NEXT to take its turn on the UNIX listeners every worker
 * watches (listen.c). */
void px_workers_turn(struct px_server *srv, unsigned next);

/* A connection was accepted by worker SRV (for /metrics'
 * postern_worker_connections), and how many worker I has accepted. */
void px_workers_accepted(struct px_server *srv);
uint64_t px_workers_accepted_by(const struct px_workers *ws, unsigned i);

/* The CPUs this process may run on (sched_getaffinity), for workers =
 * auto, at least 1 and at most PX_WORKERS_MAX. */
unsigned px_workers_auto(void);

#endif
