/*
 * proxy/proto/mintmsg.h: what the proxy says to and hears from a token
 * endpoint when it mints a credential (conf/secret.h, kind = oauth2): the
 * endpoint's URL, the form body of a token request (RFC 6749 §4.4, §6),
 * the HTTP/1.1 answer and the JSON token response (RFC 6749 §5.1, §5.2).
 *
 * Pure codecs: no I/O, no allocation, nothing kept between calls.  Every
 * input is the endpoint's, so untrusted: a bad one gives a short static
 * reason, never the bytes it saw (they may hold a token).
 */
#ifndef POSTERN_PROXY_MINTMSG_H
#define POSTERN_PROXY_MINTMSG_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Longest token kept (an access or refresh token), as a secret's value. */
#define PX_MINT_TOKEN_MAX 4096
/* Longest answer read from an endpoint, head and body. */
#define PX_MINT_RESPONSE_MAX 65536

/* An https URL: HOST (lowercase name or IP literal, no brackets), PORT
 * (443 unless written) and PATH (from its '/', query included). */
struct px_mint_url {
	char host[256];
	uint16_t port;
	char path[1024];
};

/* Parse URL, "https://HOST[:PORT][/PATH]", into OUT.  No user info, no
 * fragment.  Returns 0, or -1 with *WHY a static reason. */
int px_mint_url_parse(const char *url, struct px_mint_url *out, const char **why);

/* A token response, as much of it as was there.  Strings are
 * NUL-terminated; a missing one is empty.  EXPIRES_IN is -1 when absent. */
struct px_mint_token {
	char access_token[PX_MINT_TOKEN_MAX + 1];
	char refresh_token[PX_MINT_TOKEN_MAX + 1];
	char token_type[32];
	long long expires_in;
	char expires_at[40];            /* GitHub's: ISO 8601, UTC */
	char error[64];                 /* RFC 6749 §5.2 error code */
	char error_description[200];    /* printable ASCII only, cut */
};

/*
 * Parse the JSON object BUF (LEN bytes) into OUT: the members above, any
 * other skipped (nested up to 16 deep).  A token must be 1-4096 bytes of
 * printable ASCII (it goes into a header).  Returns 0 for a well-formed
 * object (which may hold only an error), or -1 with *WHY a static reason.
 */
int px_mint_token_parse(const char *buf, size_t len, struct px_mint_token *out, const char **why);

/*
 * The answer of an HTTP/1.1 exchange in BUF (LEN bytes, all that was read
 * until the peer closed or the body was complete): its *STATUS and its body
 * (*BODY, *BLEN, inside BUF, or a chunked body decoded into SCRATCH of
 * SCRATCHSZ bytes).  Returns 1 when the answer is complete, 0 when more
 * bytes are needed (EOF unset), or -1 with *WHY.  With EOF set, a body
 * delimited by the close is complete.
 */
int px_mint_response_parse(const char *buf, size_t len, int eof, int *status, const char **body,
    size_t *blen, char *scratch, size_t scratchsz, const char **why);

/*
 * Append "KEY=VALUE" (VALUE of VLEN bytes, form-urlencoded, after a '&'
 * unless *USED is 0) to OUT (SIZE bytes, NUL-terminated).  Returns 0, or
 * -1 when it does not fit (OUT is then cut at *USED as it was).
 */
int px_mint_form_add(char *out, size_t size, size_t *used, const char *key, const char *value,
    size_t vlen);

/* ---- GitHub Apps -------------------------------------------------------- */

/*
 * The app's JWT (RS256, RFC 7519) for APP_ID at NOW: iat 60 s back (clock
 * skew), exp 9 minutes on (GitHub takes at most 10), iss APP_ID, signed
 * with the PEM private key PEM (PEMLEN bytes) into OUT (SIZE bytes, NUL
 * added).  Returns its length, or -1 with *WHY.
 */
long px_mint_jwt(const char *pem, size_t pemlen, const char *app_id, time_t now, char *out,
    size_t size, const char **why);

/* GitHub's expires_at, "YYYY-MM-DDTHH:MM:SSZ", into *OUT.  0 or -1. */
int px_mint_time_parse(const char *s, time_t *out);

/*
 * The body of POST /app/installations/ID/access_tokens for REPOS
 * ("OWNER/REPO,...": the names without their owners go) and PERMS
 * ("NAME:LEVEL,..." or NULL): {"repositories":[...],"permissions":{...}}
 * into OUT (SIZE bytes).  Returns its length, or -1 when it does not fit.
 */
long px_mint_github_body(const char *repos, const char *perms, char *out, size_t size);

/*
 * The repository the request target PATH (LEN bytes) names, as OWNER/REPO
 * into OUT (SIZE bytes): for git's smart HTTP (API zero)
 * "/OWNER/REPO[.git][/...]", for the REST API (API nonzero)
 * "/repos/OWNER/REPO[/...]".  Returns 1 when it names one, 0 when not,
 * -1 when it names one in a form not taken (%-escapes, dot segments).
 */
int px_mint_github_repo(const char *path, size_t len, int api, char *out, size_t size);

/* Nonzero when OWNER/REPO REPO is in LIST ("OWNER/REPO,..."), by
 * GitHub's rule: without regard to case. */
int px_mint_repo_listed(const char *list, const char *repo);

#endif
