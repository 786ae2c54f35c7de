/*
 * tests/unit/test-budget.c: the use of per-host budgets (proxy/policy/budget):
 * the fixed byte window, the rps token bucket, conns= holds, the key that
 * survives a reload (session and rule text less its budget flags) and
 * what a reload keeps and forgets.  Time is given, not read.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "conf/config.h"
#include "proxy/policy/budget.h"
#include "tests/unit/tap.h"

static const char conf1[] =
    "[proxy]\nlisten = unix:/nonexistent/p.sock\n"
    "[defaults]\n"
    "allow_hosts = a.test up=1k/10s rps=2 conns=1\n"
    "allow_hosts = b.test rps=1\n"
    "[session s2]\nlisten = unix:/nonexistent/s2.sock\n";
/* a.test keeps its text less the budgets (new limits), b.test is gone. */
static const char conf2[] =
    "[proxy]\nlisten = unix:/nonexistent/p.sock\n"
    "[defaults]\n"
    "allow_hosts = a.test  up=4k/10s rps=2 conns=1\n"
    "[session s2]\nlisten = unix:/nonexistent/s2.sock\n";

static struct cf_config *
load(const char *text)
{
	struct cf_diag diag;
	struct cf_config *c;

	memset(&diag, 0, sizeof(diag));
	c = cf_config_parse("t.ini", text, strlen(text), NULL, &diag);
	tap_ok(c != NULL, "config parses (%s)", diag.nerrors ? diag.errors[0] : "ok");
	return c;
}

static const struct cf_rule *
rule_of(const struct cf_config *c, const char *session, const char *host)
{
	const struct cf_session *s = cf_config_find_session(c, session);
	size_t i;

	for (i = 0; s != NULL && i < s->nallow; i++)
		if (strcmp(s->allow[i]->name, host) == 0)
			return s->allow[i];
	return NULL;
}

int
main(void)
{
	struct cf_config *c1 = load(conf1), *c2;
	struct px_budgets *t = px_budgets_new();
	struct px_budget *a, *a2, *b, *other;
	enum px_budget_kind k = PX_BUDGET_NKINDS;
	unsigned retry = 0;
	uint64_t now = px_budget_now_ms() + 1000;
	const struct px_budget *e;
	int n;

	if (c1 == NULL || t == NULL)
		return tap_done();
	a = px_budget_get(t, "default", rule_of(c1, "default", "a.test"));
	b = px_budget_get(t, "default", rule_of(c1, "default", "b.test"));
	other = px_budget_get(t, "s2", rule_of(c1, "s2", "a.test"));
	tap_ok(a != NULL && b != NULL && other != NULL && a != other && a != b,
	    "one entry per session and rule: a [defaults] rule counts per session");
	tap_ok(px_budget_get(t, "default", rule_of(c1, "default", "a.test")) == a,
	    "the same session and rule find the same entry");

	/* conns=1: one held, the next refused, free again once released. */
	tap_ok(px_budget_admit(a, now, 1, &k, &retry) == 0 && a->open == 1, "the first connection is held");
	tap_ok(px_budget_admit(a, now, 1, &k, &retry) != 0 && k == PX_BUDGET_CONNS && retry == 0 &&
	    a->exceeded[PX_BUDGET_CONNS] == 1, "conns=1: a second is refused (kind conns, no Retry-After)");
	tap_ok(px_budget_admit(other, now, 1, &k, &retry) == 0,
	    "another session's entry is not touched by this one's use");
	px_budget_release(a, 1);
	tap_ok(a->open == 0 && a->held == 0, "released, nothing is held");

	/* rps=2: a burst of two, then a token a half-second. */
	now += 5000;
	tap_ok(px_budget_admit_stream(a, now, &k, &retry) == 0 &&
	    px_budget_admit_stream(a, now, &k, &retry) == 0 &&
	    px_budget_admit_stream(a, now, &k, &retry) != 0 && k == PX_BUDGET_RPS && retry == 1,
	    "rps=2: a burst of two, the third in the same instant refused, Retry-After 1");
	tap_ok(px_budget_admit_stream(a, now + 499, &k, &retry) != 0 &&
	    px_budget_admit_stream(a, now + 501, &k, &retry) == 0, "a token comes back after half a second");
	tap_ok(px_budget_admit_stream(b, now, &k, &retry) == 0 &&
	    px_budget_admit_stream(b, now + 10, &k, &retry) != 0, "rps=1 on another rule is its own");

	/* up=1k/10s: a fixed window from its first byte. */
	now += 10000;
	tap_ok(px_budget_up_left(a, now) == 1024, "the whole 1k is left");
	px_budget_up_take(a, now, 1000);
	tap_ok(px_budget_up_left(a, now + 1) == 24 && px_budget_up_resets_in(a, now + 1) == 10,
	    "1000 taken: 24 left, the window resets in 10 s");
	px_budget_up_take(a, now + 2000, 24);
	tap_ok(px_budget_up_left(a, now + 2000) == 0 && px_budget_admit(a, now + 2000, 1, &k, &retry) != 0 &&
	    k == PX_BUDGET_UP && retry == 8, "spent: a new connection is refused (kind up, Retry-After 8)");
	tap_ok(px_budget_up_used(a, now + 9999) == 1024 && px_budget_up_used(a, now + 10000) == 0 &&
	    px_budget_up_left(a, now + 10000) == 1024, "the window resets 10 s after its first byte");
	px_budget_up_take(a, now + 10000, 1024);

	/* A reload: the text less the budgets is the key; the new limits
	 * apply to the use so far; a rule gone and unheld is forgotten. */
	tap_ok(px_budget_admit(b, now + 20000, 1, &k, &retry) == 0, "b.test is held across the reload");
	c2 = load(conf2);
	if (c2 == NULL)
		return tap_done();
	px_budgets_reload(t, c2);
	tap_ok(a->up_max == 4096 && a->up_used == 1024 && px_budget_up_left(a, now + 10001) == 3072,
	    "a reload that raises up= keeps the use: 3072 left of the new 4k");
	a2 = px_budget_get(t, "default", rule_of(c2, "default", "a.test"));
	tap_ok(a2 == a, "the rule with other blanks and limits is the same entry");
	for (n = 0, e = px_budgets_first(t); e != NULL; e = e->next)
		n++;
	tap_ok(n == 3, "b.test, gone but held, is kept (%d entries)", n);
	px_budget_release(b, 1);
	px_budgets_reload(t, c2);
	for (n = 0, e = px_budgets_first(t); e != NULL; e = e->next)
		n += e != b;
	tap_ok(n == 2 && px_budget_find(t, "default", rule_of(c1, "default", "b.test")) == NULL,
	    "once given back, a removed rule's use is forgotten");
	tap_ok(px_budget_find(t, "s2", rule_of(c2, "s2", "a.test")) == other, "the other session's stays");

	px_budgets_free(t);
	px_budgets_free(NULL);
	cf_config_free(c1);
	cf_config_free(c2);
	return tap_done();
}
