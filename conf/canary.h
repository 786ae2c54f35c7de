/*
 * conf/canary.h: a session's canaries.  canaries = VAR, ... gives the
 * session's sandbox decoy variables beside its placeholders, each with a
 * value shaped like a real key ("sk-ant-api03-" and 95 letters and digits)
 * that is valid nowhere.  Nothing is bound to a canary: any request that
 * carries one, to any host, is refused and raised as an alert.
 *
 * A value is drawn like a placeholder (cf_placeholder_make()): random per
 * session, the same for as long as the process runs, never in the config.
 */
#ifndef POSTERN_CONF_CANARY_H
#define POSTERN_CONF_CANARY_H

#include <stddef.h>

/* Most canaries a session may have ([defaults]' and its own). */
#define CF_CANARY_MAX 16

struct cf_session;
struct cf_sess_build;

/* How many canaries session S has, and the variable of the Ith (NULL past
 * the last). */
size_t cf_session_ncanaries(const struct cf_session *s);
const char *cf_session_canary_env(const struct cf_session *s, size_t i);

/* The value of S's Ith canary into OUT (SIZE bytes; CF_PLACEHOLDER_MAX + 1
 * suffice), NUL-terminated.  Returns its length, or a negative errno. */
long cf_session_canary_value(const struct cf_session *s, size_t i, char *out, size_t size);

/* The build's part: give S the canaries of DEF (NULL for none) and then
 * OWN's, each once.  Returns 0 or -ENOMEM. */
int cfcan_attach(struct cf_session *s, const struct cf_sess_build *def,
    const struct cf_sess_build *own);
/* An error (at LINE) for each canary of S that names the variable of one
 * of its secrets' placeholders: the sandbox would get it twice. */
struct cf_build;
void cfcan_check(struct cf_build *b, const struct cf_session *s, int line);
/* Free S's canaries. */
void cfcan_session_clear(struct cf_session *s);

#endif
