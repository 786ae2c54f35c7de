/*
 * tests/unit/conferr.h: the config tests' common check.  A case is a text
 * the reader must refuse, with one error that holds an expected phrase
 * (FILE:LINE: why).  Include after tap.h and conf/config.h.
 */
#ifndef POSTERN_TESTS_CONFERR_H
#define POSTERN_TESTS_CONFERR_H

#include <string.h>

struct err_case {
	const char *what;
	const char *text;
	const char *expect; /* substring of one error */
};

/* Nonzero when some error of D holds NEEDLE. */
static inline int
has_error(const struct cf_diag *d, const char *needle)
{
	size_t i;

	for (i = 0; i < d->nerrors; i++)
		if (strstr(d->errors[i], needle) != NULL)
			return 1;
	return 0;
}

/* One TAP line for each of the N cases: the text, read as "t.ini", is
 * refused with the expected error. */
static inline void
expect_refused(const struct err_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct cf_diag d;
		struct cf_config *c;

		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", cases[i].text, strlen(cases[i].text), NULL, &d);
		tap_ok(c == NULL && has_error(&d, cases[i].expect), "%s: \"%s\"%s%s", cases[i].what,
		    cases[i].expect, d.nerrors ? " got: " : " no error", d.nerrors ? d.errors[0] : "");
		cf_config_free(c);
		cf_diag_free(&d);
	}
}

#endif
