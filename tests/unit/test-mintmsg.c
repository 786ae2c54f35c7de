/*
 * tests/unit/test-mintmsg.c: the token endpoint codecs
 * (proxy/proto/mintmsg.h): the endpoint's URL, the JSON token response
 * and its refusals, the HTTP/1.1 answer (by length, chunked, by close) and
 * the form body.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "proxy/proto/mintmsg.h"
#include "tap.h"

static struct px_mint_token tok;

static int
parse(const char *json, const char **why)
{
	*why = NULL;
	return px_mint_token_parse(json, strlen(json), &tok, why);
}

static void
test_url(void)
{
	struct px_mint_url u;
	const char *why = NULL;

	tap_ok(px_mint_url_parse("https://Auth.Example.com/oauth/token?x=1", &u, &why) == 0 &&
	    strcmp(u.host, "auth.example.com") == 0 && u.port == 443 &&
	    strcmp(u.path, "/oauth/token?x=1") == 0, "a URL: host lowered, port 443, path and query");
	tap_ok(px_mint_url_parse("https://10.0.0.1:8444", &u, &why) == 0 && u.port == 8444 &&
	    strcmp(u.path, "/") == 0, "a port and no path: /");
	tap_ok(px_mint_url_parse("https://[fd00::1]:9/t", &u, &why) == 0 && strcmp(u.host, "fd00::1") == 0,
	    "an IPv6 literal");
	tap_ok(px_mint_url_parse("http://a/t", &u, &why) != 0, "http:// is refused");
	tap_ok(px_mint_url_parse("https://user@a/t", &u, &why) != 0, "user info is refused");
	tap_ok(px_mint_url_parse("https://a:0/t", &u, &why) != 0 &&
	    px_mint_url_parse("https://a:65536/t", &u, &why) != 0, "a bad port is refused");
	tap_ok(px_mint_url_parse("https://a/t t", &u, &why) != 0, "a space in the path is refused");
	tap_ok(px_mint_url_parse("https:///t", &u, &why) != 0, "no host is refused");
}

static void
test_token(void)
{
	const char *why;

	tap_ok(parse("{\"access_token\":\"at-1\",\"token_type\":\"Bearer\",\"expires_in\":3599,"
	    "\"refresh_token\":\"rt-2\",\"scope\":\"a b\"}", &why) == 0 &&
	    strcmp(tok.access_token, "at-1") == 0 && strcmp(tok.refresh_token, "rt-2") == 0 &&
	    strcmp(tok.token_type, "Bearer") == 0 && tok.expires_in == 3599,
	    "a token response: every member");
	tap_ok(parse(" {\"expires_in\":\"60\", \"nested\":{\"a\":[1,2,{\"b\":null}],\"c\":true},"
	    "\"access_token\":\"a\\/b\"} ", &why) == 0 && tok.expires_in == 60 &&
	    strcmp(tok.access_token, "a/b") == 0, "expires_in as a string, nested members skipped, \\/");
	tap_ok(parse("{\"access_token\":\"x\"}", &why) == 0 && tok.expires_in == -1,
	    "no expires_in: -1");
	tap_ok(parse("{\"error\":\"invalid_grant\",\"error_description\":\"spent\\n\"}", &why) == 0 &&
	    strcmp(tok.error, "invalid_grant") == 0 && strcmp(tok.error_description, "spent?") == 0 &&
	    tok.access_token[0] == '\0', "an error response, its text made printable");
	tap_ok(parse("{\"access_token\":\"a b\"}", &why) != 0 && why != NULL,
	    "a token with a space is refused");
	tap_ok(parse("{\"access_token\":\"a\\r\\nX: y\"}", &why) != 0,
	    "a token that would split a header is refused");
	tap_ok(parse("{\"access_token\":\"\"}", &why) != 0, "an empty token is refused");
	tap_ok(parse("{\"access_token\":\"a\"} x", &why) != 0, "bytes after the object are refused");
	tap_ok(parse("[1]", &why) != 0 && parse("", &why) != 0 && parse("{", &why) != 0 &&
	    parse("{\"a\":}", &why) != 0 && parse("{\"a\":1,}", &why) != 0,
	    "not an object, empty, cut, a missing value, a trailing comma: refused");
	tap_ok(parse("{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", &why) != 0,
	    "nesting past 16 is refused");
	tap_ok(parse("{\"expires_in\":1e3,\"access_token\":\"a\"}", &why) == 0 && tok.expires_in == -1,
	    "an expires_in that is not an integer is taken as none");
	{
		char *big = malloc(PX_MINT_TOKEN_MAX + 64);
		memcpy(big, "{\"access_token\":\"", 17);
		memset(big + 17, 'a', PX_MINT_TOKEN_MAX + 1);
		strcpy(big + 17 + PX_MINT_TOKEN_MAX + 1, "\"}");
		tap_ok(parse(big, &why) != 0, "a token past 4096 bytes is refused");
		free(big);
	}
}

static int
resp(const char *s, int eof, int *status, const char **body, size_t *blen)
{
	static char scratch[256];
	const char *why = NULL;

	return px_mint_response_parse(s, strlen(s), eof, status, body, blen, scratch, sizeof(scratch), &why);
}

static void
test_response(void)
{
	const char *body = NULL;
	size_t blen = 0;
	int st = 0;

	tap_ok(resp("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", 0, &st, &body, &blen) == 1 &&
	    st == 200 && blen == 2 && memcmp(body, "{}", 2) == 0, "an answer by Content-Length");
	tap_ok(resp("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", 0, &st, &body, &blen) == 0,
	    "a short body asks for more");
	tap_ok(resp("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", 1, &st, &body, &blen) < 0,
	    "and is refused at EOF");
	tap_ok(resp("HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\n1;x=y\r\n}\r\n0\r\n\r\n",
	    0, &st, &body, &blen) == 1 && st == 400 && blen == 3 && memcmp(body, "{\"}", 3) == 0,
	    "a chunked answer, an extension skipped");
	tap_ok(resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}", 0, &st, &body, &blen) == 0,
	    "a chunked answer cut asks for more");
	tap_ok(resp("HTTP/1.0 200 OK\r\n\r\n{}", 1, &st, &body, &blen) == 1 && blen == 2,
	    "an answer delimited by the close");
	tap_ok(resp("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", 0,
	    &st, &body, &blen) < 0, "both framings are refused");
	tap_ok(resp("HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n", 0, &st, &body, &blen) < 0,
	    "a body past the bound is refused");
	tap_ok(resp("SSH-2.0-x\r\n\r\n", 0, &st, &body, &blen) < 0, "not HTTP is refused");
	tap_ok(resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n", 0, &st, &body,
	    &blen) < 0, "a chunk past the scratch is refused");
}

static void
test_form(void)
{
	char out[64];
	size_t used = 0;

	tap_ok(px_mint_form_add(out, sizeof(out), &used, "grant_type", "refresh_token", 13) == 0 &&
	    px_mint_form_add(out, sizeof(out), &used, "scope", "a b/c&=", 7) == 0 &&
	    strcmp(out, "grant_type=refresh_token&scope=a%20b%2Fc%26%3D") == 0,
	    "the form body is form-urlencoded");
	tap_ok(px_mint_form_add(out, sizeof(out), &used, "x", "0123456789012345678901234567890", 31) != 0 &&
	    strcmp(out, "grant_type=refresh_token&scope=a%20b%2Fc%26%3D") == 0,
	    "what does not fit leaves the body as it was");
}

/* base64url (no padding) of IN into OUT; its length, or -1. */
static long
unb64url(const char *in, size_t n, unsigned char *out, size_t size)
{
	char buf[2048];
	size_t i, m = 0;
	int len;

	if (n + 4 >= sizeof(buf))
		return -1;
	for (i = 0; i < n; i++)
		buf[m++] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
	while (m % 4 != 0)
		buf[m++] = '=';
	if (m / 4 * 3 > size)
		return -1;
	len = EVP_DecodeBlock(out, (unsigned char *)buf, (int)m);
	if (len < 0)
		return -1;
	return len - (n % 4 == 2 ? 2 : n % 4 == 3 ? 1 : 0);
}

static void
test_jwt(void)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	BIO *bio = BIO_new(BIO_s_mem());
	char *pem = NULL, jwt[4096], claims[256];
	unsigned char sig[512];
	const char *why = NULL, *d1, *d2;
	long pemlen, n, cl, sl;
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (key == NULL || bio == NULL || PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) != 1) {
		tap_ok(0, "an RSA key for the JWT test");
		return;
	}
	pemlen = BIO_get_mem_data(bio, &pem);
	n = px_mint_jwt(pem, (size_t)pemlen, "1234", 1700000000, jwt, sizeof(jwt), &why);
	tap_ok(n > 0 && (size_t)n == strlen(jwt), "a JWT is made");
	d1 = strchr(jwt, '.');
	d2 = d1 != NULL ? strchr(d1 + 1, '.') : NULL;
	tap_ok(d1 != NULL && d2 != NULL && strncmp(jwt, "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9", (size_t)(d1 - jwt)) == 0,
	    "its header is {\"alg\":\"RS256\",\"typ\":\"JWT\"}");
	if (d1 == NULL || d2 == NULL)
		return;
	cl = unb64url(d1 + 1, (size_t)(d2 - d1 - 1), (unsigned char *)claims, sizeof(claims) - 1);
	if (cl >= 0)
		claims[cl] = '\0';
	tap_cmp_str(cl >= 0 ? claims : "", "{\"iat\":1699999940,\"exp\":1700000540,\"iss\":\"1234\"}",
	    "its claims: iat 60 s back, exp 9 minutes on, iss the app id");
	sl = unb64url(d2 + 1, strlen(d2 + 1), sig, sizeof(sig));
	tap_ok(sl == 256 && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	    EVP_DigestVerify(md, sig, (size_t)sl, (const unsigned char *)jwt, (size_t)(d2 - jwt)) == 1,
	    "its RS256 signature verifies with the app's public key");
	jwt[5] ^= 1;
	EVP_MD_CTX_reset(md);
	tap_ok(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	    EVP_DigestVerify(md, sig, (size_t)sl, (const unsigned char *)jwt, (size_t)(d2 - jwt)) != 1,
	    "and not over other bytes");
	tap_ok(px_mint_jwt("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", 60, "1", 0, jwt,
	    sizeof(jwt), &why) < 0 && why != NULL, "a bad key is refused, with a reason");
	tap_ok(px_mint_jwt(pem, (size_t)pemlen, "12\"x", 0, jwt, sizeof(jwt), &why) < 0,
	    "an app id that is not a number is refused");
	EVP_MD_CTX_free(md);
	BIO_free(bio);
	EVP_PKEY_free(key);
}

static void
test_github(void)
{
	char out[256];
	time_t t = 0;

	tap_ok(px_mint_time_parse("2016-07-11T22:14:10Z", &t) == 0 && t == 1468275250,
	    "expires_at is read as UTC");
	tap_ok(px_mint_time_parse("2016-07-11 22:14:10Z", &t) < 0 && px_mint_time_parse("2016-13-11T22:14:10Z", &t) < 0 &&
	    px_mint_time_parse("2016-07-11T22:14:10+01:00", &t) < 0, "other forms of time are refused");
	tap_ok(px_mint_github_body("org/a,org/b.c", "contents:write,pull_requests:read", out, sizeof(out)) > 0 &&
	    strcmp(out, "{\"repositories\":[\"a\",\"b.c\"],\"permissions\":{\"contents\":\"write\","
	    "\"pull_requests\":\"read\"}}") == 0, "the access_tokens body: names without owners, permissions");
	tap_ok(px_mint_github_body("org/a", NULL, out, sizeof(out)) > 0 &&
	    strcmp(out, "{\"repositories\":[\"a\"]}") == 0, "no permissions: the installation's");
	tap_ok(px_mint_github_body("org/a", NULL, out, 10) < 0, "a body that does not fit is refused");
#define REPO(p, api, want, wrepo) do { \
	int rc_ = px_mint_github_repo(p, strlen(p), api, out, sizeof(out)); \
	tap_ok(rc_ == (want) && (rc_ != 1 || strcmp(out, wrepo) == 0), "%s %s: %d %s", api ? "api" : "git", p, \
	    rc_, rc_ == 1 ? out : ""); \
} while (0)
	REPO("/org/repo.git/info/refs?service=git-upload-pack", 0, 1, "org/repo");
	REPO("/org/repo/git-receive-pack", 0, 1, "org/repo");
	REPO("/org/repo.git", 0, 1, "org/repo");
	REPO("/login", 0, 0, "");
	REPO("/", 0, 0, "");
	REPO("/org/%72epo.git/info/refs", 0, -1, "");
	REPO("/org/../x/info/refs", 0, -1, "");
	REPO("/repos/Org/Repo/issues", 1, 1, "Org/Repo");
	REPO("/repos/org/repo", 1, 1, "org/repo");
	REPO("/user", 1, 0, "");
	REPO("/repos/org", 1, -1, "");
	REPO("/repos/org/./pulls", 1, -1, "");
	tap_ok(px_mint_repo_listed("org/a,Org/B", "org/b") && !px_mint_repo_listed("org/a,org/b", "org/c") &&
	    !px_mint_repo_listed("org/ab", "org/a"), "a repository is listed by its whole name, any case");
}

int
main(void)
{
	test_jwt();
	test_github();
	test_url();
	test_token();
	test_response();
	test_form();
	return tap_done();
}
