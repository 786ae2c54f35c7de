/*
 * proxy/engine.c: load, bind, drop privileges, serve (see engine.h).
 *
 * The engine builds the struct px_server (one per worker with workers = N,
 * worker.h: the first serves on this thread) and wires the modules to each
 * other: it hands the listeners px_conn_accept(), and the admin socket and
 * the watch px_reload_cb(), so that none of them names another.  It makes
 * what the server holds (the loop, DNS, the audit log, the counters, the
 * connection and listener sets) and frees it after the server; it stops
 * the server on a signal.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>

extern char **environ;

#include <event2/event.h>
#include <event2/thread.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base/super.h"
#include "conf/config.h"
#include "conf/grantfile.h"
#include "conf/secmem.h"
#include "proxy/admin/admin.h"
#include "proxy/policy/ask.h"
#include "proxy/core/audit.h"
#include "proxy/check.h"
#include "proxy/flow/mint.h"
#include "proxy/flow/conns.h"
#include "proxy/proto/dns.h"
#include "proxy/policy/learn.h"
#include "proxy/engine.h"
#include "proxy/policy/grants.h"
#include "proxy/policy/rtsess.h"
#include "proxy/core/log.h"
#include "proxy/core/mem.h"
#include "proxy/core/prio.h"
#include "proxy/reload.h"
#include "proxy/core/server.h"
#include "proxy/core/sockmaker.h"
#include "proxy/tls/registry.h"
#include "proxy/proto/sni.h"
#include "proxy/flow/splice.h"
#include "proxy/admin/stats.h"
#include "proxy/policy/summary.h"
#include "proxy/flow/notice.h"
#include "proxy/watch.h"
#include "proxy/core/worker.h"

/* The workers' hooks (worker.h): the listeners, connections and scratch
 * of the modules above proxy/core/worker. */
static void
hook_pause(struct px_server *srv, int full)
{
	if (full != px_listeners_paused(srv))
		px_listeners_pause(srv, full);
	if (!full)
		px_conns_wake(srv);
}

static void
hook_end(struct px_server *srv)
{
	px_conn_close_all(srv);
	px_audit_batch_end();
	px_mem_bin_trim();
	px_forward_cleanup();
	px_splice_cleanup();
}

static const struct px_workers_hooks engine_hooks = {
	.pause = hook_pause,
	.turn = px_listeners_take_turn,
	.end = hook_end,
};

/* What the engine makes for each worker after the first (worker.h). */
struct engine_worker {
	struct event_base *base;
	struct px_conns *conns;
	struct px_dns *dns;
	struct px_listeners *listeners;
	struct px_server *srv;
};

/*
 * The loop, with the priorities of prio.h; NULL on failure.
 *
 * With epoll's changelist, libevent applies the interest changes of one
 * loop pass when it next waits, merged per descriptor: a tunnel's life
 * enables and disables each side's read and write a dozen times, often
 * twice within one callback, and each was an epoll_ctl(2) of its own
 * (18 per tunnel; 12 with the changelist, and 15% less CPU per tunnel).
 * The changelist's hazard is a dup()ed descriptor (libevent's epoll.c):
 * a removal reaches epoll after the close, and epoll forgets a file only
 * when its last descriptor is closed.  The proxy registers none: with
 * workers = N the loops watch a UNIX listener's one descriptor
 * (listen.c).
 */
static struct event_base *
loop_new(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *base = NULL;

	if (ec != NULL) {
		event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
		base = event_base_new_with_config(ec);
		event_config_free(ec);
	}
	if (base != NULL && event_base_priority_init(base, PX_PRI_N) != 0) {
		event_base_free(base);
		base = NULL;
	}
	return base;
}

/*
 * Workers 1..N-1: a loop, a connection set, a DNS channel (and cache) and
 * a listener set each, and a server sharing the rest of IN's.  0, or a
 * negative errno (logged) with what was made left in W for
 * engine_workers_free().
 */
static int
engine_workers_new(const struct px_server_init *in, struct px_server *first,
    struct engine_worker *w, unsigned n, const struct px_dns_opts *dopts)
{
	struct px_server_init wi;
	char errbuf[256];
	unsigned i;

	for (i = 1; i < n; i++) {
		wi = *in;
		wi.first = first;
		wi.worker = i;
		if ((w[i].base = loop_new()) == NULL ||
		    (w[i].conns = px_conns_new(w[i].base)) == NULL ||
		    (w[i].listeners = px_listeners_new()) == NULL) {
			log_errx("cannot create worker %u's event loop", i);
			return -ENOMEM;
		}
		w[i].dns = px_dns_new(w[i].base, cf_config_proxy(px_server_config(first))->dns_servers,
		    dopts, errbuf, sizeof(errbuf));
		if (w[i].dns == NULL) {
			log_errx("DNS: %s", errbuf);
			return -EINVAL;
		}
		wi.base = w[i].base;
		wi.conns = w[i].conns;
		wi.dns = w[i].dns;
		wi.listeners = w[i].listeners;
		wi.cfg = px_server_config_ref(first);
		if ((w[i].srv = px_server_new(&wi)) == NULL) {
			cf_config_free(wi.cfg);
			log_err("out of memory");
			return -ENOMEM;
		}
		px_workers_set(in->workers, i, w[i].srv);
	}
	return 0;
}

/* Free what engine_workers_new() made, once their threads have ended. */
static void
engine_workers_free(struct engine_worker *w, unsigned n)
{
	unsigned i;

	for (i = 1; i < n; i++) {
		px_mint_server_gone(w[i].srv);
		px_dns_free(w[i].dns);
		px_server_free(w[i].srv);
		px_conns_free(w[i].conns);
		px_listeners_free(w[i].listeners);
	}
}

static void
engine_bases_free(struct engine_worker *w, unsigned n)
{
	unsigned i;

	for (i = 1; i < n; i++)
		if (w[i].base != NULL)
			event_base_free(w[i].base);
}

static void
stop_cb(evutil_socket_t sig, short what, void *arg)
{
	struct px_server *srv = arg;

	(void)what;
	log_info("signal %d: stopping", (int)sig);
	px_server_stop(srv);
	event_base_loopexit(px_server_base(srv), NULL);
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

static void
hup_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	px_reload(arg, NULL, "SIGHUP", NULL);
}

/* The overrides OPTS stand for, the same at start and at every reload. */
static void
engine_overrides(const struct px_engine_opts *opts, struct cf_overrides *ov)
{
	memset(ov, 0, sizeof(*ov));
	ov->extra_allow = opts->extra_allow;
	ov->n_extra_allow = opts->n_extra_allow;
	ov->extra_secrets = opts->extra_secrets;
	ov->n_extra_secrets = opts->n_extra_secrets;
	ov->extra_listen = opts->extra_listen;
	ov->n_extra_listen = opts->n_extra_listen;
	ov->replace_listen = opts->replace_listen;
	ov->admin = opts->admin;
	ov->has_user = opts->has_user;
	ov->user = opts->user;
	ov->default_name = opts->session_name;
	ov->serve_session = opts->serve_session;
	ov->strict_modes = opts->strict_modes;
	ov->cli_hints = opts->human;
	ov->report = opts->report;
	ov->ask = opts->ask;
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

static void
kept_skipped(void *arg, const char *name, const char *why)
{
	(void)arg;
	log_warnx("state_dir: kept session %s skipped: %s", name, why);
}

/*
 * The runtime sessions kept in CFG's state_dir, each taken after the file
 * as PUT /sessions/NAME took it.  One that no longer validates (the file
 * took its name, a listener clashes, a key changed meaning) is told with
 * its reason and skipped, its file left: a skipped session serves nothing,
 * which is safe; refusing the start would stop every other session.
 * Returns the snapshot to serve (CFG or a new one; CFG is consumed).
 */
static struct cf_config *
engine_kept_sessions(const struct px_engine_opts *opts, const struct cf_overrides *ov,
    struct px_rtsess *rs, struct cf_config *cfg)
{
	const char *dir = cf_config_proxy(cfg)->state_dir;
	struct px_rtsess *kept;
	const struct cf_extra *ex;
	size_t i, n, k;
	int got;

	if (dir == NULL || (kept = px_rtsess_new()) == NULL)
		return cfg;
	/* Written by the proxy's user after the privilege drop. */
	got = px_rtsess_load(kept, dir, cf_config_proxy(cfg)->has_user ? cf_config_proxy(cfg)->user :
	    (uid_t)-1, kept_skipped, NULL);
	if (got < 0)
		log_warnx("state_dir: out of memory reading the kept sessions");
	ex = px_rtsess_list(kept, &n);
	for (i = 0; i < n; i++) {
		struct cf_diag diag;
		struct cf_config *nc;
		const struct cf_extra *cur;
		size_t ncur;

		if (px_rtsess_insert(rs, SIZE_MAX, ex[i].name, ex[i].text, ex[i].len) != 0)
			break;
		memset(&diag, 0, sizeof(diag));
		cur = px_rtsess_list(rs, &ncur);
		nc = cf_config_load_extra(opts->config_path, ov, cur, ncur, &diag);
		if (nc == NULL) {
			for (k = 0; k < diag.nerrors; k++)
				log_warnx("state_dir: kept session %s skipped: %s", ex[i].name,
				    diag.errors[k]);
			px_rtsess_remove(rs, ncur - 1);
		} else {
			cf_config_free(cfg);
			cfg = nc;
			log_info("session %s: kept in state_dir, made again", ex[i].name);
		}
		cf_diag_free(&diag);
	}
	px_rtsess_free(kept);
	return cfg;
}

/* CRYPTO_secure_malloc_init()'s answer: 0 none (values on the plain
 * heap), 1 locked and not dumped, 2 not locked (RLIMIT_MEMLOCK). */
static int secure_heap = -1;

void
px_engine_harden(void)
{
	struct rlimit rl;

	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_cur != 0) {
		rl.rlim_cur = 0;
		(void)setrlimit(RLIMIT_CORE, &rl);
	}
	/* Values take at most half of it (conf/secmem.h); past that they go
	 * on the plain heap, in a process that dumps no core. */
	if (secure_heap < 0)
		secure_heap = CRYPTO_secure_malloc_init(CF_SECMEM_ARENA, 32);
}

int
px_engine_env_take(void)
{
	static int taken;
	char **copy, **orig = environ;
	size_t n = 0, i;

	if (taken)
		return 0;
	while (orig != NULL && orig[n] != NULL)
		n++;
	copy = calloc(n + 1, sizeof(*copy));
	if (copy == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		copy[i] = strdup(orig[i]);
		if (copy[i] == NULL) {
			while (i > 0)
				free(copy[--i]);
			free(copy);
			return -ENOMEM;
		}
	}
	for (i = 0; i < n; i++)
		explicit_bzero(orig[i], strlen(orig[i]));
	environ = copy;
	taken = 1;
	return 0;
}

/* Say once, in the log, where the values are kept. */
static void
engine_harden_log(void)
{
	if (secure_heap == 0)
		log_warnx("secrets: no secure heap; values are kept on the plain heap "
		    "(the process still dumps no core)");
	else if (secure_heap == 2)
		log_debug("secrets: the secure heap is not locked in memory "
		    "(RLIMIT_MEMLOCK); it is still left out of core dumps");
}

struct cf_config *
px_engine_load(const struct px_engine_opts *opts)
{
	struct cf_overrides ov;

	px_engine_harden();
	engine_log_init(opts);
	engine_overrides(opts, &ov);
	return engine_load(opts, &ov);
}

int
px_engine_check(const struct px_engine_opts *opts, const char *listen_note)
{
	struct cf_overrides ov;

	px_engine_harden();
	engine_overrides(opts, &ov);
	return px_check(opts->config_path, &ov, opts->human ? "postern" : "postern-proxy",
	    listen_note);
}

/*
 * The learn summary of every session SRV served or learned from, as ready
 * config blocks, written to FD from its start (run --learn reads it once
 * we are gone).  A failure is told: the person asked for the block.
 */
static void
learn_write(struct px_server *srv, int fd)
{
	const struct cf_config *cfg = px_server_config(srv);
	struct px_learn *l = px_server_learn(srv);
	char *buf = NULL, *one;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	int first = 1;

	if (f == NULL)
		goto fail;
	for (i = 0; i < cf_config_nsessions(cfg); i++) {
		const struct cf_session *s = cf_config_session(cfg, i);

		if (!cf_session_served(s) && !px_learn_known(l, s->name))
			continue;
		one = px_learn_render(l, s->name, s->is_default);
		if (one == NULL)
			continue;
		fprintf(f, "%s%s", first ? "" : "\n", one);
		free(one);
		first = 0;
	}
	if (fclose(f) != 0)
		goto fail;
	if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		goto fail;
	for (i = 0; i < len;) {
		ssize_t w = write(fd, buf + i, len - i);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		i += (size_t)w;
	}
	free(buf);
	return;
fail:
	log_err("cannot write the learned allow_hosts block");
	free(buf);
}

/* For the person at the terminal when a run ends (postern-sidecar run):
 * how many questions ask mode asked, and how they were answered, in the
 * style of the refusals' summary.  Nothing when none was asked. */
static void
engine_ask_summary(const struct px_ask *a)
{
	uint64_t allowed, denied, late, open, n;

	if (a == NULL)
		return;
	allowed = px_ask_count(a, PX_ASK_ALLOW_ONCE) + px_ask_count(a, PX_ASK_ALLOW_SESSION);
	denied = px_ask_count(a, PX_ASK_DENY_ONCE) + px_ask_count(a, PX_ASK_DENY_SESSION);
	late = px_ask_count(a, PX_ASK_TIMEOUT);
	open = px_ask_open(a);
	n = allowed + denied + late + open;
	if (n == 0)
		return;
	fprintf(stderr, "postern: ask mode: %llu question%s in this run: %llu allowed, %llu denied, "
	    "%llu not answered in time (refused)", (unsigned long long)n, n == 1 ? "" : "s",
	    (unsigned long long)allowed, (unsigned long long)denied, (unsigned long long)late);
	if (open > 0)
		fprintf(stderr, ", %llu still open at the end", (unsigned long long)open);
	fputc('\n', stderr);
}

/* What one run of the engine holds, from the start to the end. */
struct engine_run {
	struct px_server_init in;
	struct px_server *srv;
	struct px_admin *admin;
	struct px_watch *watch;
	struct cf_overrides ov;
	struct px_dns_opts dopts;
	struct event *sigs[5];
	struct engine_worker *wk;
	unsigned nworkers;
	int sockmaker;                  /* px_engine_opts.sockmaker */
};

/* How many workers serve CFG: its workers, else one per CPU; one for ask
 * mode, and when libevent cannot have its locks. */
static unsigned
engine_nworkers(const struct cf_config *cfg)
{
	unsigned nworkers = cf_config_proxy(cfg)->workers;

	if (nworkers == 0)
		nworkers = px_workers_auto();
	if (nworkers > 1 && px_reload_has_ask(cfg)) {
		log_warnx("workers = %u: mode = ask keeps to one worker in this version; serving with 1",
		    nworkers);
		nworkers = 1;
	}
	/* Several loops make events active on each other (worker.h); one
	 * loop keeps libevent without locks, as it always ran. */
	if (nworkers > 1 && evthread_use_pthreads() != 0) {
		log_errx("cannot give libevent its locks; serving with 1 worker");
		nworkers = 1;
	}
	return nworkers;
}

/* The audit log's chain, its signing key (made on first start, before
 * the privileges drop) and its checkpoints.  0 or -1 after saying why. */
static int
engine_audit_start(struct px_server_init *in, const struct cf_proxy_settings *p)
{
	EVP_PKEY *key = NULL;
	char why[400];
	int rc;

	if (p->audit_signing_key != NULL &&
	    (key = px_audit_key_load(p->audit_signing_key, 1, why, sizeof(why))) == NULL) {
		log_errx("audit_signing_key %s", why);
		return -1;
	}
	rc = px_audit_start(in->audit, key, (int)p->audit_format);
	EVP_PKEY_free(key);
	if (rc < 0 || px_audit_checkpoints(in->audit, in->base, p->audit_checkpoint_ms) < 0) {
		log_errx("cannot start the audit log's chain");
		return -1;
	}
	return 0;
}

/*
 * What the server is made of, beside its snapshot: the workers, the
 * counters, the loop, the audit log, the resolver, the TLS registry, the
 * questions and grants, the listener set.  Returns 0 or a negative errno
 * after saying why.
 */
static int
engine_parts_new(struct engine_run *e, const struct px_engine_opts *opts)
{
	struct px_server_init *in = &e->in;
	const struct cf_proxy_settings *p = cf_config_proxy(in->cfg);
	char errbuf[256], why[400];
	size_t made;

	if ((in->workers = px_workers_new(e->nworkers, &engine_hooks)) == NULL ||
	    (e->wk = calloc(e->nworkers, sizeof(*e->wk))) == NULL) {
		log_err("out of memory");
		return -ENOMEM;
	}
	in->metrics = px_stats_new();
	if (in->metrics == NULL) {
		log_err("out of memory");
		return -ENOMEM;
	}

	signal(SIGPIPE, SIG_IGN);
	in->base = loop_new();
	if (in->base == NULL || (in->conns = px_conns_new(in->base)) == NULL) {
		log_errx("cannot create the event loop");
		return -ENOMEM;
	}
	in->audit = px_audit_open(opts->human && strcmp(p->log, "stderr") == 0 ?
	    "/dev/null" : p->log);
	if (in->audit == NULL) {
		log_err("cannot open the audit log %s", p->log);
		return -EIO;
	}
	if (engine_audit_start(in, p) < 0)
		return -EINVAL;
	px_dns_opts_init(&e->dopts);
	in->dns = px_dns_new(in->base, p->dns_servers, &e->dopts, errbuf, sizeof(errbuf));
	if (in->dns == NULL) {
		log_errx("DNS: %s", errbuf);
		return -EINVAL;
	}
	/* Every session that terminates TLS gets its CAs before anything is
	 * served: a state directory that cannot be used stops the start. */
	if ((in->tls = px_tlsreg_new()) == NULL) {
		log_err("out of memory");
		return -ENOMEM;
	}
	if (px_tlsreg_update(in->tls, in->cfg, &made, why, sizeof(why)) < 0) {
		log_errx("TLS termination: %s", why);
		return -EINVAL;
	}
	/* The questions and grants outlive every snapshot (a reload keeps
	 * them); the questions' deadline is taken from each snapshot. */
	if ((in->ask = px_ask_new(in->base, p->ask_timeout_ms)) == NULL ||
	    (in->grants = px_grants_new()) == NULL) {
		log_err("out of memory");
		return -ENOMEM;
	}
	if ((in->listeners = px_listeners_new()) == NULL) {
		log_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The grants an admin saved: a bad grants_file stops the start, as a bad
 * config does.  Returns 0 or a negative errno after saying why. */
static int
engine_grants_load(struct px_server *srv, struct px_grants *grants)
{
	const char *gf = cf_config_proxy(px_server_config(srv))->grants_file;
	struct cf_grant_entry *gv = NULL;
	struct cf_diag gd;
	size_t gn = 0, k;
	int grc;

	if (gf == NULL)
		return 0;
	memset(&gd, 0, sizeof(gd));
	grc = cf_grants_load(gf, px_server_config(srv), &gd, &gv, &gn);
	for (k = 0; k < gd.nerrors; k++)
		log_errx("%s", gd.errors[k]);
	cf_diag_free(&gd);
	if (grc == 0 && px_grants_set_file(grants, gv, gn, time(NULL)) != 0)
		grc = -ENOMEM;
	free(gv);
	if (grc != 0) {
		log_errx("grants_file %s refused: %s", gf, strerror(-grc));
		return grc;
	}
	if (gn > 0)
		log_info("grants_file %s: %zu grant(s)", gf, gn);
	return 0;
}

/* Stop, reload and the counters' dump, read in the loop.  Returns 0 or
 * -ENOMEM after saying so. */
static int
engine_signals_add(struct engine_run *e)
{
	static const int signums[5] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, 0 };
	int i;

	for (i = 0; signums[i] != 0; i++) {
		event_callback_fn fn = signums[i] == SIGHUP ? hup_cb :
		    signums[i] == SIGUSR1 ? usr1_cb : stop_cb;
		e->sigs[i] = evsignal_new(e->in.base, signums[i], fn, e->srv);
		if (e->sigs[i] == NULL || event_add(e->sigs[i], NULL) != 0) {
			log_errx("cannot install signal handlers");
			return -ENOMEM;
		}
	}
	return 0;
}

/* To [proxy] user, once every socket is bound and the audit log open.
 * Returns 0 or a negative errno after saying why. */
static int
engine_drop_privileges(struct engine_run *e)
{
	const struct cf_proxy_settings *p = cf_config_proxy(px_server_config(e->srv));
	const char *what;
	int err;

	if (e->sockmaker && p->socket_dir != NULL && (!p->has_user || geteuid() != 0))
		log_info("socket_dir %s: no socket maker: it runs only when the proxy starts as "
		    "root with user =", p->socket_dir);
	if (!p->has_user) {
		if (geteuid() == 0)
			log_warnx("running as root: set user = UID in [proxy] to drop privileges");
		return 0;
	}
	/* Forked while this is the only thread, before the drop. */
	if (e->sockmaker && p->socket_dir != NULL && geteuid() == 0 && p->user != 0 &&
	    px_sockmaker_start(p->socket_dir, p->user, p->group) < 0)
		return -1;
	px_listeners_chown(e->srv, p->user, p->group);
	if (geteuid() == 0)
		px_audit_chown(e->in.audit, p->user, p->group);
	err = bs_drop_privileges(p->user, p->group, &what);
	if (err < 0) {
		log_err_errno(err, "cannot drop to uid %u gid %u: %s", (unsigned)p->user,
		    (unsigned)p->group, what);
		log_errx("refusing to serve with privileges it was told to drop");
		return err;
	}
	log_info("running as uid %u gid %u, no capabilities, no_new_privs",
	    (unsigned)p->user, (unsigned)p->group);
	return 0;
}

/*
 * Builds the server from E's snapshot, binds its sockets and drops
 * privileges.  Returns 0, or the exit status after saying why.
 */
static int
engine_setup(struct engine_run *e, const struct px_engine_opts *opts)
{
	e->nworkers = engine_nworkers(e->in.cfg);
	if (engine_parts_new(e, opts) < 0)
		return 1;
	if ((e->srv = px_server_new(&e->in)) == NULL) {
		log_err("out of memory");
		return 1;
	}
	e->in.cfg = NULL;   /* the server's now */
	px_workers_set(e->in.workers, 0, e->srv);
	if (engine_workers_new(&e->in, e->srv, e->wk, e->nworkers, &e->dopts) < 0)
		return 1;
	if (engine_grants_load(e->srv, e->in.grants) < 0)
		return 2;
	/* The listeners hand their clients to the connection code; the
	 * reload module gives the same to those a reload binds. */
	if (px_listeners_open(e->srv, px_server_config(e->srv), px_conn_accept) < 0)
		return 1;
	/* The admin socket and the metrics listener are bound here, as root,
	 * like the listeners; a config that asks for one and cannot have it
	 * does not start. */
	if (cf_config_proxy(px_server_config(e->srv))->admin.kind != 0 ||
	    cf_config_proxy(px_server_config(e->srv))->metrics.kind != 0) {
		e->admin = px_admin_new(e->srv, px_reload_cb, e->srv);
		if (e->admin == NULL)
			return 1;
		px_admin_set_sessions(e->admin, px_reload_session_cb);
	}
	/* Watching is a convenience (SIGHUP and POST /reload still work), so
	 * a watch that cannot be set up is a warning, not a refusal. */
	if (opts->config_path != NULL && !e->in.load_once) {
		e->watch = px_watch_new(e->srv, px_reload_cb, e->srv);
		if (e->watch == NULL)
			log_warn("cannot watch %s for changes; reload with SIGHUP", opts->config_path);
	}
	if (engine_signals_add(e) < 0 || engine_drop_privileges(e) < 0)
		return 1;
	/* A change of uid made us dumpable again (prctl(2)). */
	px_engine_harden();

	/* The other workers' threads, after the privilege drop (it is per
	 * thread: capabilities, no_new_privs), with every listener copied. */
	if (px_workers_start(e->in.workers) < 0)
		return 1;
	if (e->admin != NULL && px_admin_start(e->admin) != 0) {
		log_err("cannot start the admin socket's thread");
		return 1;
	}
	return 0;
}

/* Serves until a signal stops the loop. */
static void
engine_serve(struct engine_run *e, const struct px_engine_opts *opts)
{
	struct px_server *srv = e->srv;

	log_info("serving %s (sha256 %s), generation %lu", cf_config_path(px_server_config(srv)),
	    cf_config_hash(px_server_config(srv)), px_server_generation(srv));
	if (e->nworkers > 1)
		log_info("%u workers, one event loop each", e->nworkers);
	if (opts->ready_fd >= 0) {
		ssize_t w;
		do {
			w = write(opts->ready_fd, "R", 1);
		} while (w < 0 && errno == EINTR);
		close(opts->ready_fd);
	}
	log_starting(0);
	event_base_dispatch(e->in.base);
}

/* Stops the server, says what the run summed up, and frees it all, in the
 * order the parts depend on each other. */
static void
engine_end(struct engine_run *e, const struct px_engine_opts *opts)
{
	struct px_server_init *in = &e->in;
	int i;

	if (e->srv != NULL) {
		px_server_stop(e->srv);
		px_watch_free(e->watch);
		px_admin_free(e->admin);
		/* The other workers close their connections on their own
		 * threads; then the listeners, with every copy of them. */
		px_workers_stop(in->workers);
		px_conn_close_all(e->srv);
		px_listeners_close(e->srv);
	}
	if (e->srv != NULL) {
		/* A session's GitHub tokens end with the proxy. */
		px_mint_revoke_all(e->srv, 3000);
		px_mint_server_gone(e->srv);
	}
	px_sockmaker_stop();
	/* The close lines of this thread's last connections. */
	px_audit_batch_end();
	px_mem_bin_trim();
	/* The run is over (the sidecar stops us once CMD has exited): what
	 * was refused, how often, and the --allow that would allow it. */
	px_summary_print_as(in->would, stderr, "postern: ", "report mode: would have refused");
	px_summary_print(in->tally, stderr, "postern: ");
	if (opts->learn && e->srv != NULL)
		learn_write(e->srv, opts->learn_fd);
	px_learn_free(in->learn);
	if (opts->human)
		engine_ask_summary(in->ask);
	px_summary_free(in->tally);
	px_summary_free(in->would);
	for (i = 0; i < 5; i++)
		if (e->sigs[i] != NULL)
			event_free(e->sigs[i]);
	px_dns_free(in->dns);
	if (e->wk != NULL)
		engine_workers_free(e->wk, e->nworkers);
	px_workers_free(in->workers);
	if (e->wk != NULL)
		engine_bases_free(e->wk, e->nworkers);
	free(e->wk);
	px_audit_free(in->audit);
	px_server_free(e->srv);
	/* Every connection is closed: no question has a waiter left. */
	px_ask_free(in->ask);
	px_grants_free(in->grants);
	px_rtsess_free(in->rtsess);
	px_conns_free(in->conns);
	px_listeners_free(in->listeners);
	px_tlsreg_free(in->tls);
	if (in->base != NULL)
		event_base_free(in->base);
	cf_config_free(in->cfg);
	px_stats_free(in->metrics);
	px_sni_cleanup();
	px_splice_cleanup();
}

int
px_engine_main(const struct px_engine_opts *opts)
{
	struct engine_run e;
	struct px_server_init *in = &e.in;
	int rc;

	px_engine_harden();
	engine_log_init(opts);
	engine_harden_log();
	log_starting(1);
	memset(&e, 0, sizeof(e));
	engine_overrides(opts, &e.ov);
	in->ov = &e.ov;
	in->human = opts->human;
	/* Without it (out of memory) every refusal is told, none summed. */
	if (opts->human) {
		in->tally = px_summary_new();
		in->would = px_summary_new();
	}
	if (opts->human && opts->refusals)
		px_notice_file(opts->refusals_fd);
	/* A snapshot given is all there is: the file is not read again. */
	in->load_once = opts->load_once || opts->config != NULL;
	/* Without it (out of memory) nothing is learned. */
	in->learn = px_learn_new();
	in->config_path = opts->config_path;

	in->cfg = opts->config != NULL ? cf_config_ref(opts->config) : engine_load(opts, &e.ov);
	if (in->cfg == NULL) {
		px_summary_free(in->tally);
		px_summary_free(in->would);
		px_learn_free(in->learn);
		return 2;
	}
	/* The sessions made at run time; none where the file is read once. */
	if (!in->load_once && (in->rtsess = px_rtsess_new()) != NULL)
		in->cfg = engine_kept_sessions(opts, &e.ov, in->rtsess, in->cfg);
	e.ov.trust_file_user = 0;
	e.nworkers = 1;
	e.sockmaker = opts->sockmaker;
	rc = engine_setup(&e, opts);
	if (rc == 0)
		engine_serve(&e, opts);
	else
		log_not_starting();
	log_starting(0);
	engine_end(&e, opts);
	return rc;
}
