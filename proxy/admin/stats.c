/*
 * proxy/admin/stats.c: the proxy's counters (see stats.h); the admin socket
 * renders them (status.c).
 *
 * Sessions and rules are few (tens, perhaps hundreds), so plain arrays with
 * linear lookups are enough and keep the code obvious.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/admin/stats.h"
#include "proxy/core/lock.h"

/* Every worker counts into the one set (lock.h): /status and /metrics
 * then show the sum as they always did. */
static pthread_mutex_t stats_lock = PX_LOCK_INIT;

#define NREASONS 48
/* Every reason must have a counter: a new one past the last slot would
 * silently drop out of /metrics. */
_Static_assert(CF_R_NREASONS <= NREASONS, "raise NREASONS for the new reason codes");
static const double buckets[] = { 0.1, 1, 10, 60, 300, 900, 3600, 14400 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))
static const double dbuckets[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5 };
#define NDBUCKETS (sizeof(dbuckets) / sizeof(dbuckets[0]))

struct sess_stats {
	char *name;
	uint64_t open, total, up, down;
	uint64_t decisions[NREASONS];
	uint64_t would[NREASONS];   /* report mode: allowed, would refuse */
};

struct rule_stats {
	char *at;      /* FILE:LINE */
	char *pattern; /* the item as written */
	char *type;    /* allow / deny */
	uint64_t hits;
};

/* A secret of a session: requests it was put on, requests refused for
 * carrying its placeholder where it is not bound, responses that carried
 * it back. */
struct secret_stats {
	char *session, *secret;
	uint64_t injected, misdirected, reflected;
};

struct px_stats {
	struct secret_stats *secrets;
	size_t nsecrets;
	struct secret_stats *canaries;	/* counted in .misdirected */
	size_t ncanaries;
	struct sess_stats *sess;
	size_t nsess;
	struct rule_stats *rules;
	size_t nrules;
	uint64_t reloads_ok, reloads_failed;
	uint64_t hist[NBUCKETS + 1];
	double hist_sum;
	uint64_t hist_count;
	/* decider =: questions by result, answers taken from the cache, and
	 * the latency of those asked. */
	uint64_t decider[PX_STATS_DECIDER_RESULTS], decider_cached;
	uint64_t dhist[NDBUCKETS + 1];
	double dhist_sum;
	uint64_t dhist_count;
};

struct px_stats *
px_stats_new(void)
{
	return calloc(1, sizeof(struct px_stats));
}

void
px_stats_free(struct px_stats *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nsess; i++)
		free(s->sess[i].name);
	for (i = 0; i < s->nrules; i++) {
		free(s->rules[i].at);
		free(s->rules[i].pattern);
		free(s->rules[i].type);
	}
	for (i = 0; i < s->ncanaries; i++) {
		free(s->canaries[i].session);
		free(s->canaries[i].secret);
	}
	free(s->canaries);
	for (i = 0; i < s->nsecrets; i++) {
		free(s->secrets[i].session);
		free(s->secrets[i].secret);
	}
	free(s->secrets);
	free(s->sess);
	free(s->rules);
	free(s);
}

void
px_stats_secret(struct px_stats *s, const char *session, const char *secret,
    enum px_secret_event ev)
{
	PX_LOCKED(&stats_lock);
	struct secret_stats *nv, *e = NULL;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nsecrets && e == NULL; i++)
		if (strcmp(s->secrets[i].session, session) == 0 && strcmp(s->secrets[i].secret, secret) == 0)
			e = &s->secrets[i];
	if (e == NULL) {
		nv = realloc(s->secrets, (s->nsecrets + 1) * sizeof(*nv));
		if (nv == NULL)
			return;
		s->secrets = nv;
		e = &nv[s->nsecrets];
		memset(e, 0, sizeof(*e));
		e->session = strdup(session);
		e->secret = strdup(secret);
		if (e->session == NULL || e->secret == NULL) {
			free(e->session);
			free(e->secret);
			return;
		}
		s->nsecrets++;
	}
	if (ev == PX_SECRET_INJECTED)
		e->injected++;
	else if (ev == PX_SECRET_REFLECTED)
		e->reflected++;
	else
		e->misdirected++;
}

void
px_stats_canary(struct px_stats *s, const char *session, const char *name)
{
	PX_LOCKED(&stats_lock);
	struct secret_stats *nv, *e = NULL;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ncanaries && e == NULL; i++)
		if (strcmp(s->canaries[i].session, session) == 0 && strcmp(s->canaries[i].secret, name) == 0)
			e = &s->canaries[i];
	if (e == NULL) {
		if ((nv = realloc(s->canaries, (s->ncanaries + 1) * sizeof(*nv))) == NULL)
			return;
		s->canaries = nv;
		e = &nv[s->ncanaries];
		memset(e, 0, sizeof(*e));
		e->session = strdup(session);
		e->secret = strdup(name);
		if (e->session == NULL || e->secret == NULL) {
			free(e->session);
			free(e->secret);
			return;
		}
		s->ncanaries++;
	}
	e->misdirected++;
}

size_t
px_stats_ncanaries(const struct px_stats *s)
{
	PX_LOCKED(&stats_lock);
	return s ? s->ncanaries : 0;
}

const char *
px_stats_canary_at(const struct px_stats *s, size_t i, const char **session, uint64_t *count)
{
	PX_LOCKED(&stats_lock);
	*session = s->canaries[i].session;
	*count = s->canaries[i].misdirected;
	return s->canaries[i].secret;
}

size_t
px_stats_nsecrets(const struct px_stats *s)
{
	PX_LOCKED(&stats_lock);
	return s ? s->nsecrets : 0;
}

const char *
px_stats_secret_at(const struct px_stats *s, size_t i, const char **session, uint64_t *injected,
    uint64_t *misdirected, uint64_t *reflected)
{
	PX_LOCKED(&stats_lock);
	*session = s->secrets[i].session;
	*injected = s->secrets[i].injected;
	*misdirected = s->secrets[i].misdirected;
	*reflected = s->secrets[i].reflected;
	return s->secrets[i].secret;
}

static struct sess_stats *
sess_get(struct px_stats *s, const char *name)
{
	struct sess_stats *nv;
	size_t i;

	for (i = 0; i < s->nsess; i++)
		if (strcmp(s->sess[i].name, name) == 0)
			return &s->sess[i];
	nv = realloc(s->sess, (s->nsess + 1) * sizeof(*nv));
	if (nv == NULL)
		return NULL;
	s->sess = nv;
	memset(&nv[s->nsess], 0, sizeof(nv[0]));
	nv[s->nsess].name = strdup(name);
	if (nv[s->nsess].name == NULL)
		return NULL;
	return &nv[s->nsess++];
}

void
px_stats_conn_open(struct px_stats *s, const char *session)
{
	PX_LOCKED(&stats_lock);
	struct sess_stats *ss;

	if (s == NULL || (ss = sess_get(s, session)) == NULL)
		return;
	ss->open++;
	ss->total++;
}

void
px_stats_conn_close(struct px_stats *s, const char *session, uint64_t up, uint64_t down,
    double seconds, int tunnel)
{
	PX_LOCKED(&stats_lock);
	struct sess_stats *ss;
	size_t i;

	if (s == NULL || (ss = sess_get(s, session)) == NULL)
		return;
	if (ss->open > 0)
		ss->open--;
	ss->up += up;
	ss->down += down;
	if (!tunnel)
		return;
	for (i = 0; i < NBUCKETS; i++)
		if (seconds <= buckets[i])
			break;
	s->hist[i]++;
	s->hist_sum += seconds;
	s->hist_count++;
}

void
px_stats_decision(struct px_stats *s, const char *session, enum cf_reason reason,
    const struct cf_rule *rule)
{
	PX_LOCKED(&stats_lock);
	struct sess_stats *ss;
	char at[300];
	size_t i;

	if (s == NULL)
		return;
	ss = sess_get(s, session);
	if (ss != NULL && (unsigned)reason < NREASONS)
		ss->decisions[reason]++;
	if (rule == NULL)
		return;
	cf_rule_at(rule, at, sizeof(at));
	for (i = 0; i < s->nrules; i++) {
		if (strcmp(s->rules[i].at, at) == 0 && strcmp(s->rules[i].pattern, rule->text) == 0) {
			s->rules[i].hits++;
			return;
		}
	}
	{
		struct rule_stats *nv = realloc(s->rules, (s->nrules + 1) * sizeof(*nv));
		if (nv == NULL)
			return;
		s->rules = nv;
		nv[s->nrules].at = strdup(at);
		nv[s->nrules].pattern = strdup(rule->text);
		nv[s->nrules].type = strdup(rule->type == CF_RULE_ALLOW ? "allow" : "deny");
		nv[s->nrules].hits = 1;
		if (nv[s->nrules].at == NULL || nv[s->nrules].pattern == NULL || nv[s->nrules].type == NULL) {
			free(nv[s->nrules].at);
			free(nv[s->nrules].pattern);
			free(nv[s->nrules].type);
			return;
		}
		s->nrules++;
	}
}

void
px_stats_would(struct px_stats *s, const char *session, enum cf_reason would)
{
	PX_LOCKED(&stats_lock);
	struct sess_stats *ss;

	if (s == NULL)
		return;
	ss = sess_get(s, session);
	if (ss != NULL && (unsigned)would < NREASONS)
		ss->would[would]++;
}

void
px_stats_reload(struct px_stats *s, int ok)
{
	PX_LOCKED(&stats_lock);
	if (s == NULL)
		return;
	if (ok)
		s->reloads_ok++;
	else
		s->reloads_failed++;
}

void
px_stats_decider(struct px_stats *s, unsigned result, int cached, double seconds)
{
	PX_LOCKED(&stats_lock);
	size_t i;

	if (s == NULL || result >= PX_STATS_DECIDER_RESULTS)
		return;
	s->decider[result]++;
	if (cached) {
		s->decider_cached++;
		return;
	}
	for (i = 0; i < NDBUCKETS && seconds > dbuckets[i]; i++)
		;
	s->dhist[i]++;
	s->dhist_sum += seconds;
	s->dhist_count++;
}

void
px_stats_deciders(const struct px_stats *s, uint64_t *results, uint64_t *cached, uint64_t *hist,
    double *sum, uint64_t *count)
{
	PX_LOCKED(&stats_lock);
	size_t i;

	for (i = 0; i < PX_STATS_DECIDER_RESULTS; i++)
		results[i] = s ? s->decider[i] : 0;
	for (i = 0; i <= NDBUCKETS; i++)
		hist[i] = s ? s->dhist[i] : 0;
	*cached = s ? s->decider_cached : 0;
	*sum = s ? s->dhist_sum : 0;
	*count = s ? s->dhist_count : 0;
}

size_t
px_stats_decider_nbuckets(void)
{
	return NDBUCKETS;
}

double
px_stats_decider_le(size_t i)
{
	return i < NDBUCKETS ? dbuckets[i] : 0;
}

void
px_stats_reloads(const struct px_stats *s, uint64_t *ok, uint64_t *failed)
{
	PX_LOCKED(&stats_lock);
	*ok = s ? s->reloads_ok : 0;
	*failed = s ? s->reloads_failed : 0;
}

void
px_stats_session(const struct px_stats *s, const char *session, uint64_t *open,
    uint64_t *total, uint64_t *up, uint64_t *down)
{
	PX_LOCKED(&stats_lock);
	size_t i;

	*open = *total = *up = *down = 0;
	if (s == NULL)
		return;
	for (i = 0; i < s->nsess; i++) {
		if (strcmp(s->sess[i].name, session) == 0) {
			*open = s->sess[i].open;
			*total = s->sess[i].total;
			*up = s->sess[i].up;
			*down = s->sess[i].down;
			return;
		}
	}
}

size_t
px_stats_nsessions(const struct px_stats *s)
{
	PX_LOCKED(&stats_lock);
	return s ? s->nsess : 0;
}

const char *
px_stats_session_at(const struct px_stats *s, size_t i, uint64_t *open, uint64_t *total,
    uint64_t *up, uint64_t *down)
{
	PX_LOCKED(&stats_lock);
	*open = s->sess[i].open;
	*total = s->sess[i].total;
	*up = s->sess[i].up;
	*down = s->sess[i].down;
	return s->sess[i].name;
}

uint64_t
px_stats_decisions(const struct px_stats *s, size_t i, enum cf_reason reason)
{
	PX_LOCKED(&stats_lock);
	return (unsigned)reason < NREASONS ? s->sess[i].decisions[reason] : 0;
}

uint64_t
px_stats_woulds(const struct px_stats *s, size_t i, enum cf_reason would)
{
	PX_LOCKED(&stats_lock);
	return (unsigned)would < NREASONS ? s->sess[i].would[would] : 0;
}

size_t
px_stats_nrules(const struct px_stats *s)
{
	PX_LOCKED(&stats_lock);
	return s ? s->nrules : 0;
}

const char *
px_stats_rule_at(const struct px_stats *s, size_t i, const char **type, const char **pattern,
    uint64_t *hits)
{
	PX_LOCKED(&stats_lock);
	*type = s->rules[i].type;
	*pattern = s->rules[i].pattern;
	*hits = s->rules[i].hits;
	return s->rules[i].at;
}

size_t
px_stats_nbuckets(void)
{
	return NBUCKETS;
}

double
px_stats_bucket_le(size_t i)
{
	return buckets[i];
}

uint64_t
px_stats_bucket_count(const struct px_stats *s, size_t i)
{
	PX_LOCKED(&stats_lock);
	return s ? s->hist[i] : 0;
}

void
px_stats_tunnels(const struct px_stats *s, uint64_t *count, double *sum)
{
	PX_LOCKED(&stats_lock);
	*count = s ? s->hist_count : 0;
	*sum = s ? s->hist_sum : 0.0;
}
