/*
 * proxy/server.c: the owner of struct px_server (see server.h).
 *
 * Only plain reads and writes: the server is touched from its loop's one
 * thread (the admin thread hands its work over, loopcall.h), so nothing
 * here locks.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "conf/config.h"
#include "proxy/server.h"

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

int
px_server_paused(const struct px_server *srv)
{
	return srv->paused;
}

unsigned
px_server_nconns(const struct px_server *srv)
{
	return srv->nconns;
}

struct px_stats *
px_server_stats(const struct px_server *srv)
{
	return srv->metrics;
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

uint64_t
px_server_count_backoff(struct px_server *srv)
{
	return srv->stats.accept_backoffs++;
}
