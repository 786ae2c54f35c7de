/*
 * proxy/flow/conns.h: the open client connections of one server, internal to
 * proxy/: the list of them, how many count against [proxy]
 * max_connections (and the pausing of the listeners at that limit), the
 * refusals lingering after their answer, each session's and uid's share
 * (conncount.h), and the timer that gives freed heap back once none is open.
 * accept.c adds a connection, conn.c removes it; nothing else changes the
 * set.  With workers = N each worker has its set; the count and the
 * shares are the workers' together (worker.h).
 */
#ifndef POSTERN_PROXY_CONNS_H
#define POSTERN_PROXY_CONNS_H

#include <stdint.h>

struct event_base;
struct px_conn;
struct px_conns;
struct px_server;

/* An empty set on BASE for px_server_new(); NULL (errno) when out of
 * memory.  px_conns_free() frees it once every connection is gone
 * (px_conn_close_all()); NULL is a no-op. */
struct px_conns *px_conns_new(struct event_base *base);
void px_conns_free(struct px_conns *cs);

/* What px_conns_add() returned, for a waiting connection once it has
 * been tried again: the caller's next step for C (which may free C). */
typedef void (*px_conns_admit_fn)(struct px_conn *c, int over, unsigned held);

/*
 * Add C, just accepted (C->srv, C->session, C->sess and for a UNIX peer
 * C->uid set), to its server's set, and take its session's and uid's share
 * of C->sess (none when NULL).  Returns 0 when C got it: C then counts
 * against max_connections, and the listeners pause when that is reached.
 * -EAGAIN when C is over a share while the proxy is full (another worker
 * took the last slot as this one accepted C): C waits (C->waiting), to be
 * read from nothing, until the proxy is not full (px_conns_wake()); then
 * it is tried again and ADMIT is called with what this would have
 * returned.  Otherwise what px_conncount_take() returned (-EDQUOT or -EUSERS,
 * with *HELD what is held; -ENOMEM): C does not count, and lingers after
 * its refusal (C->linger) while fewer than REFUSING_MAX do.  In every case
 * C is in the set until px_conns_remove().
 */
int px_conns_add(struct px_conn *c, unsigned *held, px_conns_admit_fn admit);
/*
 * C, counted since its accept on an auth=token listener with no session,
 * now has one (C->session and C->sess set): take its session's share.
 * 0, or px_conncount_take()'s refusal with *HELD.
 */
int px_conns_take_share(struct px_conn *c, unsigned *held);
/* The proxy is no longer full (every worker is told, each on its loop):
 * try SRV's waiting connections again, in the order they came, on SRV's
 * loop after the current callback. */
void px_conns_wake(struct px_server *srv);
/*
 * Let C linger after its answer (C->linger), reading and discarding what
 * its client still sends, while fewer than REFUSING_MAX connections of
 * its server do.  Returns 1 when C lingers (it may have already), 0 when
 * too many do.
 */
int px_conns_linger(struct px_conn *c);
/* Take C out of its server's set and give back what it holds there (its
 * shares, its count); once none is open, freed heap is given back to the
 * system in a moment.  C itself is the caller's to free. */
void px_conns_remove(struct px_conn *c);

/* SRV's open connections in the order they came: the first (NULL: none),
 * and the one after C (NULL: C was the last).  Freeing C ends it, so take
 * the next one first. */
struct px_conn *px_conns_first(const struct px_server *srv);
struct px_conn *px_conns_next(const struct px_conn *c);
/* How many connections count against max_connections: every worker's
 * (worker.h). */
unsigned px_conns_count(const struct px_server *srv);
/* The open connections of session NAME (NULL: of every session), every
 * worker's, each read on its own loop (call from the first worker's loop,
 * px_workers_each()): returns how many, and sets *UP and *DOWN to the
 * bytes they have relayed so far (closed ones are counted in stats.c). */
unsigned px_conns_relayed(const struct px_server *srv, const char *name, uint64_t *up,
    uint64_t *down);
/* Stop accepting (every worker) when the count is at SRV's current [proxy]
 * max_connections, start again when it is below (after an accept, a close
 * or a reload that moved the limit). */
void px_conns_limit_check(struct px_server *srv);

#endif
