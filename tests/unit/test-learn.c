/*
 * tests/unit/test-learn.c: the learn summary (proxy/policy/learn.h): items
 * deduplicated by the rule that would allow them, counts and first
 * request, "private" learned from an address and merged into an item, a
 * path rule's prefix, what is not learned, the cap, and a block that the
 * config reader takes back whole (every line short enough, a client's
 * control bytes escaped) and that allows what it says.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "conf/config.h"
#include "proxy/policy/learn.h"
#include "tests/unit/tap.h"

static const char text[] =
	"[proxy]\nlisten = tcp:127.0.0.1:3128\n"
	"[defaults]\nallow_hosts = http://paths.test/api/ private\n"
	"deny_hosts = bad.test\n"
	"[session r]\nlisten = unix:/r\nmode = report\n";

static struct cf_host
host(const char *name)
{
	struct cf_host h;
	const char *why;

	memset(&h, 0, sizeof(h));
	cf_host_parse(name, strlen(name), 0, &h, &why);
	return h;
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)) != NULL; hay++)
		n++;
	return n;
}

/* The block, with a [proxy] before it and a listener in its session,
 * parsed as a config. */
static struct cf_config *
reparse(const char *block, struct cf_diag *diag)
{
	char *t;
	struct cf_config *c;
	const char *sect = strstr(block, "[session "), *end;
	size_t n = strlen(block) + 128;

	t = malloc(n);
	if (sect != NULL && (end = strchr(sect, '\n')) != NULL)
		snprintf(t, n, "[proxy]\nlisten = tcp:127.0.0.1:3128\n%.*s\nlisten = unix:/l\n%s",
		    (int)(end - block), block, end + 1);
	else
		snprintf(t, n, "[proxy]\nlisten = tcp:127.0.0.1:3128\n%s", block);
	memset(diag, 0, sizeof(*diag));
	c = cf_config_parse("learned.ini", t, strlen(t), NULL, diag);
	free(t);
	return c;
}

int
main(void)
{
	struct cf_diag diag;
	struct cf_config *c, *c2;
	const struct cf_session *s, *r;
	struct px_learn *l;
	struct cf_host h;
	char *out, name[64], longpath[600];
	size_t i;

	memset(&diag, 0, sizeof(diag));
	c = cf_config_parse("t.ini", text, strlen(text), NULL, &diag);
	if (!tap_ok(c != NULL, "config parses (%s)", diag.nerrors ? diag.errors[0] : "ok"))
		return tap_done();
	cf_diag_free(&diag);
	s = cf_config_find_session(c, "default");
	r = cf_config_find_session(c, "r");
	l = px_learn_new();

	out = px_learn_render(l, "r", 0);
	tap_ok(out != NULL && strstr(out, "[session r]\n") && strstr(out, "# nothing to add\n") &&
	    !strstr(out, "allow_hosts"), "nothing learned: the section and a comment saying so");
	free(out);
	tap_ok(!px_learn_known(l, "r"), "a session not learned from is not known");

	h = host("a.test");
	px_learn_add(l, r, "r", CF_MODE_CONNECT, &h, 443, "CONNECT", "", CF_R_HOST_NOT_ALLOWED, NULL, NULL);
	px_learn_add(l, r, "r", CF_MODE_CONNECT, &h, 443, "CONNECT", "", CF_R_HOST_NOT_ALLOWED, NULL, NULL);
	/* The same host over plain HTTP on 80 is the same item. */
	px_learn_add(l, r, "r", CF_MODE_HTTP, &h, 80, "GET", "/x", CF_R_HOST_NOT_ALLOWED, NULL, NULL);
	/* ... and then refused at a private address: the item needs it. */
	px_learn_add(l, r, "r", CF_MODE_HTTP, &h, 80, "GET", "/y", CF_R_HOST_NOT_ALLOWED, NULL, "10.1.2.3");
	h = host("b.test");
	px_learn_add(l, r, "r", CF_MODE_CONNECT, &h, 8443, "CONNECT", "", CF_R_HOST_NOT_ALLOWED, NULL, NULL);
	h = host("c.test");
	px_learn_add(l, r, "r", CF_MODE_HTTP, &h, 80, "GET", "/simple/\x1b[2J;#", CF_R_HOST_NOT_ALLOWED, NULL,
	    NULL);
	/* Not learned: a deny rule, a method, an address no flag opens. */
	h = host("bad.test");
	px_learn_add(l, r, "r", CF_MODE_CONNECT, &h, 443, "CONNECT", "", CF_R_DENIED_BY_RULE, NULL, NULL);
	px_learn_add(l, r, "r", CF_MODE_HTTP, &h, 80, "POST", "/", CF_R_METHOD_NOT_ALLOWED, NULL, NULL);
	h = host("pub.test");
	px_learn_add(l, r, "r", CF_MODE_CONNECT, &h, 443, "CONNECT", "", CF_R_HOST_NOT_ALLOWED, NULL, "93.184.9.1");
	/* A path rule's refusal: the prefix its hint offers, private as the
	 * rule is. */
	h = host("paths.test");
	px_learn_add(l, s, "default", CF_MODE_HTTP, &h, 80, "GET", "/other/x", CF_R_PATH_NOT_ALLOWED,
	    s->allow[0], NULL);

	out = px_learn_render(l, "r", 0);
	for (i = 0; out != NULL && out[i]; i += strcspn(out + i, "\n") + (out[i + strcspn(out + i, "\n")] != 0))
		tap_diag("%.*s", (int)strcspn(out + i, "\n"), out + i);
	tap_ok(out != NULL && strstr(out, "# 4 requests, first CONNECT a.test:443\n") != NULL,
	    "a.test: one item for CONNECT and plain HTTP, counted, its first request");
	tap_ok(out != NULL && strstr(out, "# answered 10.1.2.3, a private address: \"private\" lets it through\n"
	    "allow_hosts = a.test private\n") != NULL, "private learned from a later request, with its address");
	tap_ok(out != NULL && strstr(out, "allow_hosts = b.test:8443\n") != NULL, "another port: host:port");
	tap_ok(out != NULL && strstr(out, "allow_hosts = c.test\n") != NULL &&
	    strstr(out, "first GET /simple/\\x1b[2J;#\n") != NULL,
	    "plain HTTP learns the host; the path in the comment is escaped");
	tap_ok(out != NULL && !strstr(out, "bad.test") && !strstr(out, "pub.test"),
	    "a deny rule, a method and a public address are not learned");
	tap_ok(out != NULL && count(out, "allow_hosts = ") == 3, "three items");
	tap_ok(out != NULL && strstr(out, "# as flags: --allow 'a.test private' --allow 'b.test:8443' "
	    "--allow 'c.test'\n") != NULL, "the same as --allow flags");
	c2 = out != NULL ? reparse(out, &diag) : NULL;
	tap_ok(c2 != NULL, "the block parses as a config (%s)", diag.nerrors ? diag.errors[0] : "ok");
	cf_diag_free(&diag);
	cf_config_free(c2);
	free(out);

	/* A prefix no config line holds is counted, not kept. */
	memset(longpath, 'q', 300);
	longpath[0] = '/';
	longpath[300] = '\0';
	px_learn_add(l, s, "default", CF_MODE_HTTP, &h, 80, "GET", longpath, CF_R_PATH_NOT_ALLOWED,
	    s->allow[0], NULL);
	out = px_learn_render(l, "default", 1);
	tap_ok(out != NULL && strstr(out, "[defaults]\n") && strstr(out, "allow_hosts = paths.test/other/ private\n"),
	    "[defaults], and a path rule's prefix with its private");
	tap_ok(out != NULL && count(out, "allow_hosts = ") == 1 && strstr(out, "and 1 more request not learned"),
	    "an item too long for a config line is counted, not kept");
	free(out);

	/* The cap, and lines the reader takes whatever the client sent. */
	memset(longpath, 'p', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	for (i = 0; i < PX_LEARN_MAX + 10; i++) {
		snprintf(name, sizeof(name), "h%zu.%s.test", i, i % 2 ? "odd" : "even");
		h = host(name);
		px_learn_add(l, r, "cap", CF_MODE_HTTP, &h, 80, "GET", longpath, CF_R_HOST_NOT_ALLOWED, NULL, NULL);
	}
	out = px_learn_render(l, "cap", 0);
	tap_ok(out != NULL && count(out, "\nallow_hosts = ") == PX_LEARN_MAX, "at most %d items", PX_LEARN_MAX);
	tap_ok(out != NULL && strstr(out, "and 10 more requests") != NULL, "the rest counted");
	{
		const char *p = out, *nl;
		size_t longest = 0;

		while (p != NULL && *p) {
			nl = strchr(p, '\n');
			if ((size_t)(nl ? nl - p : (long)strlen(p)) > longest)
				longest = nl ? (size_t)(nl - p) : strlen(p);
			p = nl ? nl + 1 : NULL;
		}
		tap_ok(longest < 198, "every line under the reader's limit (%zu)", longest);
	}
	c2 = out != NULL ? reparse(out, &diag) : NULL;
	tap_ok(c2 != NULL && cf_config_find_session(c2, "cap") != NULL &&
	    cf_config_find_session(c2, "cap")->nallow == PX_LEARN_MAX,
	    "the capped block parses, every item a rule (%s)", diag.nerrors ? diag.errors[0] : "ok");
	cf_diag_free(&diag);
	cf_config_free(c2);
	free(out);

	/* A path the client chose: whatever it holds, each learned item
	 * reads back as one rule for the refused host, its path a prefix of
	 * the request's; none allows a host the client never asked for. */
	{
		static const char *const hostile[] = {
			"/x,*.attacker.test:1-65535", "/y,169.254.169.254:80", "/z *.attacker.test:22",
			"/q#,*.attacker.test:22", "/w',*.attacker.test:22", "/v\",*.attacker.test:22",
			"/*.attacker.test", "/u\t*.attacker.test:22", "/t\xc3\xa9,*.attacker.test:22",
			"/s%41,*.attacker.test:22",
		};
		struct cf_host evil = host("foo.attacker.test"), meta = host("169.254.169.254");
		const struct cf_session *ds;
		int wide = 0, foreign = 0;

		h = host("paths.test");
		for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
			px_learn_add(l, s, "hostile", CF_MODE_HTTP, &h, 80, "GET", hostile[i],
			    CF_R_PATH_NOT_ALLOWED, s->allow[0], NULL);
		out = px_learn_render(l, "hostile", 0);
		for (i = 0; out != NULL && out[i]; i += strcspn(out + i, "\n") + (out[i + strcspn(out + i, "\n")] != 0))
			tap_diag("%.*s", (int)strcspn(out + i, "\n"), out + i);
		c2 = out != NULL ? reparse(out, &diag) : NULL;
		ds = c2 != NULL ? cf_config_find_session(c2, "hostile") : NULL;
		tap_ok(ds != NULL, "the hostile paths' block parses (%s)", diag.nerrors ? diag.errors[0] : "ok");
		for (i = 0; ds != NULL && i < ds->nallow; i++) {
			const struct cf_rule *ar = ds->allow[i];
			if ((cf_rule_match_host(ar, &evil) && cf_rule_match_port(ar, CF_MODE_CONNECT, 22)) ||
			    cf_rule_match_host(ar, &meta))
				wide++;
			if (!cf_rule_match_host(ar, &h) || !cf_rule_match_port(ar, CF_MODE_HTTP, 80) ||
			    ar->path == NULL)
				foreign++;
		}
		tap_ok(ds != NULL && wide == 0, "no learned rule allows a host the client never asked for");
		tap_ok(ds != NULL && foreign == 0, "every learned rule is paths.test on 80 with a prefix");
		tap_ok(ds != NULL && ds->nallow == (size_t)count(out, "\nallow_hosts = "),
		    "each learned line is one rule");
		tap_ok(out != NULL && strstr(out, "\nallow_hosts = paths.test/x private\n") != NULL &&
		    strstr(out, "\nallow_hosts = paths.test/ private\n") != NULL,
		    "a path is cut before the first byte the reader would split on");
		{
			/* Every line holding the client's text is a comment
			 * about its first request. */
			const char *p = out, *nl;
			int leaked = 0;

			while (p != NULL && *p) {
				nl = strchr(p, '\n');
				if (memmem(p, nl ? (size_t)(nl - p) : strlen(p), "attacker", 8) != NULL &&
				    strncmp(p, "# 1 request, first GET /", 24) != 0)
					leaked++;
				p = nl ? nl + 1 : NULL;
			}
			tap_ok(out != NULL && leaked == 0 &&
			    count(out, "--allow '") == count(out, "\nallow_hosts = "),
			    "the flags hold the same items; the client's bytes are in comments only");
		}
		cf_diag_free(&diag);
		cf_config_free(c2);
		free(out);
	}

	px_learn_free(l);
	px_learn_free(NULL);
	cf_config_free(c);
	return tap_done();
}
