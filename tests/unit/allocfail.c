/*
 * tests/unit/allocfail.c: the allocation counter of the unit tests (see
 * allocfail.h).  The linker sends each wrapped call here (__wrap_X) and
 * __real_X is libc's (or the sanitizer's) own.
 */
#include "config.h"

#include <execinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/allocfail.h"

void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
char *__real_strdup(const char *);
char *__real_strndup(const char *, size_t);
int __real_vasprintf(char **, const char *, va_list);

void *__wrap_malloc(size_t);
void *__wrap_calloc(size_t, size_t);
void *__wrap_realloc(void *, size_t);
char *__wrap_strdup(const char *);
char *__wrap_strndup(const char *, size_t);
int __wrap_asprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));
int __wrap_vasprintf(char **, const char *, va_list) __attribute__((format(printf, 2, 0)));

static unsigned long fail_at, counted;
static int hit, trace = -1;

void
allocfail_set(unsigned long n)
{
	fail_at = n;
	counted = 0;
	hit = 0;
}

void
allocfail_off(void)
{
	fail_at = 0;
}

unsigned long
allocfail_count(void)
{
	return counted;
}

int
allocfail_hit(void)
{
	return hit;
}

/* Count one allocation; nonzero when it is the one to fail. */
static int
fails(void)
{
	counted++;
	if (fail_at != 0 && counted == fail_at) {
		hit = 1;
		if (trace < 0)
			trace = getenv("ALLOCFAIL_TRACE") != NULL;
		if (trace) {
			/* Where it failed, to stderr (backtrace_symbols_fd()
			 * does not allocate). */
			void *pc[16];

			fprintf(stderr, "allocfail: allocation %lu fails at\n", counted);
			backtrace_symbols_fd(pc, backtrace(pc, 16), 2);
		}
		return 1;
	}
	return 0;
}

void *
__wrap_malloc(size_t n)
{
	return fails() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t k, size_t n)
{
	return fails() ? NULL : __real_calloc(k, n);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return fails() ? NULL : __real_realloc(p, n);
}

char *
__wrap_strdup(const char *s)
{
	return fails() ? NULL : __real_strdup(s);
}

char *
__wrap_strndup(const char *s, size_t n)
{
	return fails() ? NULL : __real_strndup(s, n);
}

int
__wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	if (fails())
		return -1;
	return __real_vasprintf(out, fmt, ap);
}

int
__wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (fails())
		return -1;
	va_start(ap, fmt);
	rc = __real_vasprintf(out, fmt, ap);
	va_end(ap);
	return rc;
}

void *
af_malloc(size_t n)
{
	return fails() ? NULL : __real_malloc(n);
}

void *
af_realloc(void *p, size_t n)
{
	return fails() ? NULL : __real_realloc(p, n);
}

void
af_free(void *p)
{
	free(p);
}
