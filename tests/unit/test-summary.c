/*
 * tests/unit/test-summary.c: proxy/policy/summary.c, the refusals of one run counted
 * for the summary.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/policy/summary.h"
#include "tests/unit/tap.h"

/* The summary of T as one string (the caller frees it). */
static char *
summary(const struct px_summary *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	px_summary_print(t, f, "p: ");
	fclose(f);
	return buf;
}

int
main(void)
{
	struct px_summary *t = px_summary_new();
	char where[32], *s;
	unsigned long n = 0;
	int i;

	tap_ok(t != NULL, "new");
	s = summary(t);
	tap_ok(s != NULL && s[0] == '\0', "nothing refused: no summary at all");
	free(s);
	tap_ok(px_summary_add(t, "a.test:443", "host_not_allowed", "a.test") == 1, "first: tell it");
	tap_ok(px_summary_add(t, "a.test:443", "host_not_allowed", "a.test") == 2, "repeat: counted");
	tap_ok(px_summary_add(t, "a.test:443", "port_not_allowed", "a.test") == 1,
	    "another reason is another entry");
	tap_ok(px_summary_add(t, "a.test:80", "host_not_allowed", "a.test") == 1,
	    "another port is another entry");
	tap_ok(px_summary_add(t, "b.test:443", "sni_mismatch", NULL) == 1, "no --allow: an entry too");
	tap_ok(px_summary_add(t, "b.test:443", "sni_mismatch", NULL) == 2, "and its repeat");
	s = summary(t);
	tap_ok(s != NULL && strcmp(s,
	    "p: refused 6 requests in this run:\n"
	    "p:   2x a.test:443 (host_not_allowed)\n"
	    "p:   1x a.test:443 (port_not_allowed)\n"
	    "p:   1x a.test:80 (host_not_allowed)\n"
	    "p:   2x b.test:443 (sni_mismatch)\n"
	    "p: to allow them: --allow 'a.test'\n") == 0,
	    "summary: counts, then each --allow once (%s)", s ? s : "NULL");
	free(s);
	px_summary_free(t);

	/* Bounded: beyond what it keeps, refusals are still told and summed. */
	t = px_summary_new();
	for (i = 0; i < 300; i++) {
		snprintf(where, sizeof(where), "h%d.test:443", i);
		n += px_summary_add(t, where, "host_not_allowed", NULL) == 1;
	}
	tap_ok(n == 300, "300 distinct refusals are all told (%lu)", n);
	s = summary(t);
	tap_ok(s != NULL && strstr(s, "refused 300 requests") != NULL &&
	    strstr(s, "and 280 more\n") != NULL && strstr(s, "h20.test") == NULL,
	    "the summary shows the first 20 and how many more");
	free(s);
	px_summary_free(t);
	px_summary_free(NULL);
	tap_ok(px_summary_add(NULL, "x:1", "r", NULL) == 1, "a NULL tally tells everything");
	return tap_done();
}
