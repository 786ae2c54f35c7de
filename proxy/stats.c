/*
 * proxy/stats.c: counters and their Prometheus rendering (see stats.h).
 *
 * Sessions and rules are few (tens, perhaps hundreds), so plain arrays with
 * linear lookups are enough and keep the code obvious.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proxy/audit.h"
#include "proxy/dns.h"
#include "proxy/server.h"
#include "proxy/stats.h"

#define NREASONS 24
/* Every reason must have a counter: a new one past the last slot would
 * silently drop out of /metrics. */
_Static_assert(CF_R_NREASONS <= NREASONS, "raise NREASONS for the new reason codes");
static const double buckets[] = { 0.1, 1, 10, 60, 300, 900, 3600, 14400 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

struct sess_stats {
	char *name;
	uint64_t open, total, up, down;
	uint64_t decisions[NREASONS];
};

struct rule_stats {
	char *at;      /* FILE:LINE */
	char *pattern; /* the item as written */
	char *type;    /* allow / deny */
	uint64_t hits;
};

struct px_stats {
	struct sess_stats *sess;
	size_t nsess;
	struct rule_stats *rules;
	size_t nrules;
	uint64_t reloads_ok, reloads_failed;
	uint64_t hist[NBUCKETS + 1];
	double hist_sum;
	uint64_t hist_count;
};

struct px_stats *
px_stats_new(void)
{
	return calloc(1, sizeof(struct px_stats));
}

void
px_stats_free(struct px_stats *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nsess; i++)
		free(s->sess[i].name);
	for (i = 0; i < s->nrules; i++) {
		free(s->rules[i].at);
		free(s->rules[i].pattern);
		free(s->rules[i].type);
	}
	free(s->sess);
	free(s->rules);
	free(s);
}

static struct sess_stats *
sess_get(struct px_stats *s, const char *name)
{
	struct sess_stats *nv;
	size_t i;

	for (i = 0; i < s->nsess; i++)
		if (strcmp(s->sess[i].name, name) == 0)
			return &s->sess[i];
	nv = realloc(s->sess, (s->nsess + 1) * sizeof(*nv));
	if (nv == NULL)
		return NULL;
	s->sess = nv;
	memset(&nv[s->nsess], 0, sizeof(nv[0]));
	nv[s->nsess].name = strdup(name);
	if (nv[s->nsess].name == NULL)
		return NULL;
	return &nv[s->nsess++];
}

void
px_stats_conn_open(struct px_stats *s, const char *session)
{
	struct sess_stats *ss;

	if (s == NULL || (ss = sess_get(s, session)) == NULL)
		return;
	ss->open++;
	ss->total++;
}

void
px_stats_conn_close(struct px_stats *s, const char *session, uint64_t up, uint64_t down,
    double seconds, int tunnel)
{
	struct sess_stats *ss;
	size_t i;

	if (s == NULL || (ss = sess_get(s, session)) == NULL)
		return;
	if (ss->open > 0)
		ss->open--;
	ss->up += up;
	ss->down += down;
	if (!tunnel)
		return;
	for (i = 0; i < NBUCKETS; i++)
		if (seconds <= buckets[i])
			break;
	s->hist[i]++;
	s->hist_sum += seconds;
	s->hist_count++;
}

void
px_stats_decision(struct px_stats *s, const char *session, enum cf_reason reason,
    const struct cf_rule *rule)
{
	struct sess_stats *ss;
	char at[300];
	size_t i;

	if (s == NULL)
		return;
	ss = sess_get(s, session);
	if (ss != NULL && (unsigned)reason < NREASONS)
		ss->decisions[reason]++;
	if (rule == NULL)
		return;
	snprintf(at, sizeof(at), "%s:%d", rule->file, rule->line);
	for (i = 0; i < s->nrules; i++) {
		if (strcmp(s->rules[i].at, at) == 0 && strcmp(s->rules[i].pattern, rule->text) == 0) {
			s->rules[i].hits++;
			return;
		}
	}
	{
		struct rule_stats *nv = realloc(s->rules, (s->nrules + 1) * sizeof(*nv));
		if (nv == NULL)
			return;
		s->rules = nv;
		nv[s->nrules].at = strdup(at);
		nv[s->nrules].pattern = strdup(rule->text);
		nv[s->nrules].type = strdup(rule->type == CF_RULE_ALLOW ? "allow" : "deny");
		nv[s->nrules].hits = 1;
		if (nv[s->nrules].at == NULL || nv[s->nrules].pattern == NULL || nv[s->nrules].type == NULL) {
			free(nv[s->nrules].at);
			free(nv[s->nrules].pattern);
			free(nv[s->nrules].type);
			return;
		}
		s->nrules++;
	}
}

void
px_stats_reload(struct px_stats *s, int ok)
{
	if (s == NULL)
		return;
	if (ok)
		s->reloads_ok++;
	else
		s->reloads_failed++;
}

void
px_stats_reloads(const struct px_stats *s, uint64_t *ok, uint64_t *failed)
{
	*ok = s ? s->reloads_ok : 0;
	*failed = s ? s->reloads_failed : 0;
}

void
px_stats_session(const struct px_stats *s, const char *session, uint64_t *open,
    uint64_t *total, uint64_t *up, uint64_t *down)
{
	size_t i;

	*open = *total = *up = *down = 0;
	if (s == NULL)
		return;
	for (i = 0; i < s->nsess; i++) {
		if (strcmp(s->sess[i].name, session) == 0) {
			*open = s->sess[i].open;
			*total = s->sess[i].total;
			*up = s->sess[i].up;
			*down = s->sess[i].down;
			return;
		}
	}
}

/* A label value: backslash, double quote and newline escaped (the text
 * format's rules); other control bytes dropped. */
static void
label(struct evbuffer *out, const char *v)
{
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;
		if (c == '\\' || c == '"')
			evbuffer_add_printf(out, "\\%c", c);
		else if (c == '\n')
			evbuffer_add(out, "\\n", 2);
		else if (c >= 0x20 && c < 0x7f)
			evbuffer_add(out, v, 1);
	}
}

static void
header(struct evbuffer *out, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void
px_stats_metrics(const struct px_stats *s, const struct px_server *srv, struct evbuffer *out)
{
	size_t i, r;
	uint64_t up = 0, down = 0, cum = 0;

	header(out, "postern_connections_open", "gauge", "Client connections open now, by session.");
	for (i = 0; s != NULL && i < s->nsess; i++) {
		evbuffer_add_printf(out, "postern_connections_open{session=\"");
		label(out, s->sess[i].name);
		evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)s->sess[i].open);
	}
	header(out, "postern_connections_total", "counter", "Client connections accepted, by session.");
	for (i = 0; s != NULL && i < s->nsess; i++) {
		evbuffer_add_printf(out, "postern_connections_total{session=\"");
		label(out, s->sess[i].name);
		evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)s->sess[i].total);
		up += s->sess[i].up;
		down += s->sess[i].down;
	}
	header(out, "postern_decisions_total", "counter", "Decisions, by session and reason.");
	for (i = 0; s != NULL && i < s->nsess; i++) {
		for (r = 0; r < NREASONS; r++) {
			if (s->sess[i].decisions[r] == 0)
				continue;
			evbuffer_add_printf(out, "postern_decisions_total{session=\"");
			label(out, s->sess[i].name);
			evbuffer_add_printf(out, "\",reason=\"%s\"} %llu\n", cf_reason_code((enum cf_reason)r),
			    (unsigned long long)s->sess[i].decisions[r]);
		}
	}
	header(out, "postern_rule_hits_total", "counter", "Decisions made by each rule.");
	for (i = 0; s != NULL && i < s->nrules; i++) {
		evbuffer_add_printf(out, "postern_rule_hits_total{rule=\"");
		label(out, s->rules[i].at);
		evbuffer_add_printf(out, "\",type=\"%s\",pattern=\"", s->rules[i].type);
		label(out, s->rules[i].pattern);
		evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)s->rules[i].hits);
	}
	/* Open connections count what they have relayed so far: at its
	 * close a connection's bytes move from their sum to the closed ones,
	 * so the counter never goes down. */
	if (srv != NULL) {
		uint64_t oup, odown;
		(void)px_server_open_conns(srv, NULL, &oup, &odown);
		up += oup;
		down += odown;
	}
	header(out, "postern_bytes_total", "counter", "Bytes relayed, by direction (open connections too).");
	evbuffer_add_printf(out, "postern_bytes_total{direction=\"up\"} %llu\n", (unsigned long long)up);
	evbuffer_add_printf(out, "postern_bytes_total{direction=\"down\"} %llu\n", (unsigned long long)down);
	if (srv != NULL && srv->dns != NULL) {
		struct px_dns_stats ds;
		px_dns_stats(srv->dns, &ds);
		header(out, "postern_dns_cache_hits_total", "counter", "Lookups answered from the cache.");
		evbuffer_add_printf(out, "postern_dns_cache_hits_total %llu\n", (unsigned long long)ds.hits);
		header(out, "postern_dns_cache_misses_total", "counter", "Lookups that needed a query.");
		evbuffer_add_printf(out, "postern_dns_cache_misses_total %llu\n", (unsigned long long)ds.misses);
		header(out, "postern_dns_failures_total", "counter", "Lookups that failed.");
		evbuffer_add_printf(out, "postern_dns_failures_total %llu\n", (unsigned long long)ds.failures);
	}
	header(out, "postern_config_reloads_total", "counter", "Reloads taken.");
	evbuffer_add_printf(out, "postern_config_reloads_total %llu\n",
	    (unsigned long long)(s ? s->reloads_ok : 0));
	header(out, "postern_config_reload_failures_total", "counter", "Reloads refused (the old config stayed).");
	evbuffer_add_printf(out, "postern_config_reload_failures_total %llu\n",
	    (unsigned long long)(s ? s->reloads_failed : 0));
	if (srv != NULL) {
		header(out, "postern_config_generation", "gauge", "Generation of the config in force.");
		evbuffer_add_printf(out, "postern_config_generation %lu\n", srv->generation);
		if (srv->audit != NULL) {
			header(out, "postern_audit_lines_lost_total", "counter",
			    "Audit lines that could not be written.");
			evbuffer_add_printf(out, "postern_audit_lines_lost_total %llu\n",
			    (unsigned long long)px_audit_lost(srv->audit));
		}
	}
	header(out, "postern_tunnel_duration_seconds", "histogram", "Lifetime of CONNECT tunnels.");
	for (i = 0; i < NBUCKETS; i++) {
		cum += s ? s->hist[i] : 0;
		evbuffer_add_printf(out, "postern_tunnel_duration_seconds_bucket{le=\"%g\"} %llu\n", buckets[i],
		    (unsigned long long)cum);
	}
	evbuffer_add_printf(out, "postern_tunnel_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
	    (unsigned long long)(s ? s->hist_count : 0));
	evbuffer_add_printf(out, "postern_tunnel_duration_seconds_sum %.3f\n", s ? s->hist_sum : 0.0);
	evbuffer_add_printf(out, "postern_tunnel_duration_seconds_count %llu\n",
	    (unsigned long long)(s ? s->hist_count : 0));
}
