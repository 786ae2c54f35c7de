/*
 * tests/unit/test-parent.c: the parent-proxy keys (conf/parent.c): each
 * bad value is FILE:LINE and why, a session takes [defaults]' keys it
 * does not set, the credential becomes Basic and is named by its source
 * only, and upstream_proxy_direct picks the hosts that go direct.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conf/host.h"
#include "conf/parent.h"
#include "tests/unit/tap.h"
#include "tests/unit/conferr.h"

#define HEAD "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = a.test\n"

static const struct err_case err_cases[] = {
	{ "https", HEAD "upstream_proxy = https://p.test:3128\n", "t.ini:5: upstream_proxy: only http://" },
	{ "socks", HEAD "upstream_proxy = socks5://p.test:1080\n", "t.ini:5: upstream_proxy: only http://" },
	{ "no scheme", HEAD "upstream_proxy = p.test:3128\n", "t.ini:5: upstream_proxy: write it as http://" },
	{ "userinfo", HEAD "upstream_proxy = http://u:pw@p.test:3128\n",
	    "t.ini:5: upstream_proxy: no user:password in the URL" },
	{ "no port", HEAD "upstream_proxy = http://p.test\n", "t.ini:5: upstream_proxy: the URL needs its port" },
	{ "v6 no port", HEAD "upstream_proxy = http://[fd00::1]\n", "t.ini:5: upstream_proxy: the URL needs its port" },
	{ "path", HEAD "upstream_proxy = http://p.test:3128/x\n", "t.ini:5: upstream_proxy: the URL is http://HOST:PORT" },
	{ "bad host", HEAD "upstream_proxy = http://p..test:3128\n", "t.ini:5: upstream_proxy: " },
	{ "port 0", HEAD "upstream_proxy = http://p.test:0\n", "t.ini:5: upstream_proxy: " },
	{ "auth form", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy_auth = user:pw\n",
	    "t.ini:6: upstream_proxy_auth: write env:VARIABLE or file:PATH" },
	{ "auth alone", HEAD "upstream_proxy_auth = env:X\n", "t.ini:5: upstream_proxy_auth without upstream_proxy" },
	{ "direct alone", "[proxy]\nlisten = tcp:127.0.0.1:3128\n[session s]\nlisten = unix:/s\n"
	    "upstream_proxy_direct = a.test\n", "t.ini:5: upstream_proxy_direct without upstream_proxy" },
	{ "direct item", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy_direct = a.test, x*.test\n",
	    "t.ini:6: upstream_proxy_direct: a wildcard is only *.DOMAIN" },
	{ "direct empty", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy_direct = a.test,,b.test\n",
	    "t.ini:6: upstream_proxy_direct: empty item" },
	{ "names", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy_names = maybe\n",
	    "t.ini:6: upstream_proxy_names: yes or no" },
	{ "twice", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy = http://q.test:3128\n",
	    "t.ini:6: upstream_proxy is given twice" },
	{ "in proxy", "[proxy]\nlisten = tcp:127.0.0.1:3128\nupstream_proxy = http://p.test:3128\n",
	    "t.ini:3: upstream_proxy belongs in" },
	{ "env unset", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy_auth = env:PX_PARENT_UNSET\n",
	    "t.ini:6: upstream_proxy_auth = env:PX_PARENT_UNSET: the variable is not set" },
	{ "no colon", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy_auth = env:PX_PARENT_NOCOLON\n",
	    "t.ini:6: upstream_proxy_auth = env:PX_PARENT_NOCOLON: the credential is user:password" },
	{ "own listener", HEAD "upstream_proxy = http://127.0.0.1:3128\n",
	    "t.ini:5: upstream_proxy: http://127.0.0.1:3128 is the proxy's own listener (line 2)" },
	{ "own wildcard listener", "[proxy]\nlisten = tcp:0.0.0.0:3128\n[defaults]\nallow_hosts = a.test\n"
	    "upstream_proxy = http://127.0.0.1:3128\n", "t.ini:5: upstream_proxy: http://127.0.0.1:3128 is the proxy's own" },
	{ "file missing", HEAD "upstream_proxy = http://p.test:3128\nupstream_proxy_auth = file:/nonexistent/c\n",
	    "t.ini:6: upstream_proxy_auth = file:/nonexistent/c: cannot open the file" },
};

static const struct cf_parent *
parent_for(const struct cf_config *c, const char *sess, const char *host)
{
	struct cf_host h;
	const char *why;

	if (cf_host_parse(host, strlen(host), 0, &h, &why) != 0)
		return NULL;
	return cf_session_parent(cf_config_find_session(c, sess), &h);
}

int
main(void)
{
	static const char good[] = "[proxy]\nlisten = tcp:127.0.0.1:3128\n"
	    "[defaults]\nallow_hosts = a.test\n"
	    "upstream_proxy = http://Proxy.Corp.test:3128/\n"
	    "upstream_proxy_auth = env:PX_PARENT_CRED\n"
	    "upstream_proxy_direct = intra.test, *.corp.test, 10.1.2.3\n"
	    "[session own]\nlisten = unix:/own\n"
	    "upstream_proxy = http://[fd00::8]:8080\nupstream_proxy_names = yes\n"
	    "[session inherit]\nlisten = unix:/inherit\n";
	struct cf_diag d;
	struct cf_config *c;
	const struct cf_parent *p;
	size_t i;

	setenv("PX_PARENT_NOCOLON", "nocolon", 1);
	expect_refused(err_cases, sizeof(err_cases) / sizeof(err_cases[0]));

	/* The value never shows in an error, whatever is wrong with it. */
	setenv("PX_PARENT_CRED", "user:secret-\x01", 1);
	memset(&d, 0, sizeof(d));
	c = cf_config_parse("t.ini", good, strlen(good), NULL, &d);
	tap_ok(c == NULL && has_error(&d, "t.ini:6: upstream_proxy_auth = env:PX_PARENT_CRED: the credential "
	    "holds a control character") && !has_error(&d, "secret-"),
	    "a bad credential is named by its source, never shown");
	cf_config_free(c);
	cf_diag_free(&d);

	setenv("PX_PARENT_CRED", "alice:s3cret", 1);
	memset(&d, 0, sizeof(d));
	c = cf_config_parse("t.ini", good, strlen(good), NULL, &d);
	tap_ok(c != NULL, "a good config builds (%s)", d.nerrors ? d.errors[0] : "ok");
	if (c == NULL)
		return tap_done();
	p = parent_for(c, "default", "api.test");
	tap_ok(p != NULL && p->port == 3128 && strcmp(p->host.name, "proxy.corp.test") == 0 &&
	    strcmp(p->text, "http://proxy.corp.test:3128") == 0 && !p->names,
	    "[defaults]: the parent, its name normalised (%s)", p ? p->text : "none");
	tap_ok(p != NULL && p->auth != NULL && strcmp(p->auth, "Basic YWxpY2U6czNjcmV0") == 0,
	    "the credential is Basic base64(user:password)");
	tap_ok(parent_for(c, "default", "intra.test") == NULL, "a direct name goes direct");
	tap_ok(parent_for(c, "default", "a.b.corp.test") == NULL, "*.corp.test: a name under it goes direct");
	tap_ok(parent_for(c, "default", "corp.test") != NULL, "*.corp.test: not corp.test itself");
	tap_ok(parent_for(c, "default", "xcorp.test") != NULL, "*.corp.test: not xcorp.test");
	tap_ok(parent_for(c, "default", "10.1.2.3") == NULL, "a direct address goes direct");
	tap_ok(parent_for(c, "default", "10.1.2.4") != NULL, "another address goes through the parent");
	p = parent_for(c, "own", "api.test");
	tap_ok(p != NULL && p->host.kind == CF_HOST_IPV6 && p->port == 8080 && p->names &&
	    strcmp(p->text, "http://[fd00::8]:8080") == 0,
	    "a session's own upstream_proxy wins (%s)", p ? p->text : "none");
	tap_ok(p != NULL && p->auth != NULL && parent_for(c, "own", "intra.test") == NULL,
	    "and it takes [defaults]' keys it does not set, key by key");
	p = parent_for(c, "inherit", "api.test");
	tap_ok(p != NULL && strcmp(p->text, "http://proxy.corp.test:3128") == 0,
	    "a session without the keys takes [defaults]'");
	cf_config_free(c);
	cf_diag_free(&d);

	{
		static const char none[] = HEAD;

		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", none, strlen(none), NULL, &d);
		tap_ok(c != NULL && parent_for(c, "default", "api.test") == NULL, "no upstream_proxy: direct");
		cf_config_free(c);
		cf_diag_free(&d);
	}
	return tap_done();
}
