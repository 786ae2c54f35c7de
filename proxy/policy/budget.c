/*
 * proxy/policy/budget.c: the use of per-host budgets (see budget.h).
 *
 * A byte window is fixed, not sliding: it starts at the first byte sent
 * under it and resets UP_WINDOW seconds later, so that "when it frees up"
 * has one answer for the refusal's Retry-After and for /status.  The
 * request rate is a token bucket of RPS tokens, filled at RPS a second:
 * a burst of RPS requests passes at once, then RPS a second.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/config.h"
#include "proxy/policy/budget.h"
#include "proxy/core/lock.h"

/* Budgets are global, not per worker: one session's rule is one budget
 * however its connections spread (lock.h). */
static pthread_mutex_t budget_lock = PX_LOCK_INIT;

struct px_budgets {
	struct px_budget *head, **tail;
};

const char *
px_budget_kind_name(enum px_budget_kind k)
{
	switch (k) {
	case PX_BUDGET_UP: return "up";
	case PX_BUDGET_RPS: return "rps";
	case PX_BUDGET_CONNS: return "conns";
	default: return "?";
	}
}

struct px_budgets *
px_budgets_new(void)
{
	struct px_budgets *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->tail = &t->head;
	return t;
}

static void
entry_free(struct px_budget *b)
{
	free(b->session);
	free(b->key);
	free(b->rule);
	free(b);
}

void
px_budgets_free(struct px_budgets *t)
{
	PX_LOCKED(&budget_lock);
	struct px_budget *b, *next;

	if (t == NULL)
		return;
	for (b = t->head; b != NULL; b = next) {
		next = b->next;
		entry_free(b);
	}
	free(t);
}

uint64_t
px_budget_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int
is_budget_flag(const char *tok, size_t tl)
{
	return (tl >= 3 && memcmp(tok, "up=", 3) == 0) || (tl >= 4 && memcmp(tok, "rps=", 4) == 0) ||
	    (tl >= 6 && memcmp(tok, "conns=", 6) == 0);
}

/* R's text without its budget flags, one blank between words: the key. */
static char *
rule_key(const struct cf_rule *r)
{
	const char *p = r->text;
	char *k = malloc(strlen(r->text) + 1), *o = k;

	if (k == NULL)
		return NULL;
	while (*p != '\0') {
		const char *tok;
		size_t tl;

		while (*p == ' ' || *p == '\t')
			p++;
		tok = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		tl = (size_t)(p - tok);
		if (tl == 0 || is_budget_flag(tok, tl))
			continue;
		if (o != k)
			*o++ = ' ';
		memcpy(o, tok, tl);
		o += tl;
	}
	*o = '\0';
	return k;
}

static struct px_budget *
find(const struct px_budgets *t, const char *session, const char *key)
{
	struct px_budget *b;

	for (b = t->head; b != NULL; b = b->next)
		if (strcmp(b->session, session) == 0 && strcmp(b->key, key) == 0)
			return b;
	return NULL;
}

/* Rule R's limits (a snapshot's) on B's use so far: a lower rps cuts
 * the bucket down to it. */
static void
limits_take(struct px_budget *b, const struct cf_rule *r)
{
	b->up_max = r->up_max;
	b->up_window = r->up_window;
	b->rps = r->rps;
	b->conns = r->conns;
	if (b->tokens > b->rps)
		b->tokens = b->rps;
}

struct px_budget *
px_budget_get(struct px_budgets *t, const char *session, const struct cf_rule *r)
{
	PX_LOCKED(&budget_lock);
	struct px_budget *b;
	char *key = rule_key(r), *text;

	if (key == NULL)
		return NULL;
	b = find(t, session, key);
	if (b == NULL) {
		b = calloc(1, sizeof(*b));
		if (b == NULL || (b->session = strdup(session)) == NULL) {
			free(b);
			free(key);
			return NULL;
		}
		b->key = key;
		key = NULL;
		b->tokens = r->rps;
		b->tokens_ms = px_budget_now_ms();
		*t->tail = b;
		t->tail = &b->next;
	}
	free(key);
	if (b->rule == NULL || strcmp(b->rule, r->text) != 0) {
		text = strdup(r->text);
		if (text == NULL)
			return NULL;
		free(b->rule);
		b->rule = text;
	}
	limits_take(b, r);
	return b;
}

/* A new window once the last one is over. */
static void
window_roll(struct px_budget *b, uint64_t now_ms)
{
	if (b->up_used > 0 && now_ms - b->window_start_ms >= (uint64_t)b->up_window * 1000)
		b->up_used = 0;
}

static void
bucket_fill(struct px_budget *b, uint64_t now_ms)
{
	if (now_ms > b->tokens_ms) {
		b->tokens += (double)(now_ms - b->tokens_ms) * b->rps / 1000.0;
		if (b->tokens > b->rps)
			b->tokens = b->rps;
	}
	b->tokens_ms = now_ms;
}

unsigned
px_budget_up_resets_in(const struct px_budget *b, uint64_t now_ms)
{
	PX_LOCKED(&budget_lock);
	uint64_t end = b->window_start_ms + (uint64_t)b->up_window * 1000;

	if (b->up_max == 0 || b->up_used == 0 || now_ms >= end)
		return 0;
	return (unsigned)((end - now_ms + 999) / 1000);
}

/* The checks of px_budget_admit(): CONN also checks conns=. */
static int
admit(struct px_budget *b, uint64_t now_ms, int conn, enum px_budget_kind *kind, unsigned *retry_s)
{
	if (conn && b->conns != 0 && b->open >= b->conns) {
		*kind = PX_BUDGET_CONNS;
		*retry_s = 0;
		goto refused;
	}
	if (b->up_max != 0) {
		window_roll(b, now_ms);
		if (b->up_used >= b->up_max) {
			*kind = PX_BUDGET_UP;
			*retry_s = px_budget_up_resets_in(b, now_ms);
			goto refused;
		}
	}
	if (b->rps != 0) {
		bucket_fill(b, now_ms);
		if (b->tokens < 1.0) {
			*kind = PX_BUDGET_RPS;
			/* RFC 9110 §10.2.3: whole seconds, and a token is due
			 * within one. */
			*retry_s = 1;
			goto refused;
		}
		b->tokens -= 1.0;
	}
	b->requests++;
	return 0;
refused:
	b->exceeded[*kind]++;
	return -1;
}

int
px_budget_admit(struct px_budget *b, uint64_t now_ms, int conn, enum px_budget_kind *kind,
    unsigned *retry_s)
{
	PX_LOCKED(&budget_lock);
	if (admit(b, now_ms, conn, kind, retry_s) != 0)
		return -1;
	if (conn)
		b->open++;
	b->held++;
	return 0;
}

int
px_budget_admit_stream(struct px_budget *b, uint64_t now_ms, enum px_budget_kind *kind,
    unsigned *retry_s)
{
	PX_LOCKED(&budget_lock);
	return admit(b, now_ms, 0, kind, retry_s);
}

void
px_budget_release(struct px_budget *b, int conn)
{
	PX_LOCKED(&budget_lock);
	if (b == NULL)
		return;
	if (conn && b->open > 0)
		b->open--;
	if (b->held > 0)
		b->held--;
}

uint64_t
px_budget_up_left(struct px_budget *b, uint64_t now_ms)
{
	PX_LOCKED(&budget_lock);
	if (b->up_max == 0)
		return UINT64_MAX;
	window_roll(b, now_ms);
	return b->up_used >= b->up_max ? 0 : b->up_max - b->up_used;
}

void
px_budget_up_take(struct px_budget *b, uint64_t now_ms, uint64_t n)
{
	PX_LOCKED(&budget_lock);
	if (b->up_max == 0 || n == 0)
		return;
	window_roll(b, now_ms);
	if (b->up_used == 0)
		b->window_start_ms = now_ms;
	b->up_used += n;
}

void
px_budget_up_exceeded(struct px_budget *b)
{
	PX_LOCKED(&budget_lock);
	b->exceeded[PX_BUDGET_UP]++;
}

/* The budgeted rule of CFG's session B->session keyed as B, or NULL. */
static const struct cf_rule *
rule_now(const struct px_budget *b, const struct cf_config *cfg, int *oom)
{
	const struct cf_session *s = cf_config_find_session(cfg, b->session);
	size_t i;

	if (s == NULL)
		return NULL;
	for (i = 0; i < s->nallow; i++) {
		char *k;
		int same;

		if (!cf_rule_has_budget(s->allow[i]))
			continue;
		if ((k = rule_key(s->allow[i])) == NULL) {
			*oom = 1;
			return NULL;
		}
		same = strcmp(k, b->key) == 0;
		free(k);
		if (same)
			return s->allow[i];
	}
	return NULL;
}

void
px_budgets_reload(struct px_budgets *t, const struct cf_config *cfg)
{
	PX_LOCKED(&budget_lock);
	struct px_budget **pp = &t->head, *b;

	while ((b = *pp) != NULL) {
		int oom = 0;
		const struct cf_rule *r = rule_now(b, cfg, &oom);

		if (r != NULL) {
			limits_take(b, r);
		} else if (b->held == 0 && !oom) {
			*pp = b->next;
			entry_free(b);
			continue;
		}
		pp = &b->next;
	}
	/* The tail is the last entry's next, or the head when none is left. */
	t->tail = &t->head;
	while (*t->tail != NULL)
		t->tail = &(*t->tail)->next;
}

const struct px_budget *
px_budget_find(const struct px_budgets *t, const char *session, const struct cf_rule *r)
{
	PX_LOCKED(&budget_lock);
	char *key = rule_key(r);
	const struct px_budget *b;

	if (key == NULL)
		return NULL;
	b = find(t, session, key);
	free(key);
	return b;
}

uint64_t
px_budget_up_used(const struct px_budget *b, uint64_t now_ms)
{
	PX_LOCKED(&budget_lock);
	if (b->up_used == 0 || now_ms - b->window_start_ms >= (uint64_t)b->up_window * 1000)
		return 0;
	return b->up_used;
}

double
px_budget_tokens(const struct px_budget *b, uint64_t now_ms)
{
	PX_LOCKED(&budget_lock);
	double t = b->tokens;

	if (now_ms > b->tokens_ms)
		t += (double)(now_ms - b->tokens_ms) * b->rps / 1000.0;
	return t > b->rps ? b->rps : t;
}

const struct px_budget *
px_budgets_first(const struct px_budgets *t)
{
	PX_LOCKED(&budget_lock);
	return t->head;
}
