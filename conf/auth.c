/*
 * conf/auth.c: the session a credential names (see auth.h).
 */
#include "conf/auth.h"

#include <string.h>

#include <openssl/crypto.h>

#include "conf/config.h"
#include "conf/token.h"

const struct cf_session *
cf_auth_find(const struct cf_config *c, const char *name, size_t nlen, const char *tok, size_t len)
{
	/* What an unknown name is compared with: no digest of anything. */
	static const unsigned char nothing[32];
	const struct cf_session *s, *found = NULL;
	unsigned char md[32];
	char nm[72];
	size_t i;

	cf_token_digest(tok, len, md);
	if (name != NULL) {
		s = NULL;
		if (nlen < sizeof(nm)) {
			memcpy(nm, name, nlen);
			nm[nlen] = '\0';
			s = cf_config_find_session(c, nm);
		}
		if (s != NULL && !s->has_token)
			s = NULL;
		if (CRYPTO_memcmp(md, s != NULL ? s->token_md : nothing, 32) == 0 && s != NULL &&
		    cf_token_ok(tok, len))
			found = s;
	} else {
		for (i = 0; i < cf_config_nsessions(c); i++) {
			s = cf_config_session(c, i);
			if (s->has_token && CRYPTO_memcmp(md, s->token_md, 32) == 0)
				found = s;
		}
		if (found != NULL && !cf_token_ok(tok, len))
			found = NULL;
	}
	OPENSSL_cleanse(md, sizeof(md));
	return found;
}
