/*
 * proxy/stats.h: the proxy's counters, for the admin socket's /metrics
 * (Prometheus text format) and /status.  Everything is counted in the one
 * event-loop thread; no locking.
 */
#ifndef POSTERN_PROXY_STATS_H
#define POSTERN_PROXY_STATS_H

#include <stdint.h>

#include "conf/config.h"

struct evbuffer;
struct px_stats;
struct px_server;

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
/* A reload was taken (OK nonzero) or refused. */
void px_stats_reload(struct px_stats *s, int ok);
/* How many reloads were taken and refused so far. */
void px_stats_reloads(const struct px_stats *s, uint64_t *ok, uint64_t *failed);

/* Open connections and totals of SESSION (zero when unknown). */
void px_stats_session(const struct px_stats *s, const char *session, uint64_t *open,
    uint64_t *total, uint64_t *up, uint64_t *down);

/*
 * Append the Prometheus text exposition (version 0.0.4) of every counter to
 * OUT: postern_connections_open / _total by session, postern_decisions_total
 * by session and reason, postern_rule_hits_total by rule (labelled
 * rule="FILE:LINE" and pattern), postern_bytes_total by direction,
 * postern_dns_cache_{hits,misses}_total, postern_config_reloads_total and
 * postern_config_reload_failures_total, postern_config_generation,
 * postern_audit_lines_lost_total, and the histogram
 * postern_tunnel_duration_seconds.  SRV supplies the DNS and audit figures.
 */
void px_stats_metrics(const struct px_stats *s, const struct px_server *srv, struct evbuffer *out);

#endif
