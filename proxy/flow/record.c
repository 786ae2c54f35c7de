/*
 * proxy/flow/record.c: the audit record, the last step of the flow (accept ->
 * head -> decide -> resolve -> connect -> relay -> audit): every line the
 * proxy writes about a connection, a decision, a revoke or a close, is
 * built here from the connection and named fields (conn.h, struct
 * px_rec), so that one builder names every field one way.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "proxy/core/decider.h"
#include "conf/parent.h"
#include "proxy/policy/ask.h"
#include "proxy/core/audit.h"
#include "proxy/policy/learn.h"
#include "proxy/flow/notice.h"
#include "proxy/flow/conn.h"
#include "proxy/admin/stats.h"

void
px_record(struct px_conn *c, const struct px_rec *r)
{
	struct px_server *srv = c->srv;
	struct px_json j;
	char h[CF_HOST_TEXT_MAX];
	int is_close = strcmp(r->event, "close") == 0;

	/* An allowed request cut short (the upstream failed, a revoke)
	 * keeps its line, before the close line that says why. */
	if (is_close && c->tm != NULL && c->tm->line_due)
		px_record_request(c);
	if (is_close)
		px_record_reflected_due(c);
	px_json_begin(&j, r->event);
	px_json_str(&j, "session", c->session);
	px_json_str(&j, "peer", c->peer);
	if (c->is_unix) {
		px_json_num(&j, "pid", c->pid);
		px_json_num(&j, "uid", c->uid);
	}
	px_json_str(&j, "method", c->req.method[0] ? c->req.method : NULL);
	if (c->req.host.kind != 0) {
		cf_host_format(&c->req.host, h, sizeof(h));
		px_json_str(&j, "host", h);
		px_json_num(&j, "port", c->req.port);
	}
	if (c->req.mode != CF_MODE_CONNECT && c->req.path[0])
		px_json_str(&j, "path", c->req.path);
	px_json_str(&j, "address", c->req.addr[0] ? c->req.addr : NULL);
	if (c->req.via_parent)
		px_json_str(&j, "parent", c->req.parent->text);
	if (r->decision != NULL)
		px_json_str(&j, "decision", r->decision);
	if (r->would != CF_R_ALLOWED) {
		/* Report mode: allowed, and the reason the allowlist
		 * would have refused it with. */
		px_json_str(&j, "would", "deny");
		px_json_str(&j, "reason", cf_reason_code(r->would));
	} else if (r->has_reason) {
		px_json_str(&j, "reason", cf_reason_code(r->reason));
	}
	/* mode = ask: the question it waited on, and the answer. */
	if (r->decision != NULL && c->req.ask_id != 0) {
		px_json_num(&j, "asked", c->req.ask_id);
		px_json_str(&j, "answer", px_ask_answer_word((enum px_ask_answer)c->req.ask_answer));
	}
	/* decider =: what it answered (or how it failed). */
	if (r->decision != NULL && c->req.decider != 0)
		px_json_str(&j, "decider", px_decider_result_word((enum px_decider_result)(c->req.decider - 1)));
	if (r->decision != NULL && c->req.granted && r->rule == NULL && strcmp(r->decision, "allow") == 0)
		px_json_str(&j, "grant", c->req.ask_id != 0 && c->req.ask_answer == PX_ASK_ALLOW_ONCE ?
		    "once" : "session");
	if (r->rule != NULL) {
		char at[300];
		cf_rule_at(r->rule, at, sizeof(at));
		px_json_str(&j, "rule", r->rule->text);
		px_json_str(&j, "rule_at", at);
	}
	if (r->sni != NULL && r->sni[0])
		px_json_str(&j, "sni", r->sni);
	if (c->req.mode == CF_MODE_TLS)
		px_json_str(&j, "tls", "terminated");
	/* The secret put on the request, by name: never its value, never a
	 * placeholder. */
	if (r->secret != NULL && r->secret[0])
		px_json_str(&j, "secret", r->secret);

	if (is_close) {
		struct timeval now;

		event_base_gettimeofday_cached(px_server_base(srv), &now);
		px_json_num(&j, "requests", c->requests);
		px_json_num(&j, "bytes_up", (int64_t)c->cli.bytes);
		px_json_num(&j, "bytes_down", (int64_t)c->up.bytes);
		px_json_num(&j, "duration_ms", (now.tv_sec - c->started.tv_sec) * 1000L +
		    (now.tv_usec - c->started.tv_usec) / 1000L);
		if (r->why != NULL)
			px_json_str(&j, "why", r->why);
	}
	if (r->detail != NULL && r->detail[0])
		px_json_str(&j, "detail", r->detail);
	if (r->current) {
		px_json_num(&j, "generation", (int64_t)px_server_generation(srv));
		px_json_str(&j, "config", cf_config_hash(px_server_config(srv)));
	} else {
		px_json_num(&j, "generation", (int64_t)c->generation);
		px_json_str(&j, "config", cf_config_hash(c->cfg ? c->cfg : px_server_config(srv)));
	}
	/* A close line and a refusal's wait for the end of the loop pass
	 * (audit.h); an allow is in the file before anything it allows. */
	if (is_close || (r->decision != NULL && strcmp(r->decision, "deny") == 0))
		px_json_emit_later(&j, px_server_audit(srv), px_server_base(srv));
	else
		px_json_emit(&j, px_server_audit(srv));
}

/*
 * Feed the learn summary (learn.h): a request report mode relaxed, even
 * one that then failed on the network (the admin needs its item all the
 * same), and in every mode a refusal an allow_hosts item would fix, so
 * that `ctl learn` on an enforcing proxy offers what the hints offer.
 */
static void
learn(struct px_conn *c, int allow, enum cf_reason reason, const struct cf_rule *rule)
{
	struct px_learn *l = px_server_learn(c->srv);
	const char *addr = NULL;

	if (l == NULL || c->sess == NULL || c->req.host.kind == 0)
		return;
	if (allow) {
		if (c->req.dec.would == CF_R_ALLOWED)
			return;
		reason = c->req.dec.would;
		rule = c->req.dec.would_rule;
	} else if (reason == CF_R_PRIVATE_ADDRESS) {
		if (c->req.addr[0] == '\0')
			return;
		addr = c->req.addr;
		/* Relaxed by report mode, then refused at its address: the
		 * item it needs is the allowlist's, with "private". */
		if (rule == NULL && c->req.dec.would != CF_R_ALLOWED) {
			reason = c->req.dec.would;
			rule = c->req.dec.would_rule;
		} else if (rule == NULL) {
			return;
		}
	} else if ((reason == CF_R_DNS_FAILURE || reason == CF_R_CONNECT_FAILURE ||
	    reason == CF_R_TIMEOUT) && c->req.dec.would != CF_R_ALLOWED) {
		reason = c->req.dec.would;
		rule = c->req.dec.would_rule;
	}
	px_learn_add(l, c->sess, c->session, c->req.mode, &c->req.host, c->req.port, c->req.method, c->req.path, reason,
	    rule, addr);
}

/*
 * The one decision line of the current request, and its count in
 * /metrics: written once, when the request is allowed (its upstream is
 * connected, and for a checked tunnel its ClientHello passed) or refused.
 * A failure after the allow (the upstream times out or answers badly) is
 * no second decision: it is the close line's "why".
 */
void
px_record_decision(struct px_conn *c, int allow, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail, const char *sni)
{
	struct px_rec r = { .event = "decision", .decision = allow ? "allow" : "deny", .has_reason = 1,
		.reason = reason, .rule = rule, .detail = detail, .sni = sni,
		.secret = allow && c->req.mode == CF_MODE_TLS && c->tm != NULL ? c->tm->secret : NULL,
		.would = allow ? c->req.dec.would : CF_R_ALLOWED };

	if (c->req.decided)
		return;
	c->req.decided = 1;
	c->req.allow_pending = 0;
	if (r.would != CF_R_ALLOWED)
		px_notice_would(c);
	learn(c, allow, reason, rule);
	px_stats_decision(px_server_stats(c->srv), c->session, reason, rule);
	if (r.would != CF_R_ALLOWED)
		px_stats_would(px_server_stats(c->srv), c->session, r.would);
	if (allow && c->req.mode == CF_MODE_TLS && c->tm != NULL) {
		/* A request allowed inside a terminated tunnel: one line,
		 * its request line, which carries the decision
		 * (px_record_request_line()).  HTTP/2 writes it per stream
		 * when the stream ends (h2tunnel.c); HTTP/1.1 after the answer,
		 * or at close for one that never got an answer. */
		if (!c->tm->is_h2)
			c->tm->line_due = 1;
		return;
	}
	px_record(c, &r);
}

/* A tunnel held for the SNI check is allowed once its first flight
 * passes; closed or revoked before that, it was allowed as it stood. */
void
px_record_pending_allow(struct px_conn *c)
{
	if (c->req.allow_pending)
		px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, NULL, NULL);
}

void
px_record_request_line(struct px_conn *c, const struct px_reqline *l)
{
	struct px_server *srv = c->srv;
	struct px_json j;
	char h[CF_HOST_TEXT_MAX];

	/* Its own builder: a request line has its own counters (this
	 * request's bytes), not the connection's. */
	px_json_begin(&j, "request");
	px_json_str(&j, "session", c->session);
	px_json_str(&j, "peer", c->peer);
	px_json_str(&j, "method", l->method != NULL && l->method[0] ? l->method : NULL);
	cf_host_format(&c->req.host, h, sizeof(h));
	px_json_str(&j, "host", h);
	px_json_num(&j, "port", c->req.port);
	if (l->path != NULL && l->path[0])
		px_json_str(&j, "path", l->path);
	px_json_str(&j, "tls", "terminated");
	if (l->proto != NULL)
		px_json_str(&j, "proto", l->proto);
	if (l->secret != NULL && l->secret[0])
		px_json_str(&j, "secret", l->secret);
	if (l->status != 0)
		px_json_num(&j, "status", l->status);
	if (l->decision != NULL)
		px_json_str(&j, "decision", l->decision);
	if (l->decision != NULL && l->would != NULL) {
		px_json_str(&j, "would", "deny");
		px_json_str(&j, "reason", l->would);
	} else if (l->reason != NULL && l->reason[0])
		px_json_str(&j, "reason", l->reason);
	else if (l->decision != NULL)
		px_json_str(&j, "reason", cf_reason_code(CF_R_ALLOWED));
	/* An HTTP/1.1 request the decider allowed (C->req is this one's). */
	if (l->decision != NULL && c->req.decider != 0)
		px_json_str(&j, "decider", px_decider_result_word((enum px_decider_result)(c->req.decider - 1)));
	if (l->rule != NULL) {
		px_json_str(&j, "rule", l->rule);
		px_json_str(&j, "rule_at", l->rule_at);
	}
	px_json_num(&j, "bytes_up", (int64_t)l->bytes_up);
	px_json_num(&j, "bytes_down", (int64_t)l->bytes_down);
	if (l->config != NULL) {
		px_json_num(&j, "generation", (int64_t)l->generation);
		px_json_str(&j, "config", l->config);
	} else {
		px_json_num(&j, "generation", (int64_t)c->generation);
		px_json_str(&j, "config", cf_config_hash(c->cfg ? c->cfg : px_server_config(srv)));
	}
	/* Written after the answer: nothing waits on it. */
	px_json_emit_later(&j, px_server_audit(srv), px_server_base(srv));
}

void
px_record_reflected(struct px_conn *c, const struct px_reqline *l, const char *name,
    const char *where, size_t count)
{
	struct px_server *srv = c->srv;
	struct px_json j;
	char h[CF_HOST_TEXT_MAX];
	const char *method = l != NULL ? l->method : c->req.method;
	const char *path = l != NULL ? l->path : c->req.path;

	px_stats_secret(px_server_stats(srv), c->session, name, PX_SECRET_REFLECTED);
	px_json_begin(&j, "reflect");
	px_json_str(&j, "session", c->session);
	px_json_str(&j, "peer", c->peer);
	px_json_str(&j, "method", method != NULL && method[0] ? method : NULL);
	cf_host_format(&c->req.host, h, sizeof(h));
	px_json_str(&j, "host", h);
	px_json_num(&j, "port", c->req.port);
	if (path != NULL && path[0])
		px_json_str(&j, "path", path);
	px_json_str(&j, "tls", "terminated");
	if (l != NULL && l->proto != NULL)
		px_json_str(&j, "proto", l->proto);
	px_json_str(&j, "secret", name);
	px_json_str(&j, "reason", cf_reason_code(CF_R_SECRET_REFLECTED));
	px_json_str(&j, "where", where);
	px_json_num(&j, "count", (int64_t)count);
	if (l != NULL && l->config != NULL) {
		px_json_num(&j, "generation", (int64_t)l->generation);
		px_json_str(&j, "config", l->config);
	} else {
		px_json_num(&j, "generation", (int64_t)c->generation);
		px_json_str(&j, "config", cf_config_hash(c->cfg ? c->cfg : px_server_config(srv)));
	}
	px_json_emit_later(&j, px_server_audit(srv), px_server_base(srv));
}

void
px_record_reflected_due(struct px_conn *c)
{
	if (c->tm == NULL || c->tm->reflected == 0)
		return;
	px_record_reflected(c, NULL, c->tm->reflected_name, c->tm->reflected_where,
	    c->tm->reflected);
	c->tm->reflected = 0;
}

void
px_record_request(struct px_conn *c)
{
	const struct cf_rule *rule = c->req.dec.rule;
	char at[300];
	struct px_reqline l = {
		.method = c->req.method, .path = c->req.path, .secret = c->tm != NULL ? c->tm->secret : NULL,
		.status = c->req.resp_status,
		.bytes_up = c->cli.bytes - c->req.up0, .bytes_down = c->up.bytes - c->req.down0,
		.decision = "allow", .rule = rule != NULL ? rule->text : NULL, .rule_at = at,
		.would = c->req.dec.would != CF_R_ALLOWED ? cf_reason_code(c->req.dec.would) : NULL,
	};

	if (c->tm != NULL)
		c->tm->line_due = 0;
	if (rule != NULL)
		cf_rule_at(rule, at, sizeof(at));
	px_record_request_line(c, &l);
	px_record_reflected_due(c);
}
