/*
 * tests/unit/test-bridge-env.c: the environment postern-bridge gives CMD.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "bridge/env.h"
#include "tests/unit/tap.h"

static bool
has(char **v, const char *entry)
{
	size_t i;

	for (i = 0; v[i] != NULL; i++)
		if (strcmp(v[i], entry) == 0)
			return true;
	return false;
}

static bool
has_name(char **v, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; v[i] != NULL; i++)
		if (strncmp(v[i], name, n) == 0 && v[i][n] == '=')
			return true;
	return false;
}

static size_t
count(char **v)
{
	size_t n = 0;

	while (v[n] != NULL)
		n++;
	return n;
}

int
main(void)
{
	char *src[] = {
		"PATH=/usr/bin:/bin", "HOME=/home/agent", "USER=agent",
		"LOGNAME=agent", "TERM=xterm", "LANG=C.UTF-8", "LC_ALL=C",
		"LC_CTYPE=C.UTF-8", "TZ=UTC", "TMPDIR=/tmp", "SHELL=/bin/sh",
		"PWD=/work",
		"ANTHROPIC_API_KEY=sk-ant-secret", "AWS_SECRET_ACCESS_KEY=xyz",
		"LD_PRELOAD=/evil.so", "HTTP_PROXY=http://launcher:1",
		"https_proxy=http://launcher:2", "NO_PROXY=*", "KEEPME=1",
		"PATH=/second/path", "=novalue", "NOEQUALS", "LC_=x",
		"PATHX=/x", "PAT=/y", "SSL_CERT_FILE=/etc/pki/ca.pem",
		"NODE_EXTRA_CA_CERTS=/etc/pki/x.pem", "NODE_USE_ENV_PROXY=0", NULL,
	};
	char wipe0[] = "SECRET=abc", wipe1[] = "X=1";
	char *wipev[] = { wipe0, wipe1, NULL };
	const char *extra[] = { "KEEPME", "HTTP_PROXY" };
	static const char *const proxies[] = {
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
		"ALL_PROXY", "all_proxy",
	};
	struct br_env *e;
	char **v, entry[128];
	size_t i;

	e = br_env_new(src, NULL, 0, "127.0.0.1:3128");
	tap_ok(e != NULL, "built");
	v = br_env_vector(e);
	tap_ok(has(v, "PATH=/usr/bin:/bin") && !has(v, "PATH=/second/path"),
	    "PATH kept, first occurrence wins");
	tap_ok(has(v, "HOME=/home/agent") && has(v, "USER=agent") &&
	    has(v, "LOGNAME=agent") && has(v, "TERM=xterm") &&
	    has(v, "LANG=C.UTF-8") && has(v, "TZ=UTC") && has(v, "TMPDIR=/tmp") &&
	    has(v, "SHELL=/bin/sh") && has(v, "PWD=/work"), "the fixed list is kept");
	tap_ok(has(v, "LC_ALL=C") && has(v, "LC_CTYPE=C.UTF-8") && !has_name(v, "LC_"),
	    "LC_* kept, a bare LC_ is not");
	tap_ok(!has_name(v, "ANTHROPIC_API_KEY") && !has_name(v, "AWS_SECRET_ACCESS_KEY"),
	    "credentials dropped");
	tap_ok(!has_name(v, "LD_PRELOAD") && !has_name(v, "KEEPME") &&
	    !has_name(v, "PATHX") && !has_name(v, "PAT"),
	    "everything else dropped, names compared whole");
	for (i = 0; i < sizeof(proxies) / sizeof(proxies[0]); i++) {
		snprintf(entry, sizeof(entry), "%s=%s://127.0.0.1:3128", proxies[i],
		    strcasecmp(proxies[i], "ALL_PROXY") == 0 ? "socks5h" : "http");
		tap_ok(has(v, entry), "%s set to the bridge", proxies[i]);
	}
	tap_ok(has(v, "NO_PROXY=localhost,127.0.0.1,::1") &&
	    has(v, "no_proxy=localhost,127.0.0.1,::1") && !has(v, "NO_PROXY=*"),
	    "NO_PROXY and no_proxy: loopback only, the launcher's replaced");
	tap_ok(!has(v, "HTTP_PROXY=http://launcher:1") &&
	    !has(v, "https_proxy=http://launcher:2"), "launcher's proxy settings replaced");
	tap_ok(has(v, "SSL_CERT_FILE=/etc/pki/ca.pem") &&
	    has(v, "NODE_EXTRA_CA_CERTS=/etc/pki/x.pem"), "certificate-bundle paths kept");
	tap_ok(has(v, "NODE_USE_ENV_PROXY=1") && !has(v, "NODE_USE_ENV_PROXY=0"),
	    "NODE_USE_ENV_PROXY=1, the launcher's replaced");
	tap_ok(count(v) == 12 + 2 + 6 + 2 + 1, "exactly 23 entries (%zu)", count(v));
	br_env_free(e);

	e = br_env_new(src, extra, 2, "[::1]:8080");
	v = br_env_vector(e);
	tap_ok(e != NULL && has(v, "KEEPME=1"), "--env KEEPME passes it");
	tap_ok(has(v, "HTTP_PROXY=http://[::1]:8080") &&
	    !has(v, "HTTP_PROXY=http://launcher:1"),
	    "--env HTTP_PROXY does not beat the bridge's own");
	br_env_free(e);

	e = br_env_new(src, extra, 2, NULL);
	v = br_env_vector(e);
	tap_ok(e != NULL && has(v, "HTTP_PROXY=http://launcher:1") &&
	    !has_name(v, "https_proxy") && !has_name(v, "NO_PROXY"),
	    "--no-env: no proxy variables but those asked for with --env");
	br_env_free(e);

	e = br_env_new(NULL, NULL, 0, NULL);
	tap_ok(e != NULL && count(br_env_vector(e)) == 0, "empty source, empty result");
	br_env_free(e);
	br_env_free(NULL);
	tap_ok(1, "br_env_free(NULL) is a no-op");

	br_env_wipe(wipev);
	tap_ok(memcmp(wipe0, "\0\0\0\0\0\0\0\0\0\0", 10) == 0 && wipe1[0] == '\0' &&
	    wipe1[2] == '\0' && wipev[0] == wipe0, "wipe zeroes the strings in place");
	return tap_done();
}
