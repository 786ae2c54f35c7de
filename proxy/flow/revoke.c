/*
 * proxy/flow/revoke.c: revoke = yes, open tunnels judged again after a reload
 * (the pass over every open tunnel, a tunnel connected meanwhile, a
 * WebSocket whose 101 came after it), by the snapshot in force.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conf/config.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/conns.h"
#include "proxy/policy/grants.h"
#include "proxy/flow/revoke.h"

int
px_revoke_tunnel(struct px_conn *c, int answer)
{
	struct px_server *srv = c->srv;
	const struct cf_session *s;
	struct cf_decision d, ad;
	struct px_rec r = { .event = "revoke", .has_reason = 1, .current = 1 };

	s = cf_config_find_session(px_server_config(srv), c->session);
	if (s != NULL) {
		/* A terminated tunnel is judged as its CONNECT was (a path
		 * rule admits it); a WebSocket inside one, with its path. */
		enum cf_mode m = c->req.mode == CF_MODE_CONNECT && c->term ? CF_MODE_TLS : c->req.mode;
		cf_decide(s, m, &c->req.host, c->req.port, c->req.mode != CF_MODE_CONNECT ? c->req.path : NULL,
		    c->req.mode != CF_MODE_CONNECT ? strlen(c->req.path) : 0,
		    c->req.mode != CF_MODE_CONNECT ? c->req.method : NULL, &d);
		if (!d.allow && px_allowlist_refusal(d.reason) && c->req.granted) {
			/* An admin allowed this tunnel (a grant, or an
			 * answer): the allowlist, which never did, cannot
			 * take it back; a deny grant made since can. */
			const struct px_grant *g;
			char h[CF_HOST_TEXT_MAX];

			px_conn_host_text(c, h, sizeof(h));
			g = px_grants_find(px_server_grants(srv), c->session, h, c->req.port, time(NULL));
			if (g == NULL || g->kind == PX_GRANT_ALLOW)
				return 0;
			d.reason = CF_R_DENIED_BY_ADMIN;
			snprintf(d.detail, sizeof(d.detail), "denied by a runtime grant (uid %ld)", g->uid);
			d.rule = NULL;
		}
		if (d.allow) {
			cf_decide_addr(px_server_config(srv), s, &d, &c->up_peer.sa, &ad);
			if (ad.allow)
				return 0;
			d = ad;
		}
	} else {
		memset(&d, 0, sizeof(d));
		d.reason = CF_R_SESSION_REMOVED;
		snprintf(d.detail, sizeof(d.detail), "session %s was removed", c->session);
	}
	px_record_pending_allow(c);
	r.reason = d.reason;
	r.detail = d.detail;
	px_record(c, &r);
	if (answer)
		px_conn_refuse_ex(c, 403, d.reason, d.rule, d.detail, 1);
	else
		px_conn_free(c, "revoked by reload");
	return 1;
}

int
px_revoke_late(struct px_conn *c)
{
	if (c->generation == px_server_generation(c->srv) ||
	    !cf_config_proxy(px_server_config(c->srv))->revoke)
		return 0;
	return px_revoke_tunnel(c, 1);
}

int
px_conn_end_session(struct px_server *srv, void *arg)
{
	const char *name = arg;
	struct px_conn *c, *next;
	char detail[120];

	snprintf(detail, sizeof(detail), "session %s was removed", name);
	for (c = px_conns_first(srv); c != NULL; c = next) {
		struct px_rec r = { .event = "revoke", .has_reason = 1, .current = 1,
		    .reason = CF_R_SESSION_REMOVED, .detail = detail };

		next = px_conns_next(c);
		if (strcmp(c->session, name) != 0)
			continue;
		if (c->phase != NULL && c->phase->tunnel) {
			px_record_pending_allow(c);
			px_record(c, &r);
		}
		px_conn_free(c, "session_removed");
	}
	return 0;
}

void
px_conn_revoke(struct px_server *srv)
{
	struct px_conn *c, *next;

	for (c = px_conns_first(srv); c != NULL; c = next) {
		next = px_conns_next(c);
		if (c->phase == NULL || !c->phase->tunnel)
			continue;
		(void)px_revoke_tunnel(c, 0);
	}
}
