/*
 * tests/fuzz/fuzz-mintmsg.c: the token endpoint codecs
 * (proxy/proto/mintmsg.h) over arbitrary bytes: the whole input as an
 * endpoint's HTTP/1.1 answer (with and without EOF) and as a JSON token
 * response, and its first line as a token_url.  Invariants: a complete
 * answer's body lies inside the input or the scratch buffer; a token taken
 * is 1-4096 bytes of printable ASCII without a space; error texts are
 * printable; a refusal says why; a URL taken has a host and a nonzero port.
 * The same first line as a request target to a GitHub host (git's form and
 * the API's): a repository taken is OWNER/REPO of names without '%', '/'
 * or a dot segment, and is listed in a list of itself; and as expires_at.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proto/mintmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct px_mint_token tok;
static char scratch[PX_MINT_RESPONSE_MAX];

static void
token_ok(const char *t, int may_be_empty)
{
	size_t i, n = strlen(t);

	if ((n == 0 && !may_be_empty) || n > PX_MINT_TOKEN_MAX)
		abort();
	for (i = 0; i < n; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
			abort();
}

static void
printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data, *why = NULL, *body = NULL;
	struct px_mint_url url;
	char line[2048];
	size_t blen = 0, ll;
	int eof, status = 0, rc;

	for (eof = 0; eof < 2; eof++) {
		why = NULL;
		rc = px_mint_response_parse(d, size, eof, &status, &body, &blen, scratch, sizeof(scratch), &why);
		if (rc < 0 && why == NULL)
			abort();
		if (rc > 0 && !((body >= d && body + blen <= d + size) ||
		    (body == scratch && blen <= sizeof(scratch))))
			abort();
		if (rc > 0 && (status < 0 || status > 999))
			abort();
	}
	why = NULL;
	rc = px_mint_token_parse(d, size, &tok, &why);
	if (rc < 0 && why == NULL)
		abort();
	if (rc == 0) {
		token_ok(tok.access_token, 1);
		token_ok(tok.refresh_token, 1);
		printable(tok.token_type);
		printable(tok.error);
		printable(tok.error_description);
	}
	{
		const char *nl = size > 0 ? memchr(d, '\n', size) : NULL;
		ll = nl != NULL ? (size_t)(nl - d) : size;
	}
	if (ll >= sizeof(line))
		ll = sizeof(line) - 1;
	memcpy(line, d, ll);
	line[ll] = '\0';
	if (px_mint_url_parse(line, &url, &why) == 0 && (url.host[0] == '\0' || url.port == 0 ||
	    url.path[0] != '/'))
		abort();
	for (eof = 0; eof < 2; eof++) {
		char repo[256];
		const char *slash;

		if (px_mint_github_repo(line, ll, eof, repo, sizeof(repo)) != 1)
			continue;
		slash = strchr(repo, '/');
		if (slash == NULL || slash == repo || slash[1] == '\0' || strchr(slash + 1, '/') != NULL ||
		    strchr(repo, '%') != NULL || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0 ||
		    !px_mint_repo_listed(repo, repo))
			abort();
	}
	{
		time_t t;
		(void)px_mint_time_parse(line, &t);
	}
	return 0;
}
