/*
 * proxy/core/server.c: the owner of struct px_server (see server.h).
 *
 * Only plain reads and writes: each server (one per worker, worker.h) is
 * touched from its loop's one thread (the admin thread hands its work
 * over, loopcall.h; a reload reaches the other workers the same way), so
 * nothing here locks.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "conf/config.h"
#include "proxy/policy/budget.h"
#include "proxy/core/server.h"
#include "proxy/core/decider.h"

/*
 * What the server itself holds; the connection set and the listener set
 * are their modules' (conns.c, listen.c), held here as opaque pointers.
 * The table of who owns what is in server.h.
 */
struct px_server {
	struct event_base *base;
	struct cf_config *cfg;    /* the snapshot new decisions use */
	unsigned long generation;
	struct px_dns *dns;
	struct px_audit *audit;
	struct px_stats *metrics;
	struct px_summary *tally;
	struct px_summary *would;
	struct px_learn *learn;
	struct px_conns *conns;
	struct px_listeners *listeners;
	struct px_tlsreg *tls;
	struct px_budgets *budgets;
	struct px_ask *ask;
	struct px_grants *grants;
	struct px_deciders *deciders;
	struct px_rtsess *rtsess;
	const char *config_path;
	const struct cf_overrides *ov;
	int load_once;
	int human;
	int stopping;
	struct px_workers *workers;
	unsigned worker;
	int own_budgets;
	/* Last reload: wall-clock time, result, and its errors joined by
	 * newlines (NULL when it succeeded). */
	time_t started_at;
	time_t last_reload;
	int last_reload_ok;
	char *last_reload_errors;
};

struct px_server *
px_server_new(const struct px_server_init *in)
{
	struct px_server *srv = calloc(1, sizeof(*srv));

	if (srv == NULL)
		return NULL;
	if (in->first != NULL) {
		srv->budgets = in->first->budgets;
	} else if ((srv->budgets = px_budgets_new()) == NULL) {
		free(srv);
		return NULL;
	} else {
		srv->own_budgets = 1;
	}
	if ((srv->deciders = px_deciders_new(in->base)) == NULL) {
		if (srv->own_budgets)
			px_budgets_free(srv->budgets);
		free(srv);
		return NULL;
	}
	srv->workers = in->workers;
	srv->worker = in->worker;
	srv->base = in->base;
	srv->cfg = in->cfg;
	srv->generation = 1;
	srv->dns = in->dns;
	srv->audit = in->audit;
	srv->metrics = in->metrics;
	srv->tally = in->tally;
	srv->would = in->would;
	srv->learn = in->learn;
	srv->conns = in->conns;
	srv->listeners = in->listeners;
	srv->tls = in->tls;
	srv->ask = in->ask;
	srv->grants = in->grants;
	srv->rtsess = in->rtsess;
	srv->config_path = in->config_path;
	srv->ov = in->ov;
	srv->load_once = in->load_once;
	srv->human = in->human;
	srv->started_at = time(NULL);
	srv->last_reload_ok = 1;
	return srv;
}

struct px_tlsreg *
px_server_tls(const struct px_server *srv)
{
	return srv->tls;
}

void
px_server_free(struct px_server *srv)
{
	if (srv == NULL)
		return;
	px_deciders_free(srv->deciders);
	cf_config_free(srv->cfg);
	if (srv->own_budgets)
		px_budgets_free(srv->budgets);
	free(srv->last_reload_errors);
	free(srv);
}

struct event_base *
px_server_base(const struct px_server *srv)
{
	return srv->base;
}

const struct cf_config *
px_server_config(const struct px_server *srv)
{
	return srv->cfg;
}

unsigned long
px_server_generation(const struct px_server *srv)
{
	return srv->generation;
}

void
px_server_set_config(struct px_server *srv, struct cf_config *nc)
{
	cf_config_free(srv->cfg);
	srv->cfg = nc;
	srv->generation++;
}

void
px_server_adopt_config(struct px_server *srv, struct cf_config *nc, unsigned long gen)
{
	cf_config_free(srv->cfg);
	srv->cfg = nc;
	srv->generation = gen;
}

struct px_workers *
px_server_workers(const struct px_server *srv)
{
	return srv->workers;
}

unsigned
px_server_worker(const struct px_server *srv)
{
	return srv->worker;
}

const char *
px_server_config_path(const struct px_server *srv)
{
	return srv->config_path;
}

const struct cf_overrides *
px_server_overrides(const struct px_server *srv)
{
	return srv->ov;
}

int
px_server_load_once(const struct px_server *srv)
{
	return srv->load_once;
}

int
px_server_stopping(const struct px_server *srv)
{
	return srv->stopping;
}

void
px_server_stop(struct px_server *srv)
{
	srv->stopping = 1;
}

struct cf_config *
px_server_config_ref(const struct px_server *srv)
{
	return cf_config_ref(srv->cfg);
}

int
px_server_human(const struct px_server *srv)
{
	return srv->human;
}

struct px_summary *
px_server_would_tally(const struct px_server *srv)
{
	return srv->would;
}

struct px_learn *
px_server_learn(const struct px_server *srv)
{
	return srv->learn;
}

struct px_summary *
px_server_tally(const struct px_server *srv)
{
	return srv->tally;
}

struct px_conns *
px_server_conns(const struct px_server *srv)
{
	return srv->conns;
}

struct px_listeners *
px_server_listeners(const struct px_server *srv)
{
	return srv->listeners;
}

struct px_stats *
px_server_stats(const struct px_server *srv)
{
	return srv->metrics;
}

struct px_ask *
px_server_ask(const struct px_server *srv)
{
	return srv->ask;
}

struct px_deciders *
px_server_deciders(const struct px_server *srv)
{
	return srv->deciders;
}

struct px_grants *
px_server_grants(const struct px_server *srv)
{
	return srv->grants;
}

struct px_rtsess *
px_server_rtsess(const struct px_server *srv)
{
	return srv->rtsess;
}

struct px_dns *
px_server_dns(const struct px_server *srv)
{
	return srv->dns;
}

struct px_audit *
px_server_audit(const struct px_server *srv)
{
	return srv->audit;
}

struct px_budgets *
px_server_budgets(const struct px_server *srv)
{
	return srv->budgets;
}

time_t
px_server_started_at(const struct px_server *srv)
{
	return srv->started_at;
}

void
px_server_reloaded(struct px_server *srv, int ok, char *errors)
{
	srv->last_reload = time(NULL);
	free(srv->last_reload_errors);
	srv->last_reload_errors = errors;
	srv->last_reload_ok = ok;
}

const char *
px_server_last_reload(const struct px_server *srv, time_t *when, int *ok)
{
	*when = srv->last_reload;
	*ok = srv->last_reload_ok;
	return srv->last_reload_errors;
}
