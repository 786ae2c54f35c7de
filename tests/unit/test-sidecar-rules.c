/*
 * tests/unit/test-sidecar-rules.c: sc_rules_check() on made-up rule tables, in the
 * kernel's evaluation order (libevent tinytest's case-table idea).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#include "sidecar/rules.h"
#include "tests/unit/tap.h"

#define U 65532u

/* Rule builders: priority, action, table, uid range (0,0 = none), flags,
 * selector. */
#define R(p, a, t) { AF_INET, p, t, a, 0, 0, 0, 0, 0 }
#define RU(p, a, t, s, e, f) { AF_INET, p, t, a, f, 1, s, e, 0 }
#define RS(p, a, t) { AF_INET, p, t, a, 0, 0, 0, 0, 1 }

#define LOCAL R(0, FR_ACT_TO_TBL, RT_TABLE_LOCAL)
#define ALLOW RU(SC_RULE_PRIO_ALLOW, FR_ACT_TO_TBL, RT_TABLE_MAIN, U, U, 0)
#define DENY R(SC_RULE_PRIO_DENY, FR_ACT_UNREACHABLE, 0)
#define MAIN R(32766, FR_ACT_TO_TBL, RT_TABLE_MAIN)
#define DEFAULT R(32767, FR_ACT_TO_TBL, RT_TABLE_DEFAULT)

struct tcase {
	const char *name;
	int want;          /* 0 or -EPERM */
	const char *why;   /* substring of the reason, for failures */
	size_t n;
	struct sc_rule r[8];
};

static const struct tcase cases[] = {
	{ "the usual table", 0, NULL, 5, { LOCAL, ALLOW, DENY, MAIN, DEFAULT } },
	{ "no rules at all", -EPERM, "unreachable rule at priority 101 is missing", 0, { LOCAL } },
	{ "unreachable rule missing", -EPERM, "is missing", 4, { LOCAL, ALLOW, MAIN, DEFAULT } },
	{ "allow rule missing", -EPERM, "for uid 65532 to the main table", 4,
	  { LOCAL, DENY, MAIN, DEFAULT } },
	{ "allow rule for another uid", -EPERM, "for uid 65532", 5,
	  { LOCAL, RU(100, FR_ACT_TO_TBL, RT_TABLE_MAIN, 1000, 1000, 0), DENY, MAIN, DEFAULT } },
	{ "allow rule for a uid range", -EPERM, "for uid 65532", 5,
	  { LOCAL, RU(100, FR_ACT_TO_TBL, RT_TABLE_MAIN, U, U + 1, 0), DENY, MAIN, DEFAULT } },
	{ "allow rule inverted", -EPERM, "for uid 65532", 5,
	  { LOCAL, RU(100, FR_ACT_TO_TBL, RT_TABLE_MAIN, U, U, FIB_RULE_INVERT), DENY, MAIN,
	    DEFAULT } },
	{ "allow-all at priority 50", -EPERM, "a rule at priority 50 (action 1, table 254)", 6,
	  { LOCAL, R(50, FR_ACT_TO_TBL, RT_TABLE_MAIN), ALLOW, DENY, MAIN, DEFAULT } },
	{ "allow-all at priority 100 before ours", -EPERM, "a rule at priority 100 ", 6,
	  { LOCAL, R(100, FR_ACT_TO_TBL, RT_TABLE_MAIN), ALLOW, DENY, MAIN, DEFAULT } },
	{ "allow-all at priority 101 before ours", -EPERM, "a rule at priority 101 ", 6,
	  { LOCAL, ALLOW, R(101, FR_ACT_TO_TBL, RT_TABLE_MAIN), DENY, MAIN, DEFAULT } },
	{ "allow-all at priority 101 after ours", 0, NULL, 6,
	  { LOCAL, ALLOW, DENY, R(101, FR_ACT_TO_TBL, RT_TABLE_MAIN), MAIN, DEFAULT } },
	{ "a selective lookup of another table first", -EPERM, "table 200", 6,
	  { LOCAL, RS(10, FR_ACT_TO_TBL, 200), ALLOW, DENY, MAIN, DEFAULT } },
	{ "goto past the lock-down", -EPERM, "a rule at priority 60 (action 2", 6,
	  { LOCAL, R(60, FR_ACT_GOTO, 0), ALLOW, DENY, MAIN, DEFAULT } },
	{ "an unknown action first", -EPERM, "action 99", 6,
	  { LOCAL, R(60, 99, 0), ALLOW, DENY, MAIN, DEFAULT } },
	{ "a second local lookup is harmless", 0, NULL, 6,
	  { LOCAL, R(5, FR_ACT_TO_TBL, RT_TABLE_LOCAL), ALLOW, DENY, MAIN, DEFAULT } },
	{ "refusing rules first are harmless", 0, NULL, 8,
	  { LOCAL, RS(10, FR_ACT_BLACKHOLE, 0), RS(11, FR_ACT_PROHIBIT, 0),
	    RS(12, FR_ACT_UNREACHABLE, 0), R(13, FR_ACT_NOP, 0), ALLOW, DENY, MAIN } },
	{ "a proxy-uid-only lookup first is harmless", 0, NULL, 6,
	  { LOCAL, RU(20, FR_ACT_TO_TBL, 200, U, U, 0), ALLOW, DENY, MAIN, DEFAULT } },
	{ "a wider uid range first", -EPERM, "priority 20", 6,
	  { LOCAL, RU(20, FR_ACT_TO_TBL, 200, U - 1, U, 0), ALLOW, DENY, MAIN, DEFAULT } },
	{ "an inverted proxy uid range first", -EPERM, "priority 20", 6,
	  { LOCAL, RU(20, FR_ACT_TO_TBL, 200, U, U, FIB_RULE_INVERT), ALLOW, DENY, MAIN,
	    DEFAULT } },
	{ "unreachable before allow", -EPERM, "comes before the proxy uid's rule", 5,
	  { LOCAL, DENY, ALLOW, MAIN, DEFAULT } },
	{ "duplicated unreachable rule", -EPERM, "duplicated", 6,
	  { LOCAL, ALLOW, DENY, DENY, MAIN, DEFAULT } },
	{ "duplicated allow rule", -EPERM, "duplicated", 6,
	  { LOCAL, ALLOW, ALLOW, DENY, MAIN, DEFAULT } },
	{ "unreachable rule with a selector is not ours", -EPERM, "is missing", 5,
	  { LOCAL, ALLOW, RS(101, FR_ACT_UNREACHABLE, 0), MAIN, DEFAULT } },
	{ "unreachable rule at another priority is not ours", -EPERM, "is missing", 5,
	  { LOCAL, ALLOW, R(102, FR_ACT_UNREACHABLE, 0), MAIN, DEFAULT } },
	{ "an allow rule with a selector is not ours", -EPERM, "for uid 65532", 5,
	  { LOCAL, { AF_INET, 100, RT_TABLE_MAIN, FR_ACT_TO_TBL, 0, 1, U, U, 1 }, DENY, MAIN,
	    DEFAULT } },
};

int
main(void)
{
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];
		int got = sc_rules_check(AF_INET, c->r, c->n, U, why, sizeof(why));

		tap_ok(got == c->want, "%s: %s", c->name, got == 0 ? "holds" : why);
		if (c->why != NULL)
			tap_ok(strstr(why, c->why) != NULL, "%s: says '%s'", c->name, c->why);
		else
			tap_ok(why[0] == '\0', "%s: no reason given", c->name);
	}
	/* The family named in the reason is the one asked about. */
	sc_rules_check(AF_INET6, NULL, 0, U, why, sizeof(why));
	tap_ok(strncmp(why, "IPv6: ", 6) == 0, "an empty IPv6 table is reported as IPv6: %s", why);
	/* A short buffer truncates, never overflows. */
	sc_rules_check(AF_INET, NULL, 0, U, why, 8);
	tap_ok(strlen(why) == 7, "the reason is truncated to the buffer");
	return tap_done();
}
