/*
 * proxy/engine.c: load, bind, drop privileges, serve (see engine.h).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <event2/event.h>

#include "conf/config.h"
#include "proxy/audit.h"
#include "proxy/dns.h"
#include "proxy/engine.h"
#include "proxy/log.h"
#include "proxy/server.h"
#include "proxy/sni.h"

/*
 * Drop to UID:GID for good: no supplementary groups, real/effective/saved
 * ids all changed, no_new_privs, and a check that no capability is left.
 */
static int
drop_privileges(uid_t uid, gid_t gid)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];

	if (geteuid() == 0) {
		if (setgroups(0, NULL) != 0) {
			log_warn("setgroups");
			return -1;
		}
		if (setresgid(gid, gid, gid) != 0) {
			log_warn("setresgid %u", (unsigned)gid);
			return -1;
		}
		if (setresuid(uid, uid, uid) != 0) {
			log_warn("setresuid %u", (unsigned)uid);
			return -1;
		}
	} else if (geteuid() != uid) {
		log_warnx("cannot change to uid %u: not running as root", (unsigned)uid);
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		log_warn("PR_SET_NO_NEW_PRIVS");
		return -1;
	}
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) != 0) {
		log_warn("capget");
		return -1;
	}
	if (uid != 0 && (data[0].effective || data[0].permitted || data[1].effective ||
	    data[1].permitted)) {
		log_warnx("capabilities remain after dropping to uid %u", (unsigned)uid);
		return -1;
	}
	return 0;
}

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
	rc = px_audit_reopen(srv->audit);
	if (rc != 0)
		log_warnx("cannot reopen the audit log: %s", strerror(-rc));
	else
		log_info("audit log reopened");
}

/*
 * Load the file again and swap snapshots if, and only if, it is entirely
 * valid.  Connections keep the snapshot they hold; their next decision uses
 * the new one.
 */
static void
hup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct px_server *srv = arg;
	struct cf_diag diag;
	struct cf_config *nc;
	size_t i;

	(void)sig;
	(void)what;
	memset(&diag, 0, sizeof(diag));
	nc = cf_config_load(srv->config_path, srv->ov, &diag);
	if (nc == NULL) {
		for (i = 0; i < diag.nerrors; i++)
			log_warnx("reload refused: %s", diag.errors[i]);
		log_warnx("reload refused: the config of generation %lu stays in force", srv->generation);
	} else {
		cf_config_free(srv->cfg);
		srv->cfg = nc;
		srv->generation++;
		log_info("reloaded %s: generation %lu (sha256 %s)", cf_config_path(nc), srv->generation,
		    cf_config_hash(nc));
	}
	cf_diag_free(&diag);
}

int
px_engine_main(const struct px_engine_opts *opts)
{
	struct px_server srv;
	struct cf_overrides ov;
	struct cf_diag diag;
	struct px_dns_opts dopts;
	struct event *sigs[5];
	char errbuf[256];
	int rc = 1, i;
	size_t k;

	log_init("postern-proxy", getenv("POSTERN_DEBUG") != NULL);
	memset(&srv, 0, sizeof(srv));
	memset(sigs, 0, sizeof(sigs));
	TAILQ_INIT(&srv.listeners);
	TAILQ_INIT(&srv.conns);
	memset(&ov, 0, sizeof(ov));
	ov.extra_allow = opts->extra_allow;
	ov.n_extra_allow = opts->n_extra_allow;
	ov.extra_listen = opts->extra_listen;
	ov.n_extra_listen = opts->n_extra_listen;
	ov.replace_listen = opts->replace_listen;
	ov.has_user = opts->has_user;
	ov.user = opts->user;
	srv.ov = &ov;
	srv.config_path = opts->config_path;

	memset(&diag, 0, sizeof(diag));
	srv.cfg = cf_config_load(opts->config_path, &ov, &diag);
	for (k = 0; k < diag.nwarnings; k++)
		log_warnx("%s", diag.warnings[k]);
	if (srv.cfg == NULL) {
		for (k = 0; k < diag.nerrors; k++)
			fprintf(stderr, "%s\n", diag.errors[k]);
		fprintf(stderr, "postern-proxy: config refused, not starting\n");
		cf_diag_free(&diag);
		return 2;
	}
	cf_diag_free(&diag);
	srv.generation = 1;

	signal(SIGPIPE, SIG_IGN);
	srv.base = event_base_new();
	if (srv.base == NULL) {
		log_warnx("cannot create the event loop");
		goto out;
	}
	srv.audit = px_audit_open(cf_config_proxy(srv.cfg)->log);
	if (srv.audit == NULL) {
		log_warn("cannot open the audit log %s", cf_config_proxy(srv.cfg)->log);
		goto out;
	}
	px_dns_opts_init(&dopts);
	srv.dns = px_dns_new(srv.base, cf_config_proxy(srv.cfg)->dns_servers, &dopts, errbuf, sizeof(errbuf));
	if (srv.dns == NULL) {
		log_warnx("DNS: %s", errbuf);
		goto out;
	}
	if (px_listeners_open(&srv, srv.cfg) != 0)
		goto out;

	{
		static const int signums[5] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, 0 };
		for (i = 0; signums[i] != 0; i++) {
			event_callback_fn fn = signums[i] == SIGHUP ? hup_cb :
			    signums[i] == SIGUSR1 ? usr1_cb : stop_cb;
			sigs[i] = evsignal_new(srv.base, signums[i], fn, &srv);
			if (sigs[i] == NULL || event_add(sigs[i], NULL) != 0) {
				log_warnx("cannot install signal handlers");
				goto out;
			}
		}
	}

	if (cf_config_proxy(srv.cfg)->has_user) {
		const struct cf_proxy_settings *p = cf_config_proxy(srv.cfg);
		px_listeners_chown(&srv, p->user, p->group);
		if (drop_privileges(p->user, p->group) != 0) {
			log_warnx("refusing to serve with privileges it was told to drop");
			goto out;
		}
		log_info("running as uid %u gid %u, no capabilities, no_new_privs",
		    (unsigned)p->user, (unsigned)p->group);
	} else if (geteuid() == 0) {
		log_warnx("running as root: set user = UID in [proxy] to drop privileges");
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
	event_base_dispatch(srv.base);
	rc = 0;
out:
	srv.stopping = 1;
	px_conn_close_all(&srv);
	px_listeners_close(&srv);
	for (i = 0; i < 5; i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	px_dns_free(srv.dns);
	px_audit_free(srv.audit);
	if (srv.base != NULL)
		event_base_free(srv.base);
	cf_config_free(srv.cfg);
	px_sni_cleanup();
	return rc;
}
