/*
 * proxy/policy/summary.h: the refusals of one run, counted for the person at the
 * terminal (postern-sidecar run): a refusal repeated with the same
 * host:port, reason and fix is told once when it first happens, and one
 * summary at the end says what was refused, how often, and which --allow
 * flags would allow it.
 */
#ifndef POSTERN_PROXY_TALLY_H
#define POSTERN_PROXY_TALLY_H

#include <stdio.h>

struct px_tally;

/* A new, empty tally, or NULL with errno ENOMEM.  Free it with
 * px_tally_free(); px_tally_free(NULL) does nothing. */
struct px_tally *px_tally_new(void);
void px_tally_free(struct px_tally *t);

/*
 * Count one refusal of WHERE ("host:port") for REASON (a reason code), whose
 * fix is the --allow pattern ALLOW (NULL when no --allow would allow it).
 * Refusals with the same three are one entry.  Returns how many times that
 * entry has been seen, this one included: 1 means "tell it now".  A tally
 * that cannot grow (out of memory, or more distinct entries than it keeps)
 * counts the refusal among "others" and returns 1, so that it is still told.
 * The strings are copied.  T may be NULL: then it always returns 1.
 */
unsigned long px_tally_add(struct px_tally *t, const char *where, const char *reason,
    const char *allow);

/*
 * Write the summary to F, each line starting with PREFIX ("postern: "):
 * one line per entry with its count (the first few entries, then how many
 * more), then one line with every distinct --allow flag that would allow
 * them.  Writes nothing when nothing was refused.
 */
void px_tally_summary(const struct px_tally *t, FILE *f, const char *prefix);
/* The same, its first line saying VERB ("refused") of the requests. */
void px_tally_summary_as(const struct px_tally *t, FILE *f, const char *prefix, const char *verb);

#endif
