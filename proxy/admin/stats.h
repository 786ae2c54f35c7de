/*
 * proxy/admin/stats.h: the proxy's counters, for the admin socket's /metrics
 * and /status, which render them (status.h).  This module only counts,
 * and knows nothing of connections, the server or the output formats.
 * Everything is counted in the one event-loop thread; no locking.
 */
#ifndef POSTERN_PROXY_STATS_H
#define POSTERN_PROXY_STATS_H

#include <stdint.h>

#include "conf/config.h"

#include <stddef.h>

struct px_stats;

/* A new, empty set of counters; NULL + errno on failure. */
struct px_stats *px_stats_new(void);
/* Free S; NULL is a no-op. */
void px_stats_free(struct px_stats *s);

/* A connection was accepted on a listener of SESSION. */
void px_stats_conn_open(struct px_stats *s, const char *session);
/* It closed after moving UP and DOWN bytes in SECONDS; TUNNEL says whether
 * it carried a CONNECT tunnel (for the duration histogram). */
void px_stats_conn_close(struct px_stats *s, const char *session, uint64_t up, uint64_t down,
    double seconds, int tunnel);
/* A decision in SESSION with REASON (CF_R_ALLOWED for allow); RULE, when
 * not NULL, is the rule that decided and is counted by its FILE:LINE and
 * text, so that counts survive reloads that keep the line. */
void px_stats_decision(struct px_stats *s, const char *session, enum cf_reason reason,
    const struct cf_rule *rule);
/* Report mode: a request of SESSION allowed that the allowlist would have
 * refused with WOULD (counted apart from its decision, which is an allow). */
void px_stats_would(struct px_stats *s, const char *session, enum cf_reason would);
/* TLS termination: what happened to secret SECRET of SESSION.  Counted
 * by names only. */
enum px_secret_event {
	PX_SECRET_MISDIRECTED = 0, /* a request carried its placeholder where it is not bound */
	PX_SECRET_INJECTED = 1,    /* it was put on a request */
	PX_SECRET_REFLECTED = 2,   /* a response carried it back, and was overwritten */
};
void px_stats_secret(struct px_stats *s, const char *session, const char *secret,
    enum px_secret_event ev);
/* The secrets counted so far: how many (0 for a NULL S); the I-th one's
 * name as returned, its *SESSION and counters, owned by S. */
size_t px_stats_nsecrets(const struct px_stats *s);
const char *px_stats_secret_at(const struct px_stats *s, size_t i, const char **session,
    uint64_t *injected, uint64_t *misdirected, uint64_t *reflected);
/* A request of SESSION carried its canary NAME (conf/canary.h), and was
 * refused; the canaries counted so far as px_stats_secret_at() gives the
 * secrets. */
void px_stats_canary(struct px_stats *s, const char *session, const char *name);
size_t px_stats_ncanaries(const struct px_stats *s);
const char *px_stats_canary_at(const struct px_stats *s, size_t i, const char **session,
    uint64_t *count);
/* A reload was taken (OK nonzero) or refused. */
void px_stats_reload(struct px_stats *s, int ok);
/* decider =: a question of RESULT (enum px_decider_result, core/decider.h)
 * answered in SECONDS, or from the cache (CACHED). */
#define PX_STATS_DECIDER_RESULTS 5
void px_stats_decider(struct px_stats *s, unsigned result, int cached, double seconds);
/* The counts by result (PX_STATS_DECIDER_RESULTS of them), from the cache,
 * the latency histogram (px_stats_decider_nbuckets() + 1 slots, not
 * cumulative, the last past every bound), its sum and count. */
void px_stats_deciders(const struct px_stats *s, uint64_t *results, uint64_t *cached, uint64_t *hist,
    double *sum, uint64_t *count);
size_t px_stats_decider_nbuckets(void);
double px_stats_decider_le(size_t i);
/* How many reloads were taken and refused so far. */
void px_stats_reloads(const struct px_stats *s, uint64_t *ok, uint64_t *failed);

/* Open connections and totals of SESSION (zero when unknown). */
void px_stats_session(const struct px_stats *s, const char *session, uint64_t *open,
    uint64_t *total, uint64_t *up, uint64_t *down);

/* The sessions counted so far (in the order first seen): how many (0 for
 * a NULL S); the I-th one's name (owned by S) and its counters. */
size_t px_stats_nsessions(const struct px_stats *s);
const char *px_stats_session_at(const struct px_stats *s, size_t i, uint64_t *open,
    uint64_t *total, uint64_t *up, uint64_t *down);
/* The I-th session's decisions with REASON. */
uint64_t px_stats_decisions(const struct px_stats *s, size_t i, enum cf_reason reason);
/* The I-th session's requests report mode allowed that would be refused
 * with WOULD. */
uint64_t px_stats_woulds(const struct px_stats *s, size_t i, enum cf_reason would);

/* The rules that decided so far (in the order first seen): how many (0
 * for a NULL S); the I-th one's FILE:LINE as returned, its *TYPE ("allow"
 * or "deny"), *PATTERN as written and *HITS; the strings owned by S. */
size_t px_stats_nrules(const struct px_stats *s);
const char *px_stats_rule_at(const struct px_stats *s, size_t i, const char **type,
    const char **pattern, uint64_t *hits);

/* The tunnel-duration histogram: how many bounds, the I-th upper bound in
 * seconds, the tunnels that fell in bucket I (not cumulative; S may be
 * NULL), and all tunnels with the sum of their durations. */
size_t px_stats_nbuckets(void);
double px_stats_bucket_le(size_t i);
uint64_t px_stats_bucket_count(const struct px_stats *s, size_t i);
void px_stats_tunnels(const struct px_stats *s, uint64_t *count, double *sum);

#endif
