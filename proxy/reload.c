/*
 * proxy/reload.c: take a new config while serving (see reload.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/config.h"
#include "conf/grantfile.h"
#include "proxy/policy/budget.h"
#include "proxy/flow/mint.h"
#include "proxy/flow/conns.h"
#include "proxy/policy/grants.h"
#include "proxy/policy/rtsess.h"
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

/* The audit log's chain keys, read at start only (proxy/core/audit.h). */
static int
audit_changed(const struct cf_proxy_settings *o, const struct cf_proxy_settings *n)
{
	if ((o->audit_signing_key == NULL) != (n->audit_signing_key == NULL) ||
	    (n->audit_signing_key != NULL && strcmp(o->audit_signing_key, n->audit_signing_key) != 0))
		return 1;
	return o->audit_checkpoint_ms != n->audit_checkpoint_ms || o->audit_format != n->audit_format;
}

/* Append one error to D, formatted. */
static void __attribute__((format(printf, 2, 3)))
diag_add_error(struct cf_diag *d, const char *fmt, ...)
{
	char **nv;
	va_list ap;

	if (d == NULL || (nv = realloc(d->errors, (d->nerrors + 1) * sizeof(*nv))) == NULL)
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
		const struct cf_extra *ex = NULL;
		size_t nex = 0;

		/* The file, then every runtime session: a reload keeps them. */
		if (px_server_rtsess(srv) != NULL)
			ex = px_rtsess_list(px_server_rtsess(srv), &nex);
		nc = cf_config_load_extra(path, px_server_overrides(srv), ex, nex, diag);
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
		oa = &cf_config_proxy(cur)->metrics;
		na = &cf_config_proxy(nc)->metrics;
		if ((oa->kind != na->kind) || (oa->kind != 0 && strcmp(oa->text, na->text) != 0))
			log_warnx("reload (%s): a changed metrics takes effect at the next restart",
			    trigger);
		if (cf_config_proxy(cur)->workers != cf_config_proxy(nc)->workers)
			log_warnx("reload (%s): a changed workers takes effect at the next restart", trigger);
		if (audit_changed(cf_config_proxy(cur), cf_config_proxy(nc)))
			log_warnx("reload (%s): a changed audit_signing_key, audit_checkpoint or audit_format "
			    "takes effect at the next restart", trigger);
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

/* On the loop: the reload that takes a changed set of runtime sessions. */
static int
session_reload(struct px_server *srv, struct cf_diag *diag, const char *what, const char *name)
{
	char trigger[120];

	snprintf(trigger, sizeof(trigger), "session %s %s", what, name);
	return px_reload(srv, diag, trigger, NULL);
}

int
px_reload_session(struct px_server *srv, const char *name, const char *text, size_t len,
    struct cf_diag *diag)
{
	struct px_rtsess *rs = px_server_rtsess(srv);
	const struct cf_session *s = cf_config_find_session(px_server_config(srv), name);
	const char *state_dir;
	char why[600];
	int i, rc;

	if (rs == NULL || px_server_load_once(srv)) {
		diag_add_error(diag, "this proxy reads its config once: it makes no session at run time");
		return -EPERM;
	}
	i = px_rtsess_find(rs, name);
	if (text == NULL && i < 0) {
		if (s != NULL) {
			diag_add_error(diag, "session %s is in %s (line %d): edit the file and reload to "
			    "remove it", name, s->file != NULL ? s->file : cf_config_path(px_server_config(srv)),
			    s->line);
			return -EPERM;
		}
		diag_add_error(diag, "no runtime session %s", name);
		return -ENOENT;
	}
	if (text != NULL && i >= 0) {
		diag_add_error(diag, "session %s exists at run time (remove it first)", name);
		return -EEXIST;
	}
	if (text != NULL && (s != NULL || strcmp(name, "default") == 0)) {
		diag_add_error(diag, "session %s is a session of the config file %s: a runtime session "
		    "takes another name", name, cf_config_path(px_server_config(srv)));
		return -EPERM;
	}
	if (text == NULL) {
		const struct cf_extra *ex;
		size_t n;
		char *keep_name, *keep_text;
		size_t keep_len;

		ex = px_rtsess_list(rs, &n);
		keep_name = strdup(ex[i].name);
		keep_text = malloc(ex[i].len + 1);
		keep_len = ex[i].len;
		if (keep_name == NULL || keep_text == NULL) {
			free(keep_name);
			free(keep_text);
			diag_add_error(diag, "out of memory");
			return -ENOMEM;
		}
		memcpy(keep_text, ex[i].text, keep_len);
		px_rtsess_remove(rs, (size_t)i);
		if (session_reload(srv, diag, "remove", name) != 0) {
			/* The old set with the old snapshot. */
			if (px_rtsess_insert(rs, (size_t)i, keep_name, keep_text, keep_len) != 0)
				log_warnx("session %s: out of memory putting it back", name);
			free(keep_name);
			free(keep_text);
			return -EINVAL;
		}
		free(keep_name);
		free(keep_text);
		/* Its listeners went with the reload; what they had open goes
		 * now, on every worker, each close audited. */
		(void)px_workers_each(srv, px_conn_end_session, (void *)name);
		/* Its minted GitHub tokens end with it. */
		px_mint_session_ended(srv, name);
		state_dir = cf_config_proxy(px_server_config(srv))->state_dir;
		if (state_dir != NULL && px_rtsess_forget(state_dir, name, why, sizeof(why)) != 0)
			log_warnx("session %s: %s; it would come back at the next start", name, why);
		log_info("session %s removed", name);
		return 0;
	}
	if ((rc = px_rtsess_insert(rs, SIZE_MAX, name, text, len)) != 0) {
		diag_add_error(diag, "out of memory");
		return rc;
	}
	if (session_reload(srv, diag, "add", name) != 0) {
		px_rtsess_remove(rs, (size_t)px_rtsess_find(rs, name));
		return -EINVAL;
	}
	state_dir = cf_config_proxy(px_server_config(srv))->state_dir;
	if (state_dir != NULL && px_rtsess_save(state_dir, name, text, len, why, sizeof(why)) != 0) {
		/* Kept, or not made: never a session that vanishes at the
		 * next start without a word. */
		diag_add_error(diag, "session %s: %s", name, why);
		px_rtsess_remove(rs, (size_t)px_rtsess_find(rs, name));
		if (session_reload(srv, NULL, "undo", name) != 0)
			log_warnx("session %s: cannot be taken back: it serves until the next start",
			    name);
		return -EIO;
	}
	log_info("session %s made at run time%s", name, state_dir != NULL ? " (kept in state_dir)" : "");
	return 0;
}

int
px_reload_session_cb(void *arg, const char *name, const char *text, size_t len,
    struct cf_diag *diag)
{
	return px_reload_session(arg, name, text, len, diag);
}
