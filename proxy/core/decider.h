/*
 * proxy/core/decider.h: the connections to the deciders (decider = in a
 * session, conf/config.h) on one loop, the questions in flight on them,
 * and the answers kept for their ttl.  It knows bytes and timers, not
 * connections: a caller hands a question and a callback, and gets exactly
 * one call back, never from inside px_decider_ask().
 *
 * Over unix:PATH there is one connection per decider on a loop, and the
 * questions on it are answered by id in any order.  Over http:// each
 * question is one POST on its own connection.  Nothing here blocks: every
 * connect is non-blocking, and a decider that failed is tried again only
 * after a back-off (100 ms, doubling to 2 s); a question asked meanwhile
 * is answered PX_DECIDER_DOWN at once.
 *
 * With workers = N each worker's server has its own (server.h): its own
 * connections and its own cache.  Touched on its loop's thread only.
 */
#ifndef POSTERN_PROXY_CORE_DECIDER_H
#define POSTERN_PROXY_CORE_DECIDER_H

#include <stddef.h>

struct event_base;
struct cf_decider;
struct px_decider_question;
struct px_deciders;
struct px_decider_q;

enum px_decider_result {
	PX_DECIDER_ALLOW = 0,
	PX_DECIDER_DENY,
	PX_DECIDER_TIMEOUT,   /* no answer within decider_timeout */
	PX_DECIDER_BAD,       /* an answer that is not one (see decider_why) */
	PX_DECIDER_DOWN,      /* not reachable, or it closed */
	PX_DECIDER_NRESULTS
};

/* "allow", "deny", "timeout", "bad_answer", "down". */
const char *px_decider_result_word(enum px_decider_result r);

/*
 * The answer to a question: R; for an allow or a deny the decider's
 * REASON (printable ASCII, bounded, maybe empty), else WHY it failed;
 * SECONDS from the question to the answer (0 for a cached answer or one
 * never sent).  The question is gone when this returns.
 */
typedef void px_decider_fn(void *arg, enum px_decider_result r, const char *reason,
    double seconds);

/* The deciders of loop BASE; NULL when out of memory. */
struct px_deciders *px_deciders_new(struct event_base *base);
/* Close every connection; questions still in flight are dropped without
 * a call.  NULL is a no-op. */
void px_deciders_free(struct px_deciders *ds);

/*
 * A kept answer for KEY (the caller's words for one request) from decider
 * D: 1 with *ALLOW and REASON (SIZE bytes) while its ttl lasts, else 0.
 */
int px_decider_cached(struct px_deciders *ds, const struct cf_decider *d, const char *key,
    int *allow, char *reason, size_t size);

/*
 * Ask decider D question Q (its id is set here), to be answered within
 * D->timeout_ms; an allow or a deny with a ttl is kept under KEY (bounded
 * by D->cache_max).  FN(ARG, ...) is called once, later.  Returns the
 * question, to cancel, or NULL when out of memory (FN is not called).
 */
struct px_decider_q *px_decider_ask(struct px_deciders *ds, const struct cf_decider *d,
    struct px_decider_question *q, const char *key, px_decider_fn *fn, void *arg);
/* Forget Q: FN will not be called.  NULL is a no-op. */
void px_decider_cancel(struct px_decider_q *q);

#endif
