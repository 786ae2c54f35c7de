/*
 * proxy/grants.c: runtime grants (see grants.h).  A plain array: an admin
 * answers a handful of questions, not thousands, and every lookup is one
 * request that the allowlist already refused.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/grants.h"

struct px_grants {
	struct px_grant *v;
	size_t n, cap;
};

struct px_grants *
px_grants_new(void)
{
	return calloc(1, sizeof(struct px_grants));
}

void
px_grants_free(struct px_grants *g)
{
	if (g == NULL)
		return;
	free(g->v);
	free(g);
}

const char *
px_grant_kind_word(enum px_grant_kind k)
{
	return k == PX_GRANT_DENY ? "deny" : "allow";
}

size_t
px_grants_expire(struct px_grants *g, time_t now)
{
	size_t i, kept = 0;

	for (i = 0; i < g->n; i++)
		if (g->v[i].until == 0 || g->v[i].until > now)
			g->v[kept++] = g->v[i];
	g->n = kept;
	return g->n;
}

const struct px_grant *
px_grants_at(const struct px_grants *g, size_t i)
{
	return i < g->n ? &g->v[i] : NULL;
}

static struct px_grant *
find(struct px_grants *g, const char *session, const char *host, uint16_t port)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->v[i].port == port && strcmp(g->v[i].session, session) == 0 &&
		    strcmp(g->v[i].host, host) == 0)
			return &g->v[i];
	return NULL;
}

int
px_grants_add(struct px_grants *g, const char *session, const char *host, uint16_t port,
    enum px_grant_kind kind, long uid, time_t when, time_t until)
{
	struct px_grant *e;

	if (strlen(session) >= sizeof(e->session) || strlen(host) >= sizeof(e->host))
		return -EINVAL;
	e = find(g, session, host, port);
	if (e == NULL) {
		if (g->n == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 8;
			struct px_grant *nv = realloc(g->v, cap * sizeof(*nv));

			if (nv == NULL)
				return -ENOMEM;
			g->v = nv;
			g->cap = cap;
		}
		e = &g->v[g->n++];
		memset(e, 0, sizeof(*e));
		memcpy(e->session, session, strlen(session) + 1);
		memcpy(e->host, host, strlen(host) + 1);
		e->port = port;
	}
	e->kind = kind;
	e->uid = uid;
	e->when = when;
	e->until = until;
	return 0;
}

const struct px_grant *
px_grants_find(struct px_grants *g, const char *session, const char *host, uint16_t port,
    time_t now)
{
	px_grants_expire(g, now);
	return find(g, session, host, port);
}
