/*
 * proxy/tell.h: what a refusal says to a person at a terminal
 * (postern-sidecar run, or any proxy started with human lines): the
 * request and the admin's way to allow it in words, and one log line per
 * host:port, reason and fix (the repeats are counted for the summary,
 * proxy/tally.h).  Reads a connection's current request; changes nothing
 * but the tallies.
 */
#ifndef POSTERN_PROXY_TELL_H
#define POSTERN_PROXY_TELL_H

#include <stddef.h>

#include "conf/decide.h"

struct cf_rule;
struct px_conn;

/*
 * The words of a refusal of C's current request: SUGG (SUGGSZ bytes), an
 * admin's way to allow it (cf_suggest(), "" when there is none), WHAT,
 * the request ("CONNECT host:port", "GET host:port path /p"), and H, its
 * host as text.
 */
void px_tell_words(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule,
    char *sugg, size_t suggsz, char *what, size_t whatsz, char *h, size_t hsz);

/*
 * The human line of a refusal with those words ("refused ...", or, WOULD
 * nonzero, "report mode, allowed; would refuse ..."), with the pattern to
 * pass to --allow, told once per host:port, reason and pattern (a client
 * that retries would fill the terminal); the caller checks that the proxy
 * writes for a person.
 */
void px_tell_human(const struct px_conn *c, int would, enum cf_reason reason, const char *detail,
    const char *sugg, const char *what, const char *h);

/* Only the human line of a refusal, for one answered otherwise (an HTTP/2
 * stream inside a terminated tunnel).  Nothing when the proxy does not
 * write for a person. */
void px_tell_refusal(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail);

/* In report mode, the human line of a request allowed that the allowlist
 * would have refused (C->dec.would): "would refuse", with its --allow
 * hint.  Nothing otherwise. */
void px_tell_would(const struct px_conn *c);

#endif
