/*
 * tests/unit/allocfail.h: make the Nth allocation fail, for the unit tests
 * only (the idea of c-ares' test SetAllocFail).
 *
 * A program linked with tests/unit/allocfail.c and ALLOCFAIL_WRAP
 * (-Wl,--wrap=malloc,...: see tests/unit/local.mk) has every malloc,
 * calloc, realloc, strdup, strndup, asprintf and vasprintf of its own
 * objects and of the project's static libraries go through one counter.
 * Libraries that take allocator hooks (libevent, OpenSSL, c-ares) are
 * counted too once af_malloc(), af_realloc() and af_free() are installed
 * as theirs.  Nothing in a product binary is wrapped or pays for it.
 *
 * The walk: for N = 1, 2, 3, ... allocfail_set(N), run the operation,
 * allocfail_off(), check its outcome; when allocfail_hit() says no
 * allocation failed, the operation ran whole and the walk is over.
 * With ALLOCFAIL_TRACE set in the environment, each failing allocation
 * prints its backtrace to stderr.
 */
#ifndef POSTERN_TESTS_ALLOCFAIL_H
#define POSTERN_TESTS_ALLOCFAIL_H

#include <stddef.h>

/* The Nth counted allocation from now fails (and only that one); 0 makes
 * none fail.  Resets the count and the hit. */
void allocfail_set(unsigned long n);

/* Stop failing; the count and the hit stay as they are. */
void allocfail_off(void);

/* Allocations counted since allocfail_set(). */
unsigned long allocfail_count(void);

/* Nonzero once the allocation allocfail_set() named has failed. */
int allocfail_hit(void);

/* The counter as allocator hooks for libraries that take them. */
void *af_malloc(size_t n);
void *af_realloc(void *p, size_t n);
void af_free(void *p);

#endif
