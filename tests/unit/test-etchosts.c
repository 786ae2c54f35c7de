/*
 * tests/unit/test-etchosts.c: whether a hosts(5) text lists a name, for
 * the dns_failure hint (conf/etchosts.h), and the [hosts] pins of a config.
 */
#include "config.h"

#include <string.h>
#include <arpa/inet.h>

#include "conf/config.h"
#include "conf/etchosts.h"
#include "tests/unit/tap.h"

static const char hosts[] =
    "127.0.0.1\tlocalhost\n"
    "# 10.0.0.9 commented.test\n"
    "10.200.1.2 build.internal  Build-Cache.internal. # cache.test\n"
    "::1 ip6-localhost ip6-loopback\r\n"
    "   \n"
    "10.0.0.1";

static const struct {
	const char *name;
	int listed;
} cases[] = {
	{ "localhost", 1 },
	{ "build.internal", 1 },
	{ "build-cache.internal", 1 }, /* case and a trailing dot */
	{ "ip6-loopback", 1 },         /* before a CR */
	{ "commented.test", 0 },       /* in a comment line */
	{ "cache.test", 0 },           /* after a '#' */
	{ "10.200.1.2", 0 },           /* an address is not a name */
	{ "10.0.0.1", 0 },             /* a last line without names */
	{ "build", 0 },                /* no prefix match */
	{ "internal", 0 },
	{ "", 0 },
};

int
main(void)
{
	size_t i;
	struct cf_diag diag;
	struct cf_config *c;
	const struct cf_pin *p;
	static const char conf[] =
	    "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = a.test\n"
	    "[hosts]\nBuild.Internal. = 10.200.1.2, fd00::1 , [fd00::2]\n";
	static const char *const bad[][2] = {
		{ "x.test = 127.1\n", "t.ini:6: [hosts] x.test: not a canonical IPv4 address (127.1)" },
		{ "x.test = fe80::1%eth0\n", "t.ini:6: [hosts] x.test: not an IPv6 address" },
		{ "x.test =\n", "t.ini:6: [hosts] x.test = ADDRESS, ADDRESS, ...: an empty" },
		{ "x.test = 1.2.3.4,\n", "t.ini:6: [hosts] x.test = ADDRESS, ADDRESS, ...: an empty" },
		{ "10.0.0.1 = 10.0.0.2\n", "t.ini:6: [hosts] pins a host name" },
		{ "*.x.test = 10.0.0.2\n", "t.ini:6: [hosts] pins a host name" },
		{ "x.test = 1.2.3.4\nX.test. = 1.2.3.5\n", "t.ini:7: X.test. is pinned twice (first on line 6)" },
		{ "x.test = x.test\n", "t.ini:6: [hosts] x.test: not a canonical IPv4 address" },
	};

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_cmp_int(cf_etchosts_lists(hosts, sizeof(hosts) - 1, cases[i].name), "==", cases[i].listed,
		    "'%s' is %slisted", cases[i].name, cases[i].listed ? "" : "not ");
	/* Nothing is read past LEN: the same text cut before the last name. */
	tap_ok(!cf_etchosts_lists(hosts, strstr(hosts, "ip6-loopback") - hosts + 3, "ip6-loopback"),
	    "a name cut by LEN is not listed");

	memset(&diag, 0, sizeof(diag));
	c = cf_config_parse("t.ini", conf, strlen(conf), NULL, &diag);
	tap_ok(c != NULL, "a [hosts] section parses (%s)", diag.nerrors ? diag.errors[0] : "ok");
	if (c != NULL) {
		char a[INET6_ADDRSTRLEN];
		p = cf_config_pin(c, "build.internal");
		tap_ok(p != NULL && p->naddrs == 3 && p->line == 6, "the name is pinned in normal form, 3 addresses");
		if (p != NULL && p->naddrs == 3) {
			inet_ntop(AF_INET, &((const struct sockaddr_in *)&p->addrs[0])->sin_addr, a, sizeof(a));
			tap_ok(p->addrs[0].ss_family == AF_INET && strcmp(a, "10.200.1.2") == 0, "first 10.200.1.2 (%s)", a);
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&p->addrs[2])->sin6_addr, a, sizeof(a));
			tap_ok(p->addrs[2].ss_family == AF_INET6 && strcmp(a, "fd00::2") == 0, "bracketed fd00::2 (%s)", a);
		}
		tap_ok(cf_config_pin(c, "other.internal") == NULL, "another name is not pinned");
		cf_config_free(c);
	}
	cf_diag_free(&diag);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "%s%s", "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = a.test\n[hosts]\n", bad[i][0]);
		memset(&diag, 0, sizeof(diag));
		c = cf_config_parse("t.ini", text, strlen(text), NULL, &diag);
		tap_ok(c == NULL && diag.nerrors == 1 && strncmp(diag.errors[0], bad[i][1], strlen(bad[i][1])) == 0,
		    "refused: %s", diag.nerrors ? diag.errors[0] : "accepted");
		cf_config_free(c);
		cf_diag_free(&diag);
	}
	return tap_done();
}
