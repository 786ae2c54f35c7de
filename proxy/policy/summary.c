/*
 * proxy/policy/summary.c: the refusals of one run (see summary.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/policy/summary.h"
#include "proxy/core/lock.h"

/* Shared by every worker (lock.h). */
static pthread_mutex_t tally_lock = PX_LOCK_INIT;

/* Distinct entries kept; a CMD that tries thousands of hosts must not grow
 * the engine without bound, and nobody reads a summary that long. */
#define PX_TALLY_MAX 256
/* Entries shown one per line in the summary. */
#define PX_TALLY_SHOWN 20

struct px_summary_entry {
	char *where, *reason, *allow;   /* allow may be NULL */
	unsigned long count;
};

struct px_summary {
	struct px_summary_entry *v;
	size_t n, cap;
	unsigned long others;   /* refusals not kept as an entry */
	unsigned long total;
};

struct px_summary *
px_summary_new(void)
{
	return calloc(1, sizeof(struct px_summary));
}

void
px_summary_free(struct px_summary *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->v[i].where);
		free(t->v[i].reason);
		free(t->v[i].allow);
	}
	free(t->v);
	free(t);
}

static int
same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

unsigned long
px_summary_add(struct px_summary *t, const char *where, const char *reason, const char *allow)
{
	PX_LOCKED(&tally_lock);
	struct px_summary_entry *e, *nv;
	size_t i, ncap;

	if (t == NULL)
		return 1;
	t->total++;
	for (i = 0; i < t->n; i++) {
		e = &t->v[i];
		if (same(e->where, where) && same(e->reason, reason) && same(e->allow, allow))
			return ++e->count;
	}
	if (t->n == PX_TALLY_MAX)
		goto other;
	if (t->n == t->cap) {
		ncap = t->cap ? t->cap * 2 : 16;
		nv = realloc(t->v, ncap * sizeof(*nv));
		if (nv == NULL)
			goto other;
		t->v = nv;
		t->cap = ncap;
	}
	e = &t->v[t->n];
	e->where = strdup(where);
	e->reason = strdup(reason);
	e->allow = allow != NULL ? strdup(allow) : NULL;
	if (e->where == NULL || e->reason == NULL || (allow != NULL && e->allow == NULL)) {
		free(e->where);
		free(e->reason);
		free(e->allow);
		goto other;
	}
	e->count = 1;
	t->n++;
	return 1;
other:
	t->others++;
	return 1;
}

void
px_summary_print(const struct px_summary *t, FILE *f, const char *prefix)
{
	PX_LOCKED(&tally_lock);
	px_summary_print_as(t, f, prefix, "refused");
}

void
px_summary_print_as(const struct px_summary *t, FILE *f, const char *prefix, const char *verb)
{
	PX_LOCKED(&tally_lock);
	size_t i, j, nallow = 0;

	if (t == NULL || t->total == 0)
		return;
	fprintf(f, "%s%s %lu request%s in this run:\n", prefix, verb, t->total,
	    t->total == 1 ? "" : "s");
	for (i = 0; i < t->n && i < PX_TALLY_SHOWN; i++)
		fprintf(f, "%s  %lux %s (%s)\n", prefix, t->v[i].count, t->v[i].where,
		    t->v[i].reason);
	if (t->n > PX_TALLY_SHOWN || t->others > 0) {
		unsigned long more = t->others;
		for (i = PX_TALLY_SHOWN; i < t->n; i++)
			more += t->v[i].count;
		fprintf(f, "%s  and %lu more\n", prefix, more);
	}
	for (i = 0; i < t->n; i++) {
		if (t->v[i].allow == NULL)
			continue;
		/* Each pattern once, in the order first refused. */
		for (j = 0; j < i; j++)
			if (t->v[j].allow != NULL && strcmp(t->v[j].allow, t->v[i].allow) == 0)
				break;
		if (j < i)
			continue;
		fprintf(f, "%s%s --allow '%s'", nallow == 0 ? prefix : "",
		    nallow == 0 ? "to allow them:" : "", t->v[i].allow);
		nallow++;
	}
	if (nallow > 0)
		fputc('\n', f);
	fflush(f);
}
