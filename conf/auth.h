/*
 * conf/auth.h: which session a credential presented on an auth=token
 * listener names (postern.ini(5) token_file; the tokens are conf/token.h's).
 */
#ifndef POSTERN_CONF_AUTH_H
#define POSTERN_CONF_AUTH_H

#include <stddef.h>

struct cf_config;
struct cf_session;

/*
 * The session of C whose token is the LEN bytes at TOK, or NULL.  With
 * NAME (NLEN bytes) only that session is the candidate; an unknown name
 * costs the same comparison as a known one.  Without NAME (NULL) every
 * session with a token is compared, none skipped.  The comparison is
 * CRYPTO_memcmp() of digests, so its time says nothing of the token.
 */
const struct cf_session *cf_auth_find(const struct cf_config *c, const char *name, size_t nlen,
    const char *tok, size_t len);

#endif
