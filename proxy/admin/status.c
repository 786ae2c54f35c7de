/*
 * proxy/admin/status.c: what the admin socket serves (see status.h).
 *
 * The pages read the server's state and counters through their accessors
 * (server.h, stats.h); admin.c has them rendered on the proxy's loop.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <openssl/crypto.h>

#include "base/text.h"
#include "conf/config.h"
#include "proxy/core/decider.h"
#include "proxy/policy/ask.h"
#include "proxy/core/audit.h"
#include "proxy/policy/budget.h"
#include "proxy/flow/conns.h"
#include "proxy/proto/dns.h"
#include "proxy/policy/grants.h"
#include "proxy/core/server.h"
#include "proxy/admin/stats.h"
#include "proxy/admin/status.h"
#include "proxy/core/mem.h"
#include "proxy/core/worker.h"

/* ---- JSON and text output ------------------------------------------------ */

/*
 * A JSON string (RFC 8259 section 7).  Paths and config errors are bytes
 * from a file, not necessarily UTF-8: invalid sequences become U+FFFD so
 * that the output is always valid JSON, control bytes are escaped.
 */
void
px_status_json_str(struct evbuffer *out, const char *v)
{
	struct evbuffer_iovec vec;
	size_t n, need;

	if (v == NULL) {
		evbuffer_add(out, "null", 4);
		return;
	}
	n = strlen(v);
	need = bs_json_escape(v, n, NULL, 0, BS_JSON_UTF8);
	if (evbuffer_reserve_space(out, (ev_ssize_t)need + 3, &vec, 1) < 1)
		return;
	((char *)vec.iov_base)[0] = '"';
	bs_json_escape(v, n, (char *)vec.iov_base + 1, need + 1, BS_JSON_UTF8);
	((char *)vec.iov_base)[need + 1] = '"';
	vec.iov_len = need + 2;
	evbuffer_commit_space(out, &vec, 1);
}

/* The last reload's errors (joined by newlines in SRV), as a JSON array. */
static void
json_lines(struct evbuffer *out, const char *joined)
{
	const char *p = joined, *nl;
	int first = 1;

	evbuffer_add(out, "[", 1);
	while (p != NULL && *p != '\0') {
		char *one;
		nl = strchr(p, '\n');
		one = strndup(p, nl ? (size_t)(nl - p) : strlen(p));
		if (one != NULL && *one != '\0') {
			if (!first)
				evbuffer_add(out, ",", 1);
			px_status_json_str(out, one);
			first = 0;
		}
		free(one);
		p = nl ? nl + 1 : NULL;
	}
	evbuffer_add(out, "]", 1);
}

/*
 * N bytes of S as one line of text for a terminal: control bytes (a config
 * error may quote them from the file) become \xNN, so that what the
 * status shows can never move the cursor or end the line early.
 */
void
px_status_text_line(struct evbuffer *out, const char *s, size_t n)
{
	struct evbuffer_iovec vec;
	size_t len;

	if (evbuffer_reserve_space(out, (ev_ssize_t)(4 * n + 2), &vec, 1) < 1)
		return;
	len = bs_escape(s, n, vec.iov_base, 4 * n + 1, BS_ESC_KEEP_BACKSLASH | BS_ESC_KEEP_HIGH);
	((char *)vec.iov_base)[len] = '\n';
	vec.iov_len = len + 1;
	evbuffer_commit_space(out, &vec, 1);
}

void
px_status_iso_time(time_t t, char *buf, size_t size)
{
	struct tm tm;

	if (t == 0 || gmtime_r(&t, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "never");
}

/* ---- /pending and /grants (mode = ask) ---------------------------------- */

void
px_status_pending(const struct px_server *srv, int text, struct evbuffer *out)
{
	const struct px_ask *a = px_server_ask(srv);
	struct px_ask_q q;
	char when[32];
	size_t i;

	if (text)
		evbuffer_add_printf(out, "%-5s %-12s %-34s %-8s %-8s %s\n", "ID", "SESSION", "HOST:PORT",
		    "METHOD", "WAITING", "EXPIRES IN");
	else
		evbuffer_add_printf(out, "{\"pending\":[");
	for (i = 0; a != NULL && px_ask_nth(a, i, &q) == 0; i++) {
		px_status_iso_time(q.asked, when, sizeof(when));
		if (text) {
			char hp[CF_HOST_TEXT_MAX + 8], cut[64];
			char *line;
			int n;

			snprintf(hp, sizeof(hp), "%s:%u", q.host, q.port);
			/* The path is shown escaped, with no space in it: what
			 * follows it is the proxy's word. */
			snprintf(cut, sizeof(cut), " (cut: %zu more bytes not shown)", q.path_cut);
			n = asprintf(&line, "%-5u %-12s %-34s %-8s %-8zu %lds%s%s%s  (peer %s, asked %s)",
			    q.id, q.session, hp, q.method, q.waiting, (q.expires_in_ms + 999) / 1000,
			    q.path[0] ? "  path " : "", q.path, q.path_cut > 0 ? cut : "", q.peer, when);
			if (n < 0)
				continue;
			px_status_text_line(out, line, (size_t)n);
			free(line);
			continue;
		}
		if (i > 0)
			evbuffer_add(out, ",", 1);
		evbuffer_add_printf(out, "{\"id\":%u,\"session\":", q.id);
		px_status_json_str(out, q.session);
		evbuffer_add_printf(out, ",\"host\":");
		px_status_json_str(out, q.host);
		evbuffer_add_printf(out, ",\"port\":%u,\"method\":", q.port);
		px_status_json_str(out, q.method);
		evbuffer_add_printf(out, ",\"path\":");
		px_status_json_str(out, q.path);
		evbuffer_add_printf(out, ",\"path_cut\":%zu,\"peer\":", q.path_cut);
		px_status_json_str(out, q.peer);
		/* A UNIX listener's client, as the audit line names it. */
		if (q.uid >= 0)
			evbuffer_add_printf(out, ",\"pid\":%ld,\"uid\":%ld", q.pid, q.uid);
		evbuffer_add_printf(out, ",\"asked\":\"%s\",\"expires_in_ms\":%ld,\"waiting\":%zu}", when,
		    q.expires_in_ms, q.waiting);
	}
	if (text && i == 0)
		evbuffer_add_printf(out, "(no question pending)\n");
	if (!text)
		evbuffer_add_printf(out, "]}\n");
}

/* One grant as a JSON object. */
static void
grant_json(struct evbuffer *out, const struct px_grant *g)
{
	char when[32], until[32];

	px_status_iso_time(g->when, when, sizeof(when));
	px_status_iso_time(g->until, until, sizeof(until));
	evbuffer_add_printf(out, "{\"session\":");
	px_status_json_str(out, g->session);
	evbuffer_add_printf(out, ",\"host\":");
	px_status_json_str(out, g->host);
	evbuffer_add_printf(out, ",\"port\":%u,\"grant\":\"%s\",\"uid\":%ld,\"when\":\"%s\",\"from\":\"%s\","
	    "\"until\":", g->port, px_grant_kind_word(g->kind), g->uid, when,
	    g->from_file ? "grants_file" : "admin");
	if (g->until == 0)
		evbuffer_add_printf(out, "null}");
	else
		evbuffer_add_printf(out, "\"%s\"}", until);
}

void
px_status_grants(const struct px_server *srv, int text, struct evbuffer *out)
{
	struct px_grants *g = px_server_grants(srv);
	size_t i, n = g != NULL ? px_grants_expire(g, time(NULL)) : 0;

	if (text)
		evbuffer_add_printf(out, "%-12s %-34s %-6s %-6s %-21s %s\n", "SESSION", "HOST:PORT", "GRANT",
		    "UID", "WHEN", "UNTIL");
	else
		evbuffer_add_printf(out, "{\"grants\":[");
	for (i = 0; i < n; i++) {
		const struct px_grant *e = px_grants_at(g, i);
		char hp[CF_HOST_TEXT_MAX + 8], when[32], until[32], line[CF_HOST_TEXT_MAX + 300];
		int len;

		if (!text) {
			if (i > 0)
				evbuffer_add(out, ",", 1);
			grant_json(out, e);
			continue;
		}
		snprintf(hp, sizeof(hp), "%s:%u", e->host, e->port);
		px_status_iso_time(e->when, when, sizeof(when));
		px_status_iso_time(e->until, until, sizeof(until));
		len = snprintf(line, sizeof(line), "%-12s %-34s %-6s %-6ld %-21s %s", e->session, hp,
		    px_grant_kind_word(e->kind), e->uid, when, e->until ? until : "(until restart)");
		if (len > 0)
			px_status_text_line(out, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
	}
	if (text && n == 0)
		evbuffer_add_printf(out, "(no runtime grant)\n");
	if (!text)
		evbuffer_add_printf(out, "]}\n");
}

/* How many questions of session NAME are open. */
static size_t
session_pending(const struct px_server *srv, const char *name)
{
	const struct px_ask *a = px_server_ask(srv);
	struct px_ask_q q;
	size_t i, n = 0;

	for (i = 0; a != NULL && px_ask_nth(a, i, &q) == 0; i++)
		n += strcmp(q.session, name) == 0;
	return n;
}

/* ---- /status ------------------------------------------------------------- */

/*
 * Session S's budgets: each allow rule that has one, its
 * limits and its use so far (none yet: zeros), as a JSON array.
 */
static void
json_budgets(const struct px_server *srv, const struct cf_session *s, struct evbuffer *out)
{
	uint64_t now = px_budget_now_ms();
	size_t i;
	int first = 1;

	evbuffer_add_printf(out, ",\"budgets\":[");
	for (i = 0; i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];
		const struct px_budget *b;

		if (!cf_rule_has_budget(r))
			continue;
		b = px_budget_find(px_server_budgets(srv), s->name, r);
		evbuffer_add_printf(out, "%s{\"rule\":", first ? "" : ",");
		first = 0;
		px_status_json_str(out, r->text);
		evbuffer_add_printf(out, ",\"at\":");
		px_status_json_str(out, r->file);
		evbuffer_add_printf(out, ",\"line\":%d", r->line);
		if (r->up_max != 0)
			evbuffer_add_printf(out, ",\"up\":{\"limit_bytes\":%llu,\"window_seconds\":%u,"
			    "\"used_bytes\":%llu,\"resets_in_seconds\":%u}",
			    (unsigned long long)r->up_max, r->up_window,
			    (unsigned long long)(b ? px_budget_up_used(b, now) : 0),
			    b ? px_budget_up_resets_in(b, now) : 0);
		if (r->rps != 0)
			evbuffer_add_printf(out, ",\"rps\":{\"limit\":%u,\"tokens\":%.1f}", r->rps,
			    b ? px_budget_tokens(b, now) : (double)r->rps);
		if (r->conns != 0)
			evbuffer_add_printf(out, ",\"conns\":{\"limit\":%u,\"open\":%u}", r->conns,
			    b ? b->open : 0);
		evbuffer_add_printf(out, ",\"requests\":%llu,\"exceeded\":{\"up\":%llu,\"rps\":%llu,"
		    "\"conns\":%llu}}", (unsigned long long)(b ? b->requests : 0),
		    (unsigned long long)(b ? b->exceeded[PX_BUDGET_UP] : 0),
		    (unsigned long long)(b ? b->exceeded[PX_BUDGET_RPS] : 0),
		    (unsigned long long)(b ? b->exceeded[PX_BUDGET_CONNS] : 0));
	}
	evbuffer_add_printf(out, "]");
}

/* The same for a person: one line per budgeted rule. */
static void
text_budgets(const struct px_server *srv, const struct cf_session *s, struct evbuffer *out)
{
	uint64_t now = px_budget_now_ms();
	size_t i;

	for (i = 0; i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];
		const struct px_budget *b;
		char lim[128];

		if (!cf_rule_has_budget(r))
			continue;
		b = px_budget_find(px_server_budgets(srv), s->name, r);
		evbuffer_add_printf(out, "  budget      %s (%s:%d): %s\n", r->text, r->file, r->line,
		    cf_rule_budget_text(r, lim, sizeof(lim)));
		if (r->up_max != 0) {
			unsigned rs = b ? px_budget_up_resets_in(b, now) : 0;
			evbuffer_add_printf(out, "              up %llu of %llu bytes used", (unsigned long long)
			    (b ? px_budget_up_used(b, now) : 0), (unsigned long long)r->up_max);
			if (rs != 0)
				evbuffer_add_printf(out, ", window resets in %us", rs);
			evbuffer_add_printf(out, "\n");
		}
		if (r->conns != 0)
			evbuffer_add_printf(out, "              conns %u of %u open\n", b ? b->open : 0, r->conns);
		if (b != NULL && (b->exceeded[0] | b->exceeded[1] | b->exceeded[2]) != 0)
			evbuffer_add_printf(out, "              exceeded: up %llu, rps %llu, conns %llu\n",
			    (unsigned long long)b->exceeded[PX_BUDGET_UP],
			    (unsigned long long)b->exceeded[PX_BUDGET_RPS],
			    (unsigned long long)b->exceeded[PX_BUDGET_CONNS]);
	}
}

static unsigned long
uptime(const struct px_server *srv)
{
	time_t now = time(NULL);

	time_t start = px_server_started_at(srv);

	return now > start ? (unsigned long)(now - start) : 0;
}

void
px_status_json(const struct px_server *srv, struct evbuffer *out)
{
	const struct cf_config *c = px_server_config(srv);
	const char *errors;
	time_t last;
	int ok;
	uint64_t rok, rfailed;
	char when[32];
	size_t i, k, ngrants, rss, heap;

	evbuffer_add_printf(out, "{\"version\":");
	px_status_json_str(out, PACKAGE_VERSION);
	evbuffer_add_printf(out, ",\"pid\":%ld,\"uptime_seconds\":%lu", (long)getpid(), uptime(srv));
	evbuffer_add_printf(out, ",\"config\":{\"path\":");
	px_status_json_str(out, cf_config_path(c));
	evbuffer_add_printf(out, ",\"generation\":%lu,\"hash\":", px_server_generation(srv));
	px_status_json_str(out, cf_config_hash(c));
	evbuffer_add_printf(out, "},\"last_reload\":{\"time\":");
	errors = px_server_last_reload(srv, &last, &ok);
	px_status_iso_time(last, when, sizeof(when));
	px_status_json_str(out, last ? when : NULL);
	evbuffer_add_printf(out, ",\"ok\":%s,\"errors\":", ok ? "true" : "false");
	json_lines(out, errors);
	px_stats_reloads(px_server_stats(srv), &rok, &rfailed);
	evbuffer_add_printf(out, "},\"reloads\":{\"ok\":%llu,\"failed\":%llu}",
	    (unsigned long long)rok, (unsigned long long)rfailed);
	evbuffer_add_printf(out, ",\"connections_open\":%u", px_conns_count(srv));
	px_mem_usage(&rss, &heap);
	evbuffer_add_printf(out, ",\"memory\":{\"rss_bytes\":%zu,\"heap_bytes\":%zu,"
	    "\"secure_heap_bytes\":%zu}", rss, heap, CRYPTO_secure_used());
	ngrants = px_server_grants(srv) != NULL ? px_grants_expire(px_server_grants(srv), time(NULL)) : 0;
	evbuffer_add_printf(out, ",\"pending\":%zu,\"grants\":%zu,\"sessions\":[",
	    px_server_ask(srv) != NULL ? px_ask_open(px_server_ask(srv)) : 0, ngrants);
	for (i = 0; i < cf_config_nsessions(c); i++) {
		const struct cf_session *s = cf_config_session(c, i);
		const struct px_listener *l;
		uint64_t open, total, up, down, oup, odown;
		unsigned nopen;
		int first = 1;

		px_stats_session(px_server_stats(srv), s->name, &open, &total, &up, &down);
		nopen = px_conns_relayed(srv, s->name, &oup, &odown);
		up += oup;
		down += odown;
		evbuffer_add_printf(out, "%s{\"name\":", i ? "," : "");
		px_status_json_str(out, s->name);
		evbuffer_add_printf(out, ",\"listeners\":[");
		/* The listeners actually bound, not the ones the file names. */
		for (l = px_listeners_first(srv); l != NULL; l = px_listener_next(l)) {
			if (strcmp(px_listener_session(l), s->name) != 0)
				continue;
			if (!first)
				evbuffer_add(out, ",", 1);
			px_status_json_str(out, px_listener_text(l));
			first = 0;
		}
		evbuffer_add_printf(out, "],\"mode\":\"%s\",\"enforcing\":%s",
		    s->report ? "report" : s->ask ? "ask" : "enforce", s->report ? "false" : "true");
		evbuffer_add_printf(out, ",\"rules\":%zu,\"allow_rules\":%zu,\"deny_rules\":%zu",
		    s->nallow + s->ndeny, s->nallow, s->ndeny);
		evbuffer_add_printf(out, ",\"connections_open\":%u,\"connections_total\":%llu"
		    ",\"bytes_up\":%llu,\"bytes_down\":%llu",
		    nopen, (unsigned long long)total, (unsigned long long)up,
		    (unsigned long long)down);
		json_budgets(srv, s, out);
		/* mode = ask: its open questions, and the runtime grants an
		 * admin made for it (in every mode: they are rules too). */
		evbuffer_add_printf(out, ",\"pending\":%zu,\"grants\":[", session_pending(srv, s->name));
		first = 1;
		for (k = 0; k < ngrants; k++) {
			const struct px_grant *g = px_grants_at(px_server_grants(srv), k);

			if (strcmp(g->session, s->name) != 0)
				continue;
			if (!first)
				evbuffer_add(out, ",", 1);
			grant_json(out, g);
			first = 0;
		}
		evbuffer_add_printf(out, "]}");
	}
	evbuffer_add_printf(out, "]}\n");
}

/* The same for a person (postern-proxy ctl status; Accept: text/plain). */
void
px_status_text(const struct px_server *srv, struct evbuffer *out)
{
	const struct cf_config *c = px_server_config(srv);
	const char *e;
	time_t last;
	int ok;
	uint64_t rok, rfailed;
	char when[32];
	unsigned long up = uptime(srv);
	size_t rss, heap;
	size_t i, k, ngrants = px_server_grants(srv) != NULL ?
	    px_grants_expire(px_server_grants(srv), time(NULL)) : 0;

	evbuffer_add_printf(out, "postern-proxy %s, pid %ld, up %lud %02lu:%02lu:%02lu\n",
	    PACKAGE_VERSION, (long)getpid(), up / 86400, up / 3600 % 24, up / 60 % 60, up % 60);
	evbuffer_add_printf(out, "config      %s\n", cf_config_path(c));
	evbuffer_add_printf(out, "generation  %lu (sha256 %s)\n", px_server_generation(srv),
	    cf_config_hash(c));
	e = px_server_last_reload(srv, &last, &ok);
	px_status_iso_time(last, when, sizeof(when));
	evbuffer_add_printf(out, "last reload %s%s\n", when,
	    last == 0 ? "" : ok ? ", taken" : ", REFUSED (the old config stays)");
	while (e != NULL && *e != '\0') {
		const char *nl = strchr(e, '\n');
		size_t n = nl ? (size_t)(nl - e) : strlen(e);
		if (n > 0) {
			evbuffer_add_printf(out, "            ");
			px_status_text_line(out, e, n);
		}
		e = nl ? nl + 1 : NULL;
	}
	px_stats_reloads(px_server_stats(srv), &rok, &rfailed);
	evbuffer_add_printf(out, "reloads     %llu taken, %llu refused\n",
	    (unsigned long long)rok, (unsigned long long)rfailed);
	evbuffer_add_printf(out, "connections %u open\n", px_conns_count(srv));
	px_mem_usage(&rss, &heap);
	evbuffer_add_printf(out, "memory      %zu kB resident, %zu kB of heap in use\n",
	    rss / 1024, heap / 1024);
	if (CRYPTO_secure_malloc_initialized())
		evbuffer_add_printf(out, "            %zu kB of the secure heap in use\n",
		    CRYPTO_secure_used() / 1024);
	for (i = 0; i < cf_config_nsessions(c); i++) {
		const struct cf_session *s = cf_config_session(c, i);
		const struct px_listener *l;
		uint64_t open, total, bup, bdown, oup, odown;
		unsigned nopen;
		int any = 0;

		px_stats_session(px_server_stats(srv), s->name, &open, &total, &bup, &bdown);
		nopen = px_conns_relayed(srv, s->name, &oup, &odown);
		bup += oup;
		bdown += odown;
		evbuffer_add_printf(out, "\nsession %s\n", s->name);
		evbuffer_add_printf(out, "  mode        %s\n", s->report ?
		    "report (NOT ENFORCING: the allowlist is only reported)" : s->ask ?
		    "ask (what the allowlist refuses is HELD until an admin answers: ctl pending)" :
		    "enforce");
		for (l = px_listeners_first(srv); l != NULL; l = px_listener_next(l)) {
			if (strcmp(px_listener_session(l), s->name) == 0) {
				evbuffer_add_printf(out, "  listen      %s\n", px_listener_text(l));
				any = 1;
			}
		}
		if (!any)
			evbuffer_add_printf(out, "  listen      (none)\n");
		evbuffer_add_printf(out, "  rules       %zu (%zu allow, %zu deny)\n",
		    s->nallow + s->ndeny, s->nallow, s->ndeny);
		evbuffer_add_printf(out, "  connections %u open, %llu total\n",
		    nopen, (unsigned long long)total);
		evbuffer_add_printf(out, "  bytes       %llu up, %llu down\n",
		    (unsigned long long)bup, (unsigned long long)bdown);
		text_budgets(srv, s, out);
		if (s->ask || session_pending(srv, s->name) > 0)
			evbuffer_add_printf(out, "  pending     %zu question(s) (ctl pending)\n",
			    session_pending(srv, s->name));
		for (k = 0; k < ngrants; k++) {
			const struct px_grant *g = px_grants_at(px_server_grants(srv), k);
			char line[CF_HOST_TEXT_MAX + 200], until[32];
			int n;

			if (strcmp(g->session, s->name) != 0)
				continue;
			px_status_iso_time(g->until, until, sizeof(until));
			n = snprintf(line, sizeof(line), "  grant       %s %s:%u (uid %ld, until %s)",
			    px_grant_kind_word(g->kind), g->host, g->port, g->uid,
			    g->until ? until : "the proxy restarts");
			if (n > 0)
				px_status_text_line(out, line, (size_t)n < sizeof(line) ? (size_t)n :
				    sizeof(line) - 1);
		}
	}
}


/* ---- /metrics ------------------------------------------------------------ */

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

/* decider =: the questions by result, the cache's answers, and the
 * latency histogram of the questions sent. */
static void
metrics_decider(struct evbuffer *out, const struct px_stats *s)
{
	uint64_t res[PX_STATS_DECIDER_RESULTS], cached, count, cum = 0;
	uint64_t hist[32];
	double sum;
	size_t i, nb = px_stats_decider_nbuckets();

	if (nb + 1 > sizeof(hist) / sizeof(hist[0]))
		return;
	px_stats_deciders(s, res, &cached, hist, &sum, &count);
	header(out, "postern_decider_answers_total", "counter",
	    "Requests decided by a decider, by its answer (allow, deny) or failure (timeout, bad_answer, down).");
	for (i = 0; i < PX_STATS_DECIDER_RESULTS; i++)
		evbuffer_add_printf(out, "postern_decider_answers_total{result=\"%s\"} %llu\n",
		    px_decider_result_word((enum px_decider_result)i), (unsigned long long)res[i]);
	header(out, "postern_decider_cache_hits_total", "counter", "Answers taken from the cache (within their ttl).");
	evbuffer_add_printf(out, "postern_decider_cache_hits_total %llu\n", (unsigned long long)cached);
	header(out, "postern_decider_latency_seconds", "histogram", "From a question sent to its answer or failure.");
	for (i = 0; i < nb; i++) {
		cum += hist[i];
		evbuffer_add_printf(out, "postern_decider_latency_seconds_bucket{le=\"%g\"} %llu\n",
		    px_stats_decider_le(i), (unsigned long long)cum);
	}
	evbuffer_add_printf(out, "postern_decider_latency_seconds_bucket{le=\"+Inf\"} %llu\n",
	    (unsigned long long)count);
	evbuffer_add_printf(out, "postern_decider_latency_seconds_sum %.6f\n", sum);
	evbuffer_add_printf(out, "postern_decider_latency_seconds_count %llu\n", (unsigned long long)count);
}

/* The Ith secret's sample of metric NAME: its count of EV, labelled by
 * session and secret. */
static void
secret_line(struct evbuffer *out, const struct px_stats *s, size_t i, const char *name,
    enum px_secret_event ev)
{
	const char *ssn, *sec;
	uint64_t n[3];

	sec = px_stats_secret_at(s, i, &ssn, &n[PX_SECRET_INJECTED], &n[PX_SECRET_MISDIRECTED],
	    &n[PX_SECRET_REFLECTED]);
	evbuffer_add_printf(out, "%s{session=\"", name);
	label(out, ssn);
	evbuffer_add_printf(out, "\",secret=\"");
	label(out, sec);
	evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)n[ev]);
}

/* One budget sample of metric NAME for entry B: {session,rule[,kind]}. */
static void
budget_labels(struct evbuffer *out, const char *name, const struct px_budget *b, const char *kind)
{
	evbuffer_add_printf(out, "%s{session=\"", name);
	label(out, b->session);
	evbuffer_add_printf(out, "\",rule=\"");
	label(out, b->rule);
	if (kind != NULL)
		evbuffer_add_printf(out, "\",kind=\"%s", kind);
	evbuffer_add_printf(out, "\"} ");
}

/* The budgets' use, one sample per session and rule used. */
static void
budget_metrics(const struct px_server *srv, struct evbuffer *out)
{
	const struct px_budget *b;
	uint64_t now = px_budget_now_ms();
	int k;

	header(out, "postern_budget_used_bytes", "gauge",
	    "Bytes sent up in the current window of a rule's up= budget, by session and rule.");
	for (b = px_budgets_first(px_server_budgets(srv)); b != NULL; b = b->next)
		if (b->up_max != 0) {
			budget_labels(out, "postern_budget_used_bytes", b, NULL);
			evbuffer_add_printf(out, "%llu\n", (unsigned long long)px_budget_up_used(b, now));
		}
	header(out, "postern_budget_limit_bytes", "gauge", "The up= budget per window, by session and rule.");
	for (b = px_budgets_first(px_server_budgets(srv)); b != NULL; b = b->next)
		if (b->up_max != 0) {
			budget_labels(out, "postern_budget_limit_bytes", b, NULL);
			evbuffer_add_printf(out, "%llu\n", (unsigned long long)b->up_max);
		}
	header(out, "postern_budget_conns_open", "gauge",
	    "Connections holding a rule's budget now, by session and rule.");
	for (b = px_budgets_first(px_server_budgets(srv)); b != NULL; b = b->next) {
		budget_labels(out, "postern_budget_conns_open", b, NULL);
		evbuffer_add_printf(out, "%u\n", b->open);
	}
	header(out, "postern_budget_exceeded_total", "counter",
	    "Requests refused and tunnels closed over a budget, by session, rule and kind.");
	for (b = px_budgets_first(px_server_budgets(srv)); b != NULL; b = b->next)
		for (k = 0; k < PX_BUDGET_NKINDS; k++) {
			budget_labels(out, "postern_budget_exceeded_total", b,
			    px_budget_kind_name((enum px_budget_kind)k));
			evbuffer_add_printf(out, "%llu\n", (unsigned long long)b->exceeded[k]);
		}
}

/* On each worker's loop: add its DNS cache's counters to ARG's. */
static int
dns_sum(struct px_server *srv, void *arg)
{
	struct px_dns_stats *sum = arg, one;

	if (px_server_dns(srv) == NULL)
		return 0;
	px_dns_stats(px_server_dns(srv), &one);
	sum->hits += one.hits;
	sum->misses += one.misses;
	sum->coalesced += one.coalesced;
	sum->failures += one.failures;
	sum->timeouts += one.timeouts;
	sum->evictions += one.evictions;
	sum->entries += one.entries;
	sum->inflight += one.inflight;
	return 0;
}

void
px_status_metrics(const struct px_server *srv, struct evbuffer *out)
{
	const struct px_stats *s = px_server_stats(srv);
	size_t nsess = px_stats_nsessions(s), i, r;
	uint64_t up = 0, down = 0, cum = 0, open, total, sup, sdown, oup, odown, hits, count;
	const char *name, *type, *pattern, *at;
	double sum;

	header(out, "postern_connections_open", "gauge", "Client connections open now, by session.");
	for (i = 0; i < nsess; i++) {
		name = px_stats_session_at(s, i, &open, &total, &sup, &sdown);
		evbuffer_add_printf(out, "postern_connections_open{session=\"");
		label(out, name);
		evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)open);
	}
	header(out, "postern_connections_total", "counter", "Client connections accepted, by session.");
	for (i = 0; i < nsess; i++) {
		name = px_stats_session_at(s, i, &open, &total, &sup, &sdown);
		evbuffer_add_printf(out, "postern_connections_total{session=\"");
		label(out, name);
		evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)total);
		up += sup;
		down += sdown;
	}
	header(out, "postern_decisions_total", "counter", "Decisions, by session and reason.");
	for (i = 0; i < nsess; i++) {
		name = px_stats_session_at(s, i, &open, &total, &sup, &sdown);
		for (r = 0; r < CF_R_NREASONS; r++) {
			uint64_t n = px_stats_decisions(s, i, (enum cf_reason)r);
			if (n == 0)
				continue;
			evbuffer_add_printf(out, "postern_decisions_total{session=\"");
			label(out, name);
			evbuffer_add_printf(out, "\",reason=\"%s\"} %llu\n", cf_reason_code((enum cf_reason)r),
			    (unsigned long long)n);
		}
	}
	/* Report mode's allows stay allows in postern_decisions_total (what
	 * happened); what enforcing would have done is counted apart. */
	header(out, "postern_would_deny_total", "counter",
	    "Requests report mode allowed that the allowlist would refuse, by session and reason.");
	for (i = 0; i < nsess; i++) {
		name = px_stats_session_at(s, i, &open, &total, &sup, &sdown);
		for (r = 0; r < CF_R_NREASONS; r++) {
			uint64_t n = px_stats_woulds(s, i, (enum cf_reason)r);
			if (n == 0)
				continue;
			evbuffer_add_printf(out, "postern_would_deny_total{session=\"");
			label(out, name);
			evbuffer_add_printf(out, "\",reason=\"%s\"} %llu\n", cf_reason_code((enum cf_reason)r),
			    (unsigned long long)n);
		}
	}
	header(out, "postern_rule_hits_total", "counter", "Decisions made by each rule.");
	for (i = 0; i < px_stats_nrules(s); i++) {
		at = px_stats_rule_at(s, i, &type, &pattern, &hits);
		evbuffer_add_printf(out, "postern_rule_hits_total{rule=\"");
		label(out, at);
		evbuffer_add_printf(out, "\",type=\"%s\",pattern=\"", type);
		label(out, pattern);
		evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)hits);
	}
	header(out, "postern_secret_injections_total", "counter",
	    "Requests in terminated TLS tunnels a secret was put on, by session and secret.");
	for (i = 0; i < px_stats_nsecrets(s); i++)
		secret_line(out, s, i, "postern_secret_injections_total", PX_SECRET_INJECTED);
	header(out, "postern_secret_misdirected_total", "counter",
	    "Requests refused for a placeholder sent where its secret is not bound.");
	for (i = 0; i < px_stats_nsecrets(s); i++)
		secret_line(out, s, i, "postern_secret_misdirected_total", PX_SECRET_MISDIRECTED);
	header(out, "postern_canary_total", "counter",
	    "Requests refused for carrying a canary, by session and canary variable.");
	for (i = 0; i < px_stats_ncanaries(s); i++) {
		const char *ssn, *cn;
		uint64_t cnt;

		cn = px_stats_canary_at(s, i, &ssn, &cnt);
		evbuffer_add_printf(out, "postern_canary_total{session=\"");
		label(out, ssn);
		evbuffer_add_printf(out, "\",name=\"");
		label(out, cn);
		evbuffer_add_printf(out, "\"} %llu\n", (unsigned long long)cnt);
	}
	header(out, "postern_secret_reflected_total", "counter",
	    "Responses that carried a secret's value back, overwritten or cut before the client.");
	for (i = 0; i < px_stats_nsecrets(s); i++)
		secret_line(out, s, i, "postern_secret_reflected_total", PX_SECRET_REFLECTED);
	/* Open connections count what they have relayed so far: at its
	 * close a connection's bytes move from their sum to the closed ones,
	 * so the counter never goes down. */
	(void)px_conns_relayed(srv, NULL, &oup, &odown);
	up += oup;
	down += odown;
	header(out, "postern_bytes_total", "counter", "Bytes relayed, by direction (open connections too).");
	evbuffer_add_printf(out, "postern_bytes_total{direction=\"up\"} %llu\n", (unsigned long long)up);
	evbuffer_add_printf(out, "postern_bytes_total{direction=\"down\"} %llu\n", (unsigned long long)down);
	if (px_server_dns(srv) != NULL) {
		struct px_dns_stats ds;

		memset(&ds, 0, sizeof(ds));
		(void)px_workers_each((struct px_server *)srv, dns_sum, &ds);
		header(out, "postern_dns_cache_hits_total", "counter", "Lookups answered from the cache.");
		evbuffer_add_printf(out, "postern_dns_cache_hits_total %llu\n", (unsigned long long)ds.hits);
		header(out, "postern_dns_cache_misses_total", "counter", "Lookups that needed a query.");
		evbuffer_add_printf(out, "postern_dns_cache_misses_total %llu\n", (unsigned long long)ds.misses);
		header(out, "postern_dns_failures_total", "counter", "Lookups that failed.");
		evbuffer_add_printf(out, "postern_dns_failures_total %llu\n", (unsigned long long)ds.failures);
	}
	px_stats_reloads(s, &hits, &count);
	header(out, "postern_config_reloads_total", "counter", "Reloads taken.");
	evbuffer_add_printf(out, "postern_config_reloads_total %llu\n", (unsigned long long)hits);
	header(out, "postern_config_reload_failures_total", "counter", "Reloads refused (the old config stayed).");
	evbuffer_add_printf(out, "postern_config_reload_failures_total %llu\n", (unsigned long long)count);
	/* mode = ask and runtime grants. */
	if (px_server_ask(srv) != NULL) {
		static const enum px_ask_answer answers[] = { PX_ASK_ALLOW_ONCE, PX_ASK_ALLOW_SESSION,
			PX_ASK_DENY_ONCE, PX_ASK_DENY_SESSION, PX_ASK_TIMEOUT };
		size_t k;

		header(out, "postern_asks_pending", "gauge", "Questions of mode = ask waiting for an answer.");
		evbuffer_add_printf(out, "postern_asks_pending %zu\n", px_ask_open(px_server_ask(srv)));
		header(out, "postern_asks_total", "counter", "Questions of mode = ask settled, by answer.");
		for (k = 0; k < sizeof(answers) / sizeof(answers[0]); k++)
			evbuffer_add_printf(out, "postern_asks_total{answer=\"%s\"} %llu\n",
			    px_ask_answer_word(answers[k]),
			    (unsigned long long)px_ask_count(px_server_ask(srv), answers[k]));
	}
	if (px_server_grants(srv) != NULL) {
		struct px_grants *gs = px_server_grants(srv);
		size_t k, m, n = px_grants_expire(gs, time(NULL));

		header(out, "postern_grants", "gauge", "Runtime grants in force, by session and kind.");
		/* One sample per session and kind, each written at its first
		 * grant: a handful of grants, so the square is nothing. */
		for (k = 0; k < n; k++) {
			const struct px_grant *g = px_grants_at(gs, k);
			unsigned long same = 0;
			int seen = 0;

			for (m = 0; m < n; m++) {
				const struct px_grant *o = px_grants_at(gs, m);

				if (o->kind != g->kind || strcmp(o->session, g->session) != 0)
					continue;
				if (m < k)
					seen = 1;
				same++;
			}
			if (seen)
				continue;
			evbuffer_add_printf(out, "postern_grants{session=\"");
			label(out, g->session);
			evbuffer_add_printf(out, "\",kind=\"%s\"} %lu\n", px_grant_kind_word(g->kind), same);
		}
	}
	header(out, "postern_config_generation", "gauge", "Generation of the config in force.");
	evbuffer_add_printf(out, "postern_config_generation %lu\n", px_server_generation(srv));
	if (px_server_audit(srv) != NULL) {
		header(out, "postern_audit_lines_lost_total", "counter",
		    "Audit lines that could not be written.");
		evbuffer_add_printf(out, "postern_audit_lines_lost_total %llu\n",
		    (unsigned long long)px_audit_lost(px_server_audit(srv)));
	}
	budget_metrics(srv, out);
	header(out, "postern_tunnel_duration_seconds", "histogram", "Lifetime of CONNECT tunnels.");
	for (i = 0; i < px_stats_nbuckets(); i++) {
		cum += px_stats_bucket_count(s, i);
		evbuffer_add_printf(out, "postern_tunnel_duration_seconds_bucket{le=\"%g\"} %llu\n",
		    px_stats_bucket_le(i), (unsigned long long)cum);
	}
	px_stats_tunnels(s, &count, &sum);
	evbuffer_add_printf(out, "postern_tunnel_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
	    (unsigned long long)count);
	evbuffer_add_printf(out, "postern_tunnel_duration_seconds_sum %.3f\n", sum);
	evbuffer_add_printf(out, "postern_tunnel_duration_seconds_count %llu\n",
	    (unsigned long long)count);
	metrics_decider(out, s);
	/* workers = N: how the kernel spread the connections (only then, so
	 * that one worker's /metrics stays what it was). */
	if (px_workers_n(px_server_workers(srv)) > 1) {
		unsigned w;

		header(out, "postern_worker_connections", "counter",
		    "Client connections accepted, by worker (workers = N).");
		for (w = 0; w < px_workers_n(px_server_workers(srv)); w++)
			evbuffer_add_printf(out, "postern_worker_connections{worker=\"%u\"} %llu\n", w,
			    (unsigned long long)px_workers_accepted_by(px_server_workers(srv), w));
	}
}
