/*
 * proxy/engine.c: load, bind, drop privileges, serve (see engine.h).
 *
 * The engine builds the one struct px_server and wires the modules to each
 * other: it hands the listeners px_conn_accept(), and the admin socket and
 * the watch px_reload_cb(), so that none of them names another.  Besides
 * conn.c, it is the one module that sets the server's fields: when it
 * builds the server, and when a signal stops it.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/super.h"
#include "conf/config.h"
#include "proxy/admin.h"
#include "proxy/audit.h"
#include "proxy/dns.h"
#include "proxy/engine.h"
#include "proxy/log.h"
#include "proxy/prio.h"
#include "proxy/reload.h"
#include "proxy/server.h"
#include "proxy/sni.h"
#include "proxy/splice.h"
#include "proxy/stats.h"
#include "proxy/tally.h"
#include "proxy/watch.h"

static void
stop_cb(evutil_socket_t sig, short what, void *arg)
{
	struct px_server *srv = arg;

	(void)what;
	log_info("signal %d: stopping", (int)sig);
	srv->stopping = 1;
	event_base_loopexit(srv->base, NULL);
}

static void
usr1_cb(evutil_socket_t sig, short what, void *arg)
{
	struct px_server *srv = arg;
	int rc;

	(void)sig;
	(void)what;
	rc = px_audit_reopen(px_server_audit(srv));
	if (rc != 0)
		log_warnx("cannot reopen the audit log %s: %s; still writing to the file it had open "
		    "(rotate with logrotate's create, which keeps the proxy's uid as owner)",
		    cf_config_proxy(px_server_config(srv))->log, strerror(-rc));
	else
		log_info("audit log reopened");
}

/*
 * The proxy has had no connection for a moment (conn.c arms this): give
 * freed heap back to the system, so that RSS after a burst of thousands of
 * connections returns to its start instead of staying at the peak, which
 * glibc would keep.
 */
static void
idle_trim_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_server *srv = arg;

	(void)fd;
	(void)what;
	if (px_server_nconns(srv) == 0)
		malloc_trim(0);
}

static void
hup_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	px_reload(arg, NULL, "SIGHUP");
}

/* The loop, with the priorities of prio.h; NULL on failure. */
static struct event_base *
loop_new(void)
{
	struct event_base *base = event_base_new();

	if (base != NULL && event_base_priority_init(base, PX_PRI_N) != 0) {
		event_base_free(base);
		base = NULL;
	}
	return base;
}

/* The overrides OPTS stand for, the same at start and at every reload. */
static void
engine_overrides(const struct px_engine_opts *opts, struct cf_overrides *ov)
{
	memset(ov, 0, sizeof(*ov));
	ov->extra_allow = opts->extra_allow;
	ov->n_extra_allow = opts->n_extra_allow;
	ov->extra_listen = opts->extra_listen;
	ov->n_extra_listen = opts->n_extra_listen;
	ov->replace_listen = opts->replace_listen;
	ov->has_user = opts->has_user;
	ov->user = opts->user;
	ov->default_name = opts->session_name;
	ov->serve_session = opts->serve_session;
	ov->strict_modes = opts->strict_modes;
	ov->cli_hints = opts->human;
	/* At start the proxy may still be root, and the user it is about to
	 * become is the one the file names; once it serves, that is its own
	 * euid, and a new file's user = line must not vouch for the file. */
	ov->trust_file_user = 1;
}

static void
engine_log_init(const struct px_engine_opts *opts)
{
	log_init(opts->human ? "postern" : "postern-proxy", getenv("POSTERN_DEBUG") != NULL);
	log_quiet(opts->human);
}

/* Load the start-up snapshot OPTS describe, telling its warnings and
 * errors; NULL when it is refused. */
static struct cf_config *
engine_load(const struct px_engine_opts *opts, const struct cf_overrides *ov)
{
	struct cf_config *cfg;
	struct cf_diag diag;
	size_t k;

	memset(&diag, 0, sizeof(diag));
	cfg = cf_config_load(opts->config_path, ov, &diag);
	for (k = 0; k < diag.nwarnings; k++)
		log_warnx("%s", diag.warnings[k]);
	if (cfg == NULL) {
		for (k = 0; k < diag.nerrors; k++)
			fprintf(stderr, "%s\n", diag.errors[k]);
		fprintf(stderr, "postern-proxy: config refused, not starting\n");
	}
	cf_diag_free(&diag);
	return cfg;
}

struct cf_config *
px_engine_load(const struct px_engine_opts *opts)
{
	struct cf_overrides ov;

	engine_log_init(opts);
	engine_overrides(opts, &ov);
	return engine_load(opts, &ov);
}

int
px_engine_main(const struct px_engine_opts *opts)
{
	struct px_server srv;
	struct cf_overrides ov;
	struct px_dns_opts dopts;
	struct event *sigs[5];
	char errbuf[256];
	int rc = 1, i;

	engine_log_init(opts);
	log_starting(1);
	memset(&srv, 0, sizeof(srv));
	memset(sigs, 0, sizeof(sigs));
	TAILQ_INIT(&srv.listeners);
	TAILQ_INIT(&srv.conns);
	engine_overrides(opts, &ov);
	srv.ov = &ov;
	srv.human = opts->human;
	/* Without it (out of memory) every refusal is told, none summed. */
	if (opts->human)
		srv.tally = px_tally_new();
	/* A snapshot given is all there is: the file is not read again. */
	srv.load_once = opts->load_once || opts->config != NULL;
	srv.config_path = opts->config_path;

	srv.cfg = opts->config != NULL ? cf_config_ref(opts->config) : engine_load(opts, &ov);
	if (srv.cfg == NULL) {
		px_tally_free(srv.tally);
		return 2;
	}
	ov.trust_file_user = 0;
	srv.generation = 1;
	srv.started_at = time(NULL);
	srv.last_reload_ok = 1;
	srv.metrics = px_stats_new();
	if (srv.metrics == NULL) {
		log_err("out of memory");
		goto out;
	}

	signal(SIGPIPE, SIG_IGN);
	srv.base = loop_new();
	if (srv.base == NULL || (srv.idle_trim = evtimer_new(srv.base, idle_trim_cb, &srv)) == NULL) {
		log_errx("cannot create the event loop");
		goto out;
	}
	srv.audit = px_audit_open(opts->human && strcmp(cf_config_proxy(srv.cfg)->log, "stderr") == 0 ?
	    "/dev/null" : cf_config_proxy(srv.cfg)->log);
	if (srv.audit == NULL) {
		log_err("cannot open the audit log %s", cf_config_proxy(srv.cfg)->log);
		goto out;
	}
	px_dns_opts_init(&dopts);
	srv.dns = px_dns_new(srv.base, cf_config_proxy(srv.cfg)->dns_servers, &dopts, errbuf, sizeof(errbuf));
	if (srv.dns == NULL) {
		log_errx("DNS: %s", errbuf);
		goto out;
	}
	/* The listeners hand their clients to the connection code; the
	 * reload module gives the same to those a reload binds. */
	if (px_listeners_open(&srv, srv.cfg, px_conn_accept) != 0)
		goto out;
	/* The admin socket is bound here, as root, like the listeners; a
	 * config that asks for one and cannot have it does not start. */
	if (cf_config_proxy(srv.cfg)->admin.kind != 0) {
		srv.admin = px_admin_new(&srv, px_reload_cb, &srv);
		if (srv.admin == NULL)
			goto out;
	}
	/* Watching is a convenience (SIGHUP and POST /reload still work), so
	 * a watch that cannot be set up is a warning, not a refusal. */
	if (opts->config_path != NULL && !srv.load_once) {
		srv.watch = px_watch_new(&srv, px_reload_cb, &srv);
		if (srv.watch == NULL)
			log_warn("cannot watch %s for changes; reload with SIGHUP", opts->config_path);
	}

	{
		static const int signums[5] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, 0 };
		for (i = 0; signums[i] != 0; i++) {
			event_callback_fn fn = signums[i] == SIGHUP ? hup_cb :
			    signums[i] == SIGUSR1 ? usr1_cb : stop_cb;
			sigs[i] = evsignal_new(srv.base, signums[i], fn, &srv);
			if (sigs[i] == NULL || event_add(sigs[i], NULL) != 0) {
				log_errx("cannot install signal handlers");
				goto out;
			}
		}
	}

	if (cf_config_proxy(srv.cfg)->has_user) {
		const struct cf_proxy_settings *p = cf_config_proxy(srv.cfg);
		px_listeners_chown(&srv, p->user, p->group);
		if (geteuid() == 0)
			px_audit_chown(srv.audit, p->user, p->group);
		const char *what;
		int err = bs_drop_privileges(p->user, p->group, &what);

		if (err < 0) {
			log_err_errno(err, "cannot drop to uid %u gid %u: %s", (unsigned)p->user,
			    (unsigned)p->group, what);
			log_errx("refusing to serve with privileges it was told to drop");
			goto out;
		}
		log_info("running as uid %u gid %u, no capabilities, no_new_privs",
		    (unsigned)p->user, (unsigned)p->group);
	} else if (geteuid() == 0) {
		log_warnx("running as root: set user = UID in [proxy] to drop privileges");
	}

	if (srv.admin != NULL && px_admin_start(srv.admin) != 0) {
		log_err("cannot start the admin socket's thread");
		goto out;
	}
	log_info("serving %s (sha256 %s), generation %lu", cf_config_path(srv.cfg),
	    cf_config_hash(srv.cfg), srv.generation);
	if (opts->ready_fd >= 0) {
		ssize_t w;
		do {
			w = write(opts->ready_fd, "R", 1);
		} while (w < 0 && errno == EINTR);
		close(opts->ready_fd);
	}
	log_starting(0);
	event_base_dispatch(srv.base);
	rc = 0;
out:
	if (rc != 0)
		log_not_starting();
	log_starting(0);
	srv.stopping = 1;
	px_watch_free(srv.watch);
	px_admin_free(srv.admin);
	px_conn_close_all(&srv);
	px_listeners_close(&srv);
	/* The run is over (the sidecar stops us once CMD has exited): what
	 * was refused, how often, and the --allow that would allow it. */
	px_tally_summary(srv.tally, stderr, "postern: ");
	px_tally_free(srv.tally);
	for (i = 0; i < 5; i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	px_dns_free(srv.dns);
	px_audit_free(srv.audit);
	if (srv.idle_trim != NULL)
		event_free(srv.idle_trim);
	if (srv.base != NULL)
		event_base_free(srv.base);
	cf_config_free(srv.cfg);
	px_stats_free(srv.metrics);
	free(srv.last_reload_errors);
	px_sni_cleanup();
	px_splice_cleanup();
	return rc;
}
