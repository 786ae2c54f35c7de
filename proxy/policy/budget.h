/*
 * proxy/policy/budget.h: the use of per-host budgets (an allow rule's
 * up=, rps= and conns=, conf/rule.h), kept outside the config snapshot
 * so that a reload keeps it.
 *
 * One entry per session and rule: two sessions under the same [defaults]
 * rule each have their own budget, since each is another sandbox, and
 * one agent's use must not refuse another's requests.  An entry is keyed
 * by the session's name and the rule's text, not by the rule's id, which
 * changes with every snapshot: a reload that keeps the rule keeps its
 * use.  The text is taken without its budget flags, so that a reload that
 * changes only the limits keeps the entry too, and the new limits apply to
 * the use so far.  The server owns the table
 * (px_server_budgets()); it is touched on the loop's thread only.
 */
#ifndef POSTERN_PROXY_BUDGET_H
#define POSTERN_PROXY_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "conf/rule.h"

struct cf_config;
struct px_budgets;

/* Which budget refused a request (the kind label in /metrics). */
enum px_budget_kind {
	PX_BUDGET_UP = 0,
	PX_BUDGET_RPS,
	PX_BUDGET_CONNS,
	PX_BUDGET_NKINDS
};

/* "up", "rps", "conns". */
const char *px_budget_kind_name(enum px_budget_kind k);

/*
 * One session's use of one rule's budgets.  Public so that /status and
 * /metrics can show it; only budget.c writes it.  The limits are the
 * rule's in the latest snapshot that named it (px_budget_get()).
 */
struct px_budget {
	struct px_budget *next;
	char *session;
	char *key;                 /* the rule's text without its budget flags */
	char *rule;                /* the rule's text as last written */
	uint64_t up_max;           /* 0: no byte budget */
	uint32_t up_window;        /* seconds */
	uint32_t rps, conns;       /* 0: no such budget */
	uint64_t up_used;          /* bytes sent up in the current window */
	uint64_t window_start_ms;  /* monotonic; the window starts at its first byte */
	double tokens;             /* rps: the token bucket, at most RPS */
	uint64_t tokens_ms;        /* when the bucket was last filled */
	uint32_t open;             /* connections (tunnels, requests) that hold it now */
	uint32_t held;             /* holds of any kind (px_budget_admit()) */
	uint64_t requests;         /* admitted, ever */
	uint64_t exceeded[PX_BUDGET_NKINDS];
};

/* An empty table, or NULL (errno) when out of memory. */
struct px_budgets *px_budgets_new(void);
/* Free the table and every entry; NULL is a no-op.  No connection may
 * still hold an entry. */
void px_budgets_free(struct px_budgets *t);

/* The loop's monotonic clock in milliseconds (the budgets' time). */
uint64_t px_budget_now_ms(void);

/*
 * The entry of SESSION and rule R (which has a budget), made when it is
 * the first use, its limits set from R (a reload's new limit applies to
 * the use so far).  Returns it (owned by T), or NULL when out of memory.
 */
struct px_budget *px_budget_get(struct px_budgets *t, const char *session,
    const struct cf_rule *r);

/*
 * Admit a new request or tunnel under B at NOW_MS: refused when CONN (a
 * new connection to the host, not a request inside a tunnel it already
 * holds) and B's conns are all held, when the rps bucket is empty, or when
 * the byte budget of the current window is spent.  Returns 0 with a token
 * taken and a hold on B (counted against conns when CONN) that the caller
 * gives back with px_budget_release(), B staying valid while held; or -1
 * with *KIND what refused it, *RETRY_S the seconds until it frees up (0
 * when unknown: a connection must close first) and the refusal counted.
 */
int px_budget_admit(struct px_budget *b, uint64_t now_ms, int conn, enum px_budget_kind *kind,
    unsigned *retry_s);

/*
 * Admit one request that holds nothing (an HTTP/2 stream inside a
 * terminated tunnel, whose tunnel holds the connection): the rps and up
 * checks of px_budget_admit(), the same returns, and no hold.
 */
int px_budget_admit_stream(struct px_budget *b, uint64_t now_ms, enum px_budget_kind *kind,
    unsigned *retry_s);

/* Give back a hold px_budget_admit() took with CONN as given.  NULL is a
 * no-op. */
void px_budget_release(struct px_budget *b, int conn);

/*
 * The bytes B still lets go up at NOW_MS (UINT64_MAX when it has no byte
 * budget), a new window started when the last one is over.
 */
uint64_t px_budget_up_left(struct px_budget *b, uint64_t now_ms);
/* Count N bytes sent up under B at NOW_MS (never more than
 * px_budget_up_left() allowed). */
void px_budget_up_take(struct px_budget *b, uint64_t now_ms, uint64_t n);
/* A running tunnel or body went over B's byte budget: count it. */
void px_budget_up_exceeded(struct px_budget *b);
/* Seconds until B's byte window resets at NOW_MS (0: no window running). */
unsigned px_budget_up_resets_in(const struct px_budget *b, uint64_t now_ms);

/*
 * After a reload to CFG: each entry takes the limits of its rule in CFG
 * (the use so far is kept); one that no session of CFG still has a
 * budgeted rule for and no connection holds is forgotten, so that the
 * table does not grow with every rule ever written.  A held one keeps its
 * last limits until it is given back.
 */
void px_budgets_reload(struct px_budgets *t, const struct cf_config *cfg);

/* The entry of SESSION and R, or NULL when it was never used. */
const struct px_budget *px_budget_find(const struct px_budgets *t, const char *session,
    const struct cf_rule *r);
/* The bytes B counts sent up in its window at NOW_MS (0 once it is over). */
uint64_t px_budget_up_used(const struct px_budget *b, uint64_t now_ms);
/* The rps tokens B would have at NOW_MS (what a burst may still take). */
double px_budget_tokens(const struct px_budget *b, uint64_t now_ms);

/* The entries, in the order they were made, for /status and /metrics. */
const struct px_budget *px_budgets_first(const struct px_budgets *t);

#endif
