/*
 * tests/unit/tap.h: a tiny TAP producer for the unit tests (the idea of
 * bubblewrap's tests/test-utils.c).  Each check prints "ok N - what" or
 * "not ok N - what"; tap_done() prints the plan and returns the exit code.
 * tap_cmp_int() and tap_cmp_str() are Test::More's cmp_ok() and is(): on
 * a failure they also print what was got and what was wanted.
 */
#ifndef POSTERN_TESTS_TAP_H
#define POSTERN_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

/* One "ok N - what" line (and the count of failures). */
__attribute__((format(printf, 2, 0), unused)) static void
tap__vreport(int cond, const char *fmt, va_list ap)
{
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
}

__attribute__((format(printf, 2, 3), unused)) static int
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap__vreport(cond, fmt, ap);
	va_end(ap);
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2), unused)) static void
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/*
 * Check GOT OP WANT, OP one of == != < <= > >= (an unknown OP fails), and
 * print both numbers when it does not hold.  Each argument is evaluated
 * once.
 */
__attribute__((format(printf, 4, 5), unused)) static int
tap_cmp_int(long long got, const char *op, long long want, const char *fmt, ...)
{
	va_list ap;
	int cond;

	if (strcmp(op, "==") == 0)
		cond = got == want;
	else if (strcmp(op, "!=") == 0)
		cond = got != want;
	else if (strcmp(op, "<") == 0)
		cond = got < want;
	else if (strcmp(op, "<=") == 0)
		cond = got <= want;
	else if (strcmp(op, ">") == 0)
		cond = got > want;
	else if (strcmp(op, ">=") == 0)
		cond = got >= want;
	else
		cond = 0;
	va_start(ap, fmt);
	tap__vreport(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#     got: %lld\n#     expected: %s %lld\n", got, op, want);
	fflush(stdout);
	return cond;
}

/* Check that GOT is the string WANT (NULL only equals NULL), and print
 * both when it is not. */
__attribute__((format(printf, 3, 4), unused)) static int
tap_cmp_str(const char *got, const char *want, const char *fmt, ...)
{
	va_list ap;
	int cond = got == NULL || want == NULL ? got == want : strcmp(got, want) == 0;

	va_start(ap, fmt);
	tap__vreport(cond, fmt, ap);
	va_end(ap);
	if (!cond) {
		if (got != NULL)
			printf("#     got: '%s'\n", got);
		else
			printf("#     got: NULL\n");
		if (want != NULL)
			printf("#     expected: '%s'\n", want);
		else
			printf("#     expected: NULL\n");
	}
	fflush(stdout);
	return cond;
}

__attribute__((unused)) static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
