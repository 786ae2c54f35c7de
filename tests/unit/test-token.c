/*
 * tests/unit/test-token.c: token listeners.  The config side (token_file
 * read and refused, auth=token parsed and placed, which session a
 * credential names: conf/token.h, conf/auth.h), the credentials a client
 * sends (proxy/proto/proxyauth.h) and the failure table by address
 * (proxy/policy/authfail.h), its time given, not read.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include "conf/auth.h"
#include "conf/config.h"
#include "conf/token.h"
#include "proxy/policy/authfail.h"
#include "proxy/proto/proxyauth.h"
#include "tests/unit/tap.h"

static char dir[] = "/tmp/test-token.XXXXXX";

#define TA "alice-0123456789abcdefghijklmnopqrstuvwxyz"
#define TB "bob-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/* Write TEXT to DIR/NAME with MODE; its path in a static buffer. */
static const char *
put(const char *name, const char *text, mode_t mode)
{
	static char path[32][256];
	static int k;
	char *p = path[k++ % 32];
	FILE *f;

	snprintf(p, 256, "%s/%s", dir, name);
	f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
	return p;
}

static struct cf_config *
load(const char *text, struct cf_diag *d)
{
	memset(d, 0, sizeof(*d));
	return cf_config_parse("t.ini", text, strlen(text), NULL, d);
}

/* The config with sessions a (token file A) and b (B) on one auth=token
 * listener. */
static struct cf_config *
two(const char *a, const char *b, struct cf_diag *d)
{
	char text[1024];

	snprintf(text, sizeof(text), "[proxy]\nlisten = tcp:127.0.0.1:3128 auth=token\n"
	    "[session a]\ntoken_file = %s\nallow_hosts = a.test\n"
	    "[session b]\ntoken_file = %s\nallow_hosts = b.test\n", a, b);
	return load(text, d);
}

static int
has(const struct cf_diag *d, const char *want)
{
	size_t i;

	for (i = 0; i < d->nerrors; i++)
		if (strstr(d->errors[i], want) != NULL)
			return 1;
	return 0;
}

static int
warned(const struct cf_diag *d, const char *want)
{
	size_t i;

	for (i = 0; i < d->nwarnings; i++)
		if (strstr(d->warnings[i], want) != NULL)
			return 1;
	return 0;
}

static void
test_config(void)
{
	const char *a = put("a", TA "\n", 0600), *b = put("b", TB "  \r\n# more\n", 0400);
	const struct cf_session *s;
	struct cf_listen l;
	struct cf_diag d;
	struct cf_config *c;
	const char *why = NULL;
	char text[512];

	c = two(a, b, &d);
	tap_ok(c != NULL, "two sessions with token files and no listener load (%s)",
	    d.nerrors ? d.errors[0] : "ok");
	if (c == NULL)
		return;
	tap_ok(cf_config_proxy(c) != NULL && cf_config_session(c, 0)->listen[0].auth_token,
	    "the [proxy] listener has auth=token");
	tap_ok(cf_config_find_session(c, "a")->has_token && cf_session_served(cf_config_find_session(c, "b")),
	    "a and b have tokens and are served");
	tap_ok(d.nwarnings == 0, "no warning for files only the owner reads (%zu)", d.nwarnings);
	s = cf_auth_find(c, "a", 1, TA, strlen(TA));
	tap_ok(s != NULL && strcmp(s->name, "a") == 0, "a:TA is session a");
	s = cf_auth_find(c, "b", 1, TB, strlen(TB));
	tap_ok(s != NULL && strcmp(s->name, "b") == 0, "b:TB is session b (blanks and CR cut, one line)");
	tap_ok(cf_auth_find(c, "b", 1, TA, strlen(TA)) == NULL, "b:TA is no session");
	tap_ok(cf_auth_find(c, "x", 1, TA, strlen(TA)) == NULL, "an unknown name is no session");
	tap_ok(cf_auth_find(c, "default", 7, TA, strlen(TA)) == NULL, "default has no token");
	tap_ok(cf_auth_find(c, "a", 1, TA "x", strlen(TA) + 1) == NULL, "a longer token is not a's");
	tap_ok(cf_auth_find(c, "a", 1, TA, strlen(TA) - 1) == NULL, "a prefix of a's token is not a's");
	s = cf_auth_find(c, NULL, 0, TB, strlen(TB));
	tap_ok(s != NULL && strcmp(s->name, "b") == 0, "TB alone (Bearer) is session b");
	tap_ok(cf_auth_find(c, NULL, 0, "nothing", 7) == NULL, "a short token alone is no session");
	cf_config_free(c);
	cf_diag_free(&d);

	c = two(put("short", "tooshort\n", 0600), b, &d);
	tap_ok(c == NULL && has(&d, "t.ini:4: token_file ") && has(&d, "is 8 bytes, at least 32"),
	    "a short token is refused at its line (%s)", d.nerrors ? d.errors[0] : "loaded");
	cf_diag_free(&d);
	c = two(put("colon", "abc:0123456789abcdefghijklmnopqrstuvwxyz\n", 0600), b, &d);
	tap_ok(c == NULL && has(&d, "t.ini:4: token_file") && has(&d, "offset 3"),
	    "a token with ':' is refused (%s)", d.nerrors ? d.errors[0] : "loaded");
	cf_diag_free(&d);
	c = two(put("blank", "0123456789abcdef 0123456789abcdefghij\n", 0600), b, &d);
	tap_ok(c == NULL && has(&d, "offset 16"), "a token with a blank is refused (%s)",
	    d.nerrors ? d.errors[0] : "loaded");
	cf_diag_free(&d);
	c = two(put("empty", "\n" TA "\n", 0600), b, &d);
	tap_ok(c == NULL && has(&d, "is 0 bytes"), "an empty first line is refused (%s)",
	    d.nerrors ? d.errors[0] : "loaded");
	cf_diag_free(&d);
	c = two("/nonexistent/token", b, &d);
	tap_ok(c == NULL && has(&d, "t.ini:4: token_file /nonexistent/token: cannot read"),
	    "a missing file is refused (%s)", d.nerrors ? d.errors[0] : "loaded");
	cf_diag_free(&d);
	c = two(put("same", TB "\n", 0600), b, &d);
	tap_ok(c == NULL && has(&d, "holds the token of session a"), "two sessions with one token are refused (%s)",
	    d.nerrors ? d.errors[0] : "loaded");
	cf_diag_free(&d);
	c = two(put("loose", TA "\n", 0644), b, &d);
	tap_ok(c != NULL && warned(&d, "readable by its group or others"),
	    "a file others may read loads, with a warning");
	tap_ok(d.nwarnings == 0 || strstr(d.warnings[0], TA) == NULL, "the warning does not hold the token");
	cf_config_free(c);
	cf_diag_free(&d);
	c = two("relative", b, &d);
	tap_ok(c == NULL && has(&d, "token_file is an absolute path"), "a relative path is refused");
	cf_diag_free(&d);

	snprintf(text, sizeof(text), "[proxy]\nlisten = unix:/nonexistent/p.sock\n"
	    "[defaults]\ntoken_file = %s\n", a);
	c = load(text, &d);
	tap_ok(c == NULL && has(&d, "t.ini:4: token_file belongs in"), "token_file in [defaults] is refused (%s)",
	    d.nerrors ? d.errors[0] : "loaded");
	cf_diag_free(&d);
	snprintf(text, sizeof(text), "[proxy]\nlisten = unix:/nonexistent/p.sock\n"
	    "[session a]\nlisten = tcp:127.0.0.1:3129 auth=token\n");
	c = load(text, &d);
	tap_ok(c == NULL && has(&d, "t.ini:4: auth=token belongs on a [proxy] listener"),
	    "auth=token on a session's listener is refused");
	cf_diag_free(&d);
	snprintf(text, sizeof(text), "[proxy]\nlisten = tcp:127.0.0.1:3128 auth=token\n"
	    "[session a]\nlisten = unix:/nonexistent/a.sock\n");
	c = load(text, &d);
	tap_ok(c != NULL && warned(&d, "no session has a token_file"), "auth=token without tokens warns");
	cf_config_free(c);
	cf_diag_free(&d);
	snprintf(text, sizeof(text), "[proxy]\nlisten = tcp:127.0.0.1:3128\n[session a]\ntoken_file = %s\n", a);
	c = load(text, &d);
	tap_ok(c != NULL && warned(&d, "no [proxy] listener has auth=token"), "tokens without auth=token warn");
	cf_config_free(c);
	cf_diag_free(&d);

	tap_ok(cf_listen_parse("tcp:127.0.0.1:3128  auth=token ", &l, &why) == 0 && l.auth_token &&
	    l.kind == CF_LISTEN_TCP, "tcp:ADDR:PORT auth=token parses");
	free(l.text);
	tap_ok(cf_listen_parse("tcp:127.0.0.1:3128", &l, &why) == 0 && !l.auth_token, "without it, no auth");
	free(l.text);
	tap_ok(cf_listen_parse("tcp:127.0.0.1:3128 auth=basic", &l, &why) != 0 &&
	    strstr(why, "auth= takes token only") != NULL, "auth=basic is refused");
	tap_ok(cf_listen_parse("unix:/r/a.sock auth=token", &l, &why) != 0, "auth=token on unix: is refused");
	tap_ok(cf_token_ok(TA, strlen(TA)) && !cf_token_ok("a:b", 3) && !cf_token_ok(TA ":", strlen(TA) + 1),
	    "cf_token_ok: 32+ visible bytes, no ':'");
}

static void
test_header(void)
{
	struct px_proxyauth cr;
	const char *why = NULL;
	char buf[2048];
	int rc;

	/* base64("alice:tok") = YWxpY2U6dG9r */
	rc = px_proxyauth_header("Basic YWxpY2U6dG9r", 18, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_OK && cr.name_len == 5 && memcmp(cr.name, "alice", 5) == 0 &&
	    cr.token_len == 3 && memcmp(cr.token, "tok", 3) == 0, "Basic NAME:TOKEN");
	rc = px_proxyauth_header("bAsIc   YWxpY2U6dG9r  ", 22, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_OK && cr.name_len == 5, "the scheme in any case, blanks around");
	rc = px_proxyauth_header("Basic YWxpY2U6dG9rMQ==", 22, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_OK && cr.token_len == 4, "padding");
	rc = px_proxyauth_header("Basic YWxpY2U6dG9rMQ", 20, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_OK && cr.token_len == 4, "padding left out");
	rc = px_proxyauth_header("Basic YWxpY2U", 13, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD && strstr(why, "no ':'") != NULL, "Basic without ':' (%s)", why);
	rc = px_proxyauth_header("Basic Ont9", 10, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD, "Basic with an empty name (\":{}\"): %s", why);
	rc = px_proxyauth_header("Basic YW*j", 10, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD && strstr(why, "base64") != NULL, "bad base64");
	rc = px_proxyauth_header("Basic YQBiOmM=", 14, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD && strstr(why, "NUL") != NULL, "a NUL byte in the credential");
	rc = px_proxyauth_header("Basic YWxpY2U6dG9r", 18, buf, 4, &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD, "a credential longer than the buffer");
	rc = px_proxyauth_header("Bearer " TA, 7 + strlen(TA), buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_OK && cr.name == NULL && cr.token_len == strlen(TA), "Bearer TOKEN");
	rc = px_proxyauth_header("Bearer a b", 10, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD, "Bearer with a blank inside");
	rc = px_proxyauth_header("Digest x", 8, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD && strstr(why, "Basic") != NULL, "another scheme");
	rc = px_proxyauth_header("Basic", 5, buf, sizeof(buf), &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_BAD, "a scheme alone");
}

static void
test_preface(void)
{
	static const char line[] = "POSTERN-TOKEN bob:" TB "\r\nGET ";
	struct px_proxyauth cr;
	const char *why = NULL;
	char big[2000];
	size_t used = 0, k;
	int rc;

	rc = px_proxyauth_preface(line, sizeof(line) - 1, &used, &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_OK && used == sizeof(line) - 5 && cr.name_len == 3 &&
	    cr.token_len == strlen(TB), "POSTERN-TOKEN NAME:TOKEN CRLF, and what follows is left");
	for (k = 0; k < sizeof(line) - 5; k++)
		if (px_proxyauth_preface(line, k, &used, &cr, &why) != PX_PROXYAUTH_INCOMPLETE)
			break;
	tap_ok(k == sizeof(line) - 5, "every prefix asks for more (%zu)", k);
	rc = px_proxyauth_preface("POSTERN-TOKEN " TA "\n", 15 + strlen(TA), &used, &cr, &why);
	tap_ok(rc == PX_PROXYAUTH_OK && cr.name == NULL && cr.token_len == strlen(TA), "the token alone, LF");
	tap_ok(px_proxyauth_preface("GET http://a/ HTTP/1.1\r\n", 24, &used, &cr, &why) == PX_PROXYAUTH_NONE,
	    "a request is no preface");
	tap_ok(px_proxyauth_preface("\x05\x01\x00", 3, &used, &cr, &why) == PX_PROXYAUTH_NONE,
	    "SOCKS5 is no preface");
	tap_ok(px_proxyauth_preface("POSTERN-TOKEN a b\n", 18, &used, &cr, &why) == PX_PROXYAUTH_BAD,
	    "a blank in the credential");
	tap_ok(px_proxyauth_preface("POSTERN-TOKEN \r\n", 16, &used, &cr, &why) == PX_PROXYAUTH_BAD,
	    "an empty credential");
	tap_ok(px_proxyauth_preface("POSTERN-TOKEN a:\n", 17, &used, &cr, &why) == PX_PROXYAUTH_BAD,
	    "an empty token");
	memcpy(big, "POSTERN-TOKEN ", 14);
	memset(big + 14, 'x', sizeof(big) - 14);
	tap_ok(px_proxyauth_preface(big, sizeof(big), &used, &cr, &why) == PX_PROXYAUTH_BAD,
	    "a line without an end in %d bytes", PX_PROXYAUTH_PREFACE_MAX);
}

static void
test_failures(void)
{
	struct sockaddr_in a, b;
	struct sockaddr_in6 m, v6, v6b;
	int i, started = 0;

	px_authfail_reset();
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	inet_pton(AF_INET, "10.0.0.1", &a.sin_addr);
	b = a;
	inet_pton(AF_INET, "10.0.0.2", &b.sin_addr);
	memset(&m, 0, sizeof(m));
	m.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &m.sin6_addr);
	v6 = m;
	inet_pton(AF_INET6, "fd00::1", &v6.sin6_addr);
	v6b = m;
	inet_pton(AF_INET6, "fd00::ffff:1", &v6b.sin6_addr);

	for (i = 0; i < PX_AUTHFAIL_LIMIT - 1; i++)
		started |= px_authfail_failed((struct sockaddr *)&a, 1000 + i);
	tap_ok(!started && px_authfail_blocked((struct sockaddr *)&a, 1009) == 0,
	    "%d failures: not blocked", PX_AUTHFAIL_LIMIT - 1);
	tap_ok(px_authfail_failed((struct sockaddr *)&m, 1009) == 1, "the tenth (as ::ffff:10.0.0.1) blocks");
	tap_cmp_int(px_authfail_blocked((struct sockaddr *)&a, 1010), "==", PX_AUTHFAIL_BLOCK_S - 1,
	    "blocked, seconds left");
	tap_ok(px_authfail_blocked((struct sockaddr *)&b, 1010) == 0, "another address is not");
	tap_ok(px_authfail_blocked((struct sockaddr *)&a, 1009 + PX_AUTHFAIL_BLOCK_S) == 0,
	    "the block ends after %d s", PX_AUTHFAIL_BLOCK_S);
	/* A window: failures spread wider than it never block. */
	started = 0;
	for (i = 0; i < 3 * PX_AUTHFAIL_LIMIT; i++)
		started |= px_authfail_failed((struct sockaddr *)&b, 2000 + i * (PX_AUTHFAIL_WINDOW_S / 5));
	tap_ok(!started, "five failures a window never block");
	/* A right token forgets the failures. */
	for (i = 0; i < PX_AUTHFAIL_LIMIT - 1; i++)
		px_authfail_failed((struct sockaddr *)&a, 5000);
	px_authfail_passed((struct sockaddr *)&a);
	tap_ok(px_authfail_failed((struct sockaddr *)&a, 5001) == 0, "a right token forgets the count");
	/* IPv6 by /64. */
	for (i = 0; i < PX_AUTHFAIL_LIMIT - 1; i++)
		px_authfail_failed((struct sockaddr *)&v6, 6000);
	tap_ok(px_authfail_failed((struct sockaddr *)&v6b, 6000) == 1, "IPv6 addresses of one /64 count together");
	/* Bounded: many addresses evict, never grow. */
	for (i = 0; i < 4 * PX_AUTHFAIL_SLOTS; i++) {
		struct sockaddr_in x = a;
		x.sin_addr.s_addr = htonl(0x0b000000u + (unsigned)i);
		px_authfail_failed((struct sockaddr *)&x, 7000);
	}
	tap_ok(1, "%d addresses fit the %d slots", 4 * PX_AUTHFAIL_SLOTS, PX_AUTHFAIL_SLOTS);
	px_authfail_reset();
	tap_ok(px_authfail_blocked((struct sockaddr *)&v6, 6001) == 0, "reset forgets");
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 99;
	test_config();
	test_header();
	test_preface();
	test_failures();
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			tap_diag("cannot remove %s", dir);
	}
	return tap_done();
}
