/*
 * proxy/tell.c: what a refusal (or, in report mode, a request that would
 * be refused) says to a person at a terminal: the words and the one log
 * line, told once per host:port, reason and fix (tell.h).  Below the
 * connection code (conn.c answers refusals with it, record.c tells the
 * relaxed ones, term2.c refused streams): it reads a connection, never
 * changes one.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "base/text.h"
#include "conf/config.h"
#include "conf/decide.h"
#include "conf/host.h"
#include "proxy/conn.h"
#include "proxy/log.h"
#include "proxy/server.h"
#include "proxy/tally.h"
#include "proxy/tell.h"

/*
 * What a refusal of C's current request says to people: SUGG, an admin's
 * way to allow it (cf_suggest(), "" when there is none), WHAT, the request
 * ("CONNECT host:port", "GET host:port path /p"), and H, its host as text.
 */
void
px_tell_words(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule, char *sugg,
    size_t suggsz, char *what, size_t whatsz, char *h, size_t hsz)
{
	struct bs_str w;

	sugg[0] = '\0';
	h[0] = '\0';
	/* Unanswered in mode = ask: the allowlist's refusal (still in
	 * C->dec) says what would allow it for good. */
	if (reason == CF_R_ASK_TIMEOUT && !c->dec.allow) {
		reason = c->dec.reason;
		rule = c->dec.rule;
	}
	if (c->sess != NULL && c->host.kind != 0 &&
	    (reason == CF_R_HOST_NOT_ALLOWED || reason == CF_R_PORT_NOT_ALLOWED ||
	    reason == CF_R_PATH_NOT_ALLOWED || reason == CF_R_METHOD_NOT_ALLOWED ||
	    reason == CF_R_BUDGET_EXCEEDED ||
	    reason == CF_R_PRIVATE_ADDRESS || reason == CF_R_DENIED_BY_RULE)) {
		struct cf_decision d;
		memset(&d, 0, sizeof(d));
		d.reason = reason;
		d.rule = rule;
		cf_suggest(c->sess, c->mode, &c->host, c->port, c->path, strlen(c->path), &d,
		    sugg, suggsz);
	}
	/* Appended, not printf()'d: this runs on every refusal. */
	bs_str_init(&w, what, whatsz);
	bs_str_add(&w, c->method[0] ? c->method : "request");
	if (c->host.kind != 0) {
		cf_host_format(&c->host, h, hsz);
		bs_str_addn(&w, " ", 1);
		bs_str_add(&w, h);
		bs_str_addn(&w, ":", 1);
		bs_str_uint(&w, c->port);
		if (c->path[0]) {
			bs_str_add(&w, " path ");
			bs_str_add(&w, c->path);
		}
	}
}

/*
 * For a person at a terminal (run): the refusal as one log line with the
 * pattern to pass to --allow (cf_suggest() words it "pass --allow
 * 'PATTERN'" in run), told once per host:port, reason and pattern (a
 * client that retries would fill the terminal); the summary at the end
 * counts the repeats (tally.h).
 */
void
px_tell_human(const struct px_conn *c, int would, enum cf_reason reason, const char *detail,
    const char *sugg, const char *what, const char *h)
{
	static const char lead[] = "pass --allow '";
	char patbuf[CF_HOST_TEXT_MAX + 600];
	const char *pat = NULL, *p;
	char where[CF_HOST_TEXT_MAX + 8];

	/* The pattern ends the suggestion, after its own words for a private
	 * address ("if this private address is intended, pass --allow"). */
	if ((p = strstr(sugg, lead)) != NULL) {
		size_t k;

		p += sizeof(lead) - 1;
		k = strcspn(p, "'");
		if (p[k] == '\'' && p[k + 1] == '\0' && k < sizeof(patbuf)) {
			memcpy(patbuf, p, k);
			patbuf[k] = '\0';
			/* Said as --allow '...' and in the summary: one rule
			 * for one host, or not said at all. */
			if (cf_suggest_check(patbuf, c->mode, NULL, 0, NULL, 0, -1))
				pat = patbuf;
		}
	}
	if (c->host.kind != 0)
		snprintf(where, sizeof(where), "%s:%u", h, c->port);
	else
		snprintf(where, sizeof(where), "%s", what);
	if (px_tally_add(would ? px_server_would_tally(c->srv) : px_server_tally(c->srv), where,
	    cf_reason_code(reason), pat) == 1) {
		const char *verb = would ? "report mode, allowed; would refuse" : "refused";

		if (pat != NULL && strncmp(sugg, lead, sizeof(lead) - 1) == 0)
			log_notice("%s %s: %s (%s); to allow it: --allow '%s'", verb, what,
			    cf_reason_code(reason), detail ? detail : "", pat);
		else
			log_notice("%s %s: %s (%s)%s%s", verb, what, cf_reason_code(reason),
			    detail ? detail : "", sugg[0] ? "; " : "", sugg);
	}
}

void
px_tell_would(const struct px_conn *c)
{
	static const char lead[] = "report mode: would refuse: ";
	char sugg[512], h[CF_HOST_TEXT_MAX], what[600];
	const char *detail = c->dec.detail;

	if (!px_server_human(c->srv) || c->dec.would == CF_R_ALLOWED)
		return;
	/* The line says "would refuse" itself (cf_decide()'s words). */
	if (strncmp(detail, lead, sizeof(lead) - 1) == 0)
		detail += sizeof(lead) - 1;
	px_tell_words(c, c->dec.would, c->dec.would_rule, sugg, sizeof(sugg), what, sizeof(what),
	    h, sizeof(h));
	px_tell_human(c, 1, c->dec.would, detail, sugg, what, h);
}

void
px_tell_refusal(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail)
{
	char sugg[512], h[CF_HOST_TEXT_MAX], what[600];

	if (!px_server_human(c->srv))
		return;
	px_tell_words(c, reason, rule, sugg, sizeof(sugg), what, sizeof(what), h, sizeof(h));
	px_tell_human(c, 0, reason, detail, sugg, what, h);
}

