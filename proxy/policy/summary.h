/*
 * proxy/policy/summary.h: the refusals of one run, counted for the person at the
 * terminal (postern-sidecar run): a refusal repeated with the same
 * host:port, reason and fix is told once when it first happens, and one
 * summary at the end says what was refused, how often, and which --allow
 * flags would allow it.
 */
#ifndef POSTERN_PROXY_SUMMARY_H
#define POSTERN_PROXY_SUMMARY_H

#include <stdio.h>

struct px_summary;

/* A new, empty tally, or NULL with errno ENOMEM.  Free it with
 * px_summary_free(); px_summary_free(NULL) does nothing. */
struct px_summary *px_summary_new(void);
void px_summary_free(struct px_summary *t);

/*
 * Count one refusal of WHERE ("host:port") for REASON (a reason code), whose
 * fix is the --allow pattern ALLOW (NULL when no --allow would allow it).
 * Refusals with the same three are one entry.  Returns how many times that
 * entry has been seen, this one included: 1 means "tell it now".  A tally
 * that cannot grow (out of memory, or more distinct entries than it keeps)
 * counts the refusal among "others" and returns 1, so that it is still told.
 * The strings are copied.  T may be NULL: then it always returns 1.
 */
unsigned long px_summary_add(struct px_summary *t, const char *where, const char *reason,
    const char *allow);

/*
 * Write the summary to F, each line starting with PREFIX ("postern: "):
 * one line per entry with its count (the first few entries, then how many
 * more), then one line with every distinct --allow flag that would allow
 * them.  Writes nothing when nothing was refused.
 */
void px_summary_print(const struct px_summary *t, FILE *f, const char *prefix);
/* The same, its first line saying VERB ("refused") of the requests. */
void px_summary_print_as(const struct px_summary *t, FILE *f, const char *prefix, const char *verb);

#endif
