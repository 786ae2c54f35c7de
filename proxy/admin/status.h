/*
 * proxy/admin/status.h: the pages of the admin socket (admin.h): GET /status as
 * JSON or text, and GET /metrics (Prometheus text format).  Each is
 * rendered from SRV's state and counters, on SRV's loop thread; the
 * formats are documented in postern-proxy(8), "ADMIN SOCKET".
 */
#ifndef POSTERN_PROXY_STATUS_H
#define POSTERN_PROXY_STATUS_H

#include <stddef.h>
#include <time.h>

struct evbuffer;
struct px_server;

/* Append /status to OUT: one JSON object (version, pid, uptime, the config
 * in force, the last reload, and per session its bound listeners, mode,
 * rules, connections, bytes, questions pending and runtime grants), ended
 * by a newline. */
void px_status_json(const struct px_server *srv, struct evbuffer *out);

/* The same for a person (postern-proxy ctl status; Accept: text/plain). */
void px_status_text(const struct px_server *srv, struct evbuffer *out);

/*
 * Append the Prometheus text exposition (version 0.0.4) of every counter to
 * OUT: postern_connections_open / _total by session, postern_decisions_total
 * by session and reason, postern_rule_hits_total by rule (labelled
 * rule="FILE:LINE" and pattern), postern_bytes_total by direction (open
 * connections too), postern_dns_cache_{hits,misses}_total and
 * postern_dns_failures_total, postern_config_reloads_total and
 * postern_config_reload_failures_total, postern_config_generation,
 * postern_audit_lines_lost_total, postern_asks_pending, postern_asks_total
 * by answer, postern_grants by session and kind, and the histogram
 * postern_tunnel_duration_seconds.
 */
void px_status_metrics(const struct px_server *srv, struct evbuffer *out);

/*
 * V as a JSON string (RFC 8259 section 7), "null" for NULL.  Paths and
 * config errors are bytes from a file, not necessarily UTF-8: invalid
 * sequences become U+FFFD so that the output is always valid JSON, and
 * control bytes are escaped.
 */
void px_status_json_str(struct evbuffer *out, const char *v);

/* T (wall clock) as "2026-12-01T20:00:00Z" in BUF, "never" for 0. */
void px_status_iso_time(time_t t, char *buf, size_t size);

/* GET /pending: the questions of mode = ask (ask.h), as JSON:
 * {"pending":[{"id":..,"session":..,"host":..,"port":..,"method":..,
 * "path":..,"peer":..,"asked":..,"expires_in_ms":..,"waiting":..}]}; and
 * the same as a table for a person (TEXT nonzero). */
void px_status_pending(const struct px_server *srv, int text, struct evbuffer *out);

/* GET /grants: the runtime grants in force (grants.h), as JSON
 * {"grants":[{"session":..,"host":..,"port":..,"grant":"allow"|"deny",
 * "uid":..,"when":..,"until":..|null}]}, or a table (TEXT nonzero). */
void px_status_grants(const struct px_server *srv, int text, struct evbuffer *out);

/* N bytes of S and a newline, as one line of text for a terminal: control
 * bytes become \xNN, so that what is shown can never move the cursor or
 * end the line early. */
void px_status_text_line(struct evbuffer *out, const char *s, size_t n);

#endif
