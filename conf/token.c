/*
 * conf/token.c: session tokens (see token.h).
 */
#include "conf/token.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/tokenfile.h"
#include "conf/config.h"

/* More than a token's line: a longer file is refused unread. */
#define TOKEN_FILE_MAX 4096

int
cf_token_ok(const char *t, size_t len)
{
	if (len < CF_TOKEN_MIN || len > CF_TOKEN_MAX)
		return 0;
	return bs_token_bad(t, len, ":") == len;
}

void
cf_token_digest(const char *t, size_t len, unsigned char md[32])
{
	unsigned int n = 32;

	if (EVP_Digest(t, len, md, &n, EVP_sha256(), NULL) != 1)
		/* Never equal to a real digest's use: refuse all. */
		memset(md, 0xff, 32);
}

int
cf_token_read(const char *path, unsigned char md[32], int *loose, char *why, size_t size)
{
	char buf[TOKEN_FILE_MAX + 1];
	size_t n, i;
	int rc = -1;

	if (bs_token_file_read(path, buf, sizeof(buf), &n, loose, why, size) < 0)
		goto out;
	if (n < CF_TOKEN_MIN) {
		snprintf(why, size, "the token (the file's first line) is %zu bytes, at least %d are "
		    "needed (e.g. head -c 32 /dev/urandom | base64 | tr -d '=+/:')", n, CF_TOKEN_MIN);
		goto out;
	}
	if (n > CF_TOKEN_MAX) {
		snprintf(why, size, "the token is %zu bytes, at most %d", n, CF_TOKEN_MAX);
		goto out;
	}
	if ((i = bs_token_bad(buf, n, ":")) < n) {
		snprintf(why, size, "the token has a byte other than printable ASCII at offset %zu "
		    "(no blanks, no ':', nothing else on the first line)", i);
		goto out;
	}
	cf_token_digest(buf, n, md);
	rc = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	return rc;
}
