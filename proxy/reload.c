/*
 * proxy/reload.c: take a new config while serving (see reload.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/config.h"
#include "conf/grantfile.h"
#include "proxy/policy/budget.h"
#include "proxy/flow/conns.h"
#include "proxy/policy/grants.h"
#include "proxy/core/log.h"
#include "proxy/reload.h"
#include "proxy/flow/revoke.h"
#include "proxy/core/server.h"
#include "proxy/tls/registry.h"
#include "proxy/admin/stats.h"
#include "proxy/core/worker.h"

/*
 * Bring the listeners in line with NC: open what is new first (so that a
 * listener that cannot be bound refuses the whole reload), then close what
 * NC no longer has.  Returns 0, or a negative errno (each reason in DIAG)
 * with the new ones closed again.
 */
static int
sync_listeners(struct px_server *srv, const struct cf_config *nc, struct cf_diag *diag)
{
	struct px_listener *l, *next;
	struct px_listener *first_new = NULL;
	size_t i, j;
	int bad = 0, err;

	/* The last listener bound before this reload: the undo below closes
	 * those after it. */
	for (l = px_listeners_first(srv); l != NULL; l = px_listener_next(l))
		first_new = l;
	/*
	 * First, whether every socket file can have the owner, group and mode
	 * NC gives it: after the privilege drop a new socket for another uid,
	 * or a changed one the proxy does not own, needs a restart.  Nothing
	 * is bound or changed unless all can.
	 */
	for (i = 0; i < cf_config_nsessions(nc); i++) {
		const struct cf_session *s = cf_config_session(nc, i);
		for (j = 0; j < s->nlisten; j++) {
			struct px_listener *cur = NULL;
			char why[256];
			for (l = px_listeners_first(srv); l != NULL; l = px_listener_next(l))
				if (px_listener_is(l, &s->listen[j], s->name))
					cur = l;
			if (px_listener_perms_check(cur, &s->listen[j], why, sizeof(why)) == 0)
				continue;
			bad = 1;
			if (diag != NULL) {
				char **nv = realloc(diag->errors, (diag->nerrors + 1) * sizeof(*nv));
				if (nv != NULL) {
					diag->errors = nv;
					/* It was bound as root at start; a restart
					 * can do it again. */
					if (asprintf(&nv[diag->nerrors], "%s:%d: cannot listen on %s: %s; "
					    "restart the proxy to apply it", s->listen[j].file,
					    s->listen[j].line, s->listen[j].text, why) >= 0)
						diag->nerrors++;
				}
			}
		}
	}
	if (bad)
		return -EPERM;

	for (i = 0; i < cf_config_nsessions(nc); i++) {
		const struct cf_session *s = cf_config_session(nc, i);
		for (j = 0; j < s->nlisten; j++) {
			int have = 0;
			for (l = px_listeners_first(srv); l != NULL; l = px_listener_next(l))
				have |= px_listener_is(l, &s->listen[j], s->name);
			if (have)
				continue;
			if ((err = px_listener_open(srv, &s->listen[j], s->name, px_conn_accept)) < 0) {
				int e = -err;
				if (diag != NULL) {
					char **nv = realloc(diag->errors, (diag->nerrors + 1) * sizeof(*nv));
					if (nv != NULL) {
						diag->errors = nv;
						if (asprintf(&nv[diag->nerrors], "%s:%d: cannot listen on %s: %s%s",
						    s->listen[j].file, s->listen[j].line, s->listen[j].text,
						    strerror(e), e == EACCES || e == EPERM ?
						    " (the proxy's user cannot make a directory or file there)" :
						    "") >= 0)
							diag->nerrors++;
					}
				}
				/* Undo: close the listeners this reload opened. */
				l = first_new ? px_listener_next(first_new) : px_listeners_first(srv);
				for (; l != NULL; l = next) {
					next = px_listener_next(l);
					px_listener_close(srv, l);
				}
				return err;
			}
		}
	}
	for (l = px_listeners_first(srv); l != NULL; l = next) {
		int keep = 0;
		next = px_listener_next(l);
		for (i = 0; i < cf_config_nsessions(nc) && !keep; i++) {
			const struct cf_session *s = cf_config_session(nc, i);
			for (j = 0; j < s->nlisten && !keep; j++)
				keep = px_listener_is(l, &s->listen[j], s->name);
		}
		if (!keep) {
			log_info("reload: no longer listening on %s (session %s)", px_listener_text(l), px_listener_session(l));
			px_listener_close(srv, l);
		}
	}
	/* The listeners kept: the owner, group and mode NC gives them (the
	 * check above said it can be done). */
	for (l = px_listeners_first(srv); l != NULL; l = px_listener_next(l)) {
		for (i = 0; i < cf_config_nsessions(nc); i++) {
			const struct cf_session *s = cf_config_session(nc, i);
			for (j = 0; j < s->nlisten; j++)
				if (px_listener_is(l, &s->listen[j], s->name))
					(void)px_listener_set_perms(l, &s->listen[j]);
		}
	}
	return 0;
}

/*
 * On each worker's loop, after the first took NC (px_workers_each()): the
 * others take it too, at the first's generation, so that every audit line
 * says the generation that decided it; then revoke = yes over the
 * worker's own tunnels, and listeners bound by this reload must not accept
 * while the proxy is full.
 */
static int
adopt(struct px_server *srv, void *arg)
{
	struct cf_config *nc = arg;
	struct px_server *first = px_workers_server(px_server_workers(srv), 0);

	if (srv != first)
		px_server_adopt_config(srv, cf_config_ref(nc), px_server_generation(first));
	if (cf_config_proxy(nc)->revoke)
		px_conn_revoke(srv);
	if (px_listeners_paused(srv))
		px_listeners_pause(srv, 1);
	return 0;
}

/* Append one error to D, formatted. */
static void __attribute__((format(printf, 2, 3)))
diag_add_error(struct cf_diag *d, const char *fmt, ...)
{
	char **nv = realloc(d->errors, (d->nerrors + 1) * sizeof(*nv));
	va_list ap;

	if (nv == NULL)
		return;
	d->errors = nv;
	va_start(ap, fmt);
	if (vasprintf(&nv[d->nerrors], fmt, ap) >= 0)
		d->nerrors++;
	va_end(ap);
}

int
px_reload_has_ask(const struct cf_config *cfg)
{
	size_t i;

	for (i = 0; i < cf_config_nsessions(cfg); i++)
		if (cf_config_session(cfg, i)->ask)
			return 1;
	return 0;
}

int
px_reload(struct px_server *srv, struct cf_diag *diag_out, const char *trigger,
    const struct px_reload_probe *probe)
{
	/* cppcheck-suppress uninitvar ; local is zeroed below, before any use */
	struct cf_diag local, *diag = diag_out ? diag_out : &local;
	const struct cf_config *cur = px_server_config(srv);
	const char *path = px_server_config_path(srv);
	struct cf_config *nc;
	struct px_tlsreg_next *tls_next = NULL;
	char *errors = NULL;
	struct cf_grant_entry *gfile = NULL;
	size_t i, len = 0, ngfile = 0;
	int rc = -1;

	memset(&local, 0, sizeof(local));
	if (px_server_load_once(srv)) {
		/* postern-sidecar run: the only one who could have changed the
		 * file since the start is the command it seals. */
		char **nv = realloc(diag->errors, (diag->nerrors + 1) * sizeof(*nv));
		if (nv != NULL) {
			diag->errors = nv;
			if (asprintf(&nv[diag->nerrors], "%s: this proxy reads its config once, at "
			    "start, and never reloads it", path ? path :
			    "<built-in>") >= 0)
				diag->nerrors++;
		}
		nc = NULL;
	} else {
		nc = cf_config_load(path, px_server_overrides(srv), diag);
	}
	if (probe != NULL && probe->written(probe->arg)) {
		/* Read while a writer was at it: what was read, valid or not,
		 * may be a prefix of the file the writer is making (one that
		 * lacks a deny_hosts line), so it is neither taken nor refused:
		 * the writer's close asks again. */
		log_debug("%s was written to while it was read: waiting for the write to end",
		    path ? path : "<built-in>");
		cf_config_free(nc);
		cf_diag_free(diag);
		rc = 1;
		goto out;
	}
	/* The sessions' CAs for NC are made (or kept) before the listeners
	 * move, and taken only with NC: a reload refused for any reason
	 * leaves every CA that sandboxes trust where it was. */
	if (nc != NULL) {
		char why[400];

		tls_next = px_tlsreg_prepare(px_server_tls(srv), nc, NULL, why, sizeof(why));
		if (tls_next == NULL) {
			diag_add_error(diag, "%s: TLS termination: %s", path ? path : "<built-in>", why);
			cf_config_free(nc);
			nc = NULL;
		}
	}
	/* grants_file is validated and loaded like the config: a bad one
	 * refuses the reload, and the grants read are taken only with NC. */
	if (nc != NULL && cf_config_proxy(nc)->grants_file != NULL &&
	    cf_grants_load(cf_config_proxy(nc)->grants_file, nc, diag, &gfile, &ngfile) != 0) {
		if (diag->nerrors == 0)
			diag_add_error(diag, "%s: out of memory", cf_config_proxy(nc)->grants_file);
		cf_config_free(nc);
		nc = NULL;
	}
	/* A question's waiters would sit on several loops: mode = ask keeps
	 * to one worker in this version (the start refuses it too). */
	if (nc != NULL && px_workers_n(px_server_workers(srv)) > 1 && px_reload_has_ask(nc)) {
		diag_add_error(diag, "%s: mode = ask needs workers = 1 (this proxy runs %u workers); "
		    "restart it with workers = 1 to ask", path ? path : "<built-in>",
		    px_workers_n(px_server_workers(srv)));
		cf_config_free(nc);
		nc = NULL;
	}
	if (nc != NULL && sync_listeners(srv, nc, diag) < 0) {
		cf_config_free(nc);
		nc = NULL;
	}
	if (nc == NULL && probe != NULL && probe->refused != NULL && probe->refused(probe->arg)) {
		log_debug("%s refused: reading it again before saying so", path ? path : "<built-in>");
		cf_diag_free(diag);
		rc = 1;
		goto out;
	}
	if (nc == NULL) {
		for (i = 0; i < diag->nerrors; i++) {
			log_warnx("reload (%s) refused: %s", trigger, diag->errors[i]);
			len += strlen(diag->errors[i]) + 1;
		}
		errors = calloc(1, len + 1);
		for (i = 0; errors != NULL && i < diag->nerrors; i++) {
			strcat(errors, diag->errors[i]);
			strcat(errors, "\n");
		}
		log_warnx("reload (%s) refused: generation %lu stays in force", trigger,
		    px_server_generation(srv));
		px_server_reloaded(srv, 0, errors);
		px_stats_reload(px_server_stats(srv), 0);
		goto out;
	}
	{
		const struct cf_listen *oa = &cf_config_proxy(cur)->admin;
		const struct cf_listen *na = &cf_config_proxy(nc)->admin;
		if ((oa->kind != na->kind) || (oa->kind != 0 && strcmp(oa->text, na->text) != 0) ||
		    cf_config_proxy(cur)->has_admin_group != cf_config_proxy(nc)->has_admin_group ||
		    cf_config_proxy(cur)->admin_group != cf_config_proxy(nc)->admin_group)
			log_warnx("reload (%s): a changed admin or admin_group takes effect at the next restart",
			    trigger);
		if (cf_config_proxy(cur)->workers != cf_config_proxy(nc)->workers)
			log_warnx("reload (%s): a changed workers takes effect at the next restart", trigger);
		if ((cf_config_proxy(cur)->socket_dir == NULL) != (cf_config_proxy(nc)->socket_dir == NULL) ||
		    (cf_config_proxy(nc)->socket_dir != NULL &&
		    strcmp(cf_config_proxy(cur)->socket_dir, cf_config_proxy(nc)->socket_dir) != 0))
			log_warnx("reload (%s): a changed socket_dir takes effect at the next restart",
			    trigger);
	}
	px_tlsreg_commit(px_server_tls(srv), tls_next);
	tls_next = NULL;
	px_server_set_config(srv, nc);
	/* Budgets survive the reload: a kept rule keeps its use, under
	 * its new limits. */
	px_budgets_reload(px_server_budgets(srv), nc);
	/* Without grants_file now, the grants once read from one go. */
	if (px_grants_set_file(px_server_grants(srv), gfile, ngfile, time(NULL)) != 0)
		log_warnx("reload (%s): out of memory taking the grants of grants_file", trigger);
	px_server_reloaded(srv, 1, NULL);
	px_stats_reload(px_server_stats(srv), 1);
	log_info("reloaded %s (%s): generation %lu (sha256 %s)", cf_config_path(nc), trigger,
	    px_server_generation(srv), cf_config_hash(nc));
	/* Every worker takes NC on its own loop, then revokes over its own
	 * tunnels. */
	(void)px_workers_each(srv, adopt, nc);
	px_conns_limit_check(srv);
	rc = 0;
out:
	free(gfile);
	px_tlsreg_abort(px_server_tls(srv), tls_next);
	cf_diag_free(&local);
	return rc;
}

int
px_reload_cb(void *arg, struct cf_diag *diag, const char *trigger,
    const struct px_reload_probe *probe)
{
	return px_reload(arg, diag, trigger, probe);
}
