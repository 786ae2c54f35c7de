/*
 * proxy/policy/grants.c: runtime grants (see grants.h).  A plain array: an admin
 * answers a handful of questions, not thousands, and every lookup is one
 * request that the allowlist already refused.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf/grantfile.h"
#include "proxy/policy/grants.h"
#include "proxy/core/lock.h"

/* Shared by every worker (lock.h). */
static pthread_mutex_t grants_lock = PX_LOCK_INIT;

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
	PX_LOCKED(&grants_lock);
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
	PX_LOCKED(&grants_lock);
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
	PX_LOCKED(&grants_lock);
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
	PX_LOCKED(&grants_lock);
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
	/* A copy, this thread's own: the first worker may grow the table
	 * (an admin's answer) while another worker's caller still reads it.
	 * Expired grants are passed over, not dropped: only the first
	 * worker's loop (the admin's answers, /status) changes the table, so
	 * that what it walks there stays put. */
	static _Thread_local struct px_grant found;
	PX_LOCKED(&grants_lock);
	const struct px_grant *e = find(g, session, host, port);

	if (e == NULL || (e->until != 0 && e->until <= now))
		return NULL;
	found = *e;
	return &found;
}

int
px_grants_set_file(struct px_grants *g, const struct cf_grant_entry *v, size_t n, time_t now)
{
	PX_LOCKED(&grants_lock);
	size_t i, kept = 0;
	int rc;

	for (i = 0; i < g->n; i++)
		if (!g->v[i].from_file)
			g->v[kept++] = g->v[i];
	g->n = kept;
	for (i = 0; i < n; i++) {
		struct px_grant *e;

		rc = px_grants_add(g, v[i].session, v[i].host, v[i].port,
		    v[i].deny ? PX_GRANT_DENY : PX_GRANT_ALLOW, -1, now, 0);
		if (rc != 0)
			return rc;
		if ((e = find(g, v[i].session, v[i].host, v[i].port)) != NULL)
			e->from_file = 1;
	}
	return 0;
}

static void
iso(time_t t, char *buf, size_t size)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "?");
}

/* Write the grants of G in GRANTS_FILE syntax to F. */
static void
write_grants(struct px_grants *g, FILE *f, time_t now, size_t *saved, size_t *skipped)
{
	size_t i, k;
	char when[32], until[32];

	iso(now, when, sizeof(when));
	fprintf(f, "# postern grants_file, written by postern-proxy ctl grants --save at %s.\n"
	    "# Read at start and at every reload; a bad line refuses the reload.\n", when);
	for (i = 0; i < g->n; i++) {
		const struct px_grant *e = &g->v[i];
		int first = 1;

		/* One section per session, at its first grant. */
		for (k = 0; k < i; k++)
			if (strcmp(g->v[k].session, e->session) == 0)
				break;
		if (k < i)
			continue;
		for (k = i; k < g->n; k++) {
			const struct px_grant *o = &g->v[k];

			if (strcmp(o->session, e->session) != 0)
				continue;
			if (first)
				fprintf(f, "\n[session %s]\n", e->session);
			first = 0;
			iso(o->when, when, sizeof(when));
			if (o->until != 0) {
				/* Read back, a grant has no end: a timed one
				 * is said, not written. */
				iso(o->until, until, sizeof(until));
				fprintf(f, "# not saved: %s %s:%u (uid %ld, %s) ends at %s\n",
				    px_grant_kind_word(o->kind), o->host, o->port, o->uid, when, until);
				(*skipped)++;
				continue;
			}
			if (o->from_file)
				fprintf(f, "# %s %s:%u: from this file\n", px_grant_kind_word(o->kind), o->host,
				    o->port);
			else
				fprintf(f, "# %s %s:%u: by uid %ld at %s, no end\n", px_grant_kind_word(o->kind),
				    o->host, o->port, o->uid, when);
			fprintf(f, "%s = %s:%u\n", o->kind == PX_GRANT_DENY ? "deny_hosts" : "allow_hosts",
			    o->host, o->port);
			(*saved)++;
		}
	}
}

int
px_grants_save(struct px_grants *g, const char *path, time_t now, size_t *saved,
    size_t *skipped, char *why, size_t whysize)
{
	PX_LOCKED(&grants_lock);
	char tmp[4096];
	FILE *f = NULL;
	int fd, rc = 0;

	*saved = 0;
	*skipped = 0;
	px_grants_expire(g, now);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		snprintf(why, whysize, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	/* Born 0600 and new: never a moment where another uid may read or
	 * replace what is about to become the grants file. */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		rc = -errno;
		snprintf(why, whysize, "cannot create %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	write_grants(g, f, now, saved, skipped);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		rc = -errno;
		snprintf(why, whysize, "cannot write %s: %s", tmp, strerror(errno));
	}
	if (fclose(f) != 0 && rc == 0) {
		rc = -errno;
		snprintf(why, whysize, "cannot write %s: %s", tmp, strerror(errno));
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		rc = -errno;
		snprintf(why, whysize, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
	}
	if (rc != 0)
		(void)unlink(tmp);
	return rc;
}
