/*
 * tests/unit/test-rule.c: the host-pattern grammar and the decision
 * (cf_decide, cf_decide_addr), case tables over a real parsed config.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "conf/config.h"
#include "tests/unit/tap.h"

struct pat_case {
	const char *item;
	int ok;
};

static const struct pat_case pat_cases[] = {
	{ "example.com", 1 },
	{ "*.example.com", 1 },
	{ ".example.com", 1 },
	{ "example.com:443", 1 },
	{ "example.com:8000-8099", 1 },
	{ "example.com:*", 1 },
	{ "10.0.0.5", 1 },
	{ "10.0.0.0/8:8080", 1 },
	{ "[fd00::1]:443", 1 },
	{ "[fd00::]/8:443", 1 },
	{ "[fd00::/8]:443", 1 },
	{ "fd00::/8", 1 },
	{ "control.internal:8080/hooks/ private", 1 },
	{ "example.com private", 1 },
	{ "*", 0 },
	{ "*.com", 0 },
	{ ".com", 0 },
	{ "foo.*.test", 0 },
	{ "*foo.test", 0 },
	{ "f*o.test", 0 },
	{ "**.test", 0 },
	{ "*.*.test", 0 },
	{ "example.com:0", 0 },
	{ "example.com:65536", 0 },
	{ "example.com:0443", 0 },
	{ "example.com:99-10", 0 },
	{ "example.com:", 0 },
	{ "example.com extra", 0 },
	{ "example.com PRIVATE", 0 },
	{ "10.0.0.1/8", 0 },        /* host bits set */
	{ "10.0.0.0/33", 0 },
	{ "0x7f.1", 0 },
	{ "127.1", 0 },
	{ "user@example.com", 0 },
	{ "b\xc3\xbc" "cher.test", 0 },
	{ "example.com/../x", 0 },
	{ "example.com/a%2e%2e/", 0 },
	{ "example.com/a;b/", 0 },
	{ "example.com.", 1 },
	{ "example.com..", 0 },
	{ "", 0 },
	{ "[fe80::1%eth0]", 0 },
};

struct dec_case {
	const char *session;
	enum cf_mode mode;
	const char *host;
	unsigned port;
	const char *path;
	int allow;
	const char *reason;
};

static const char conf_text[] =
	"[proxy]\n"
	"listen = tcp:127.0.0.1:3128\n"
	"listen = tcp:0.0.0.0:3130\n"
	"listen = tcp:[::]:3131\n"
	"[defaults]\n"
	"allow_hosts = api.anthropic.com, *.example.com\n"
	"allow_hosts = .apex.test\n"
	"allow_hosts = ports.test:8000-8099, any.test:*\n"
	"allow_hosts = control.internal:8080/hooks/ private\n"
	"allow_hosts = 10.0.0.0/8:8080\n"
	"allow_hosts = [fd00::1]:443\n"
	"allow_hosts = rebind.test, privok.test private\n"
	"allow_hosts = deny.example.com\n"
	"deny_hosts = bad.example.com, Deny.Example.COM.\n"
	"deny_hosts = 10.9.0.0/16\n"
	"[session s1]\n"
	"listen = unix:/tmp/s1.sock\n"
	"allow_hosts = only-s1.test\n"
	"deny_hosts = api.anthropic.com:443\n";

static const struct dec_case dec_cases[] = {
	{ "default", CF_MODE_CONNECT, "api.anthropic.com", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "API.Anthropic.com.", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "api.anthropic.com", 8443, NULL, 0, "port_not_allowed" },
	{ "default", CF_MODE_HTTP, "api.anthropic.com", 80, "/", 1, "allowed" },
	{ "default", CF_MODE_HTTP, "api.anthropic.com", 443, "/", 0, "port_not_allowed" },
	{ "default", CF_MODE_CONNECT, "evil.test", 443, NULL, 0, "host_not_allowed" },
	/* Wildcards: below only, never a look-alike. */
	{ "default", CF_MODE_CONNECT, "a.example.com", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "a.b.c.example.com", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "example.com", 443, NULL, 0, "host_not_allowed" },
	{ "default", CF_MODE_CONNECT, "evilexample.com", 443, NULL, 0, "host_not_allowed" },
	{ "default", CF_MODE_CONNECT, "example.com.evil.net", 443, NULL, 0, "host_not_allowed" },
	{ "default", CF_MODE_CONNECT, "xexample.com", 443, NULL, 0, "host_not_allowed" },
	{ "default", CF_MODE_CONNECT, "apex.test", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "x.apex.test", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "xapex.test", 443, NULL, 0, "host_not_allowed" },
	/* Deny wins, whatever the case or trailing dot on either side. */
	{ "default", CF_MODE_CONNECT, "bad.example.com", 443, NULL, 0, "denied_by_rule" },
	{ "default", CF_MODE_CONNECT, "BAD.EXAMPLE.COM.", 443, NULL, 0, "denied_by_rule" },
	{ "default", CF_MODE_CONNECT, "deny.example.com", 443, NULL, 0, "denied_by_rule" },
	{ "default", CF_MODE_HTTP, "deny.example.com", 8080, "/", 0, "denied_by_rule" },
	{ "default", CF_MODE_CONNECT, "sub.bad.example.com", 443, NULL, 1, "allowed" },
	/* Ports. */
	{ "default", CF_MODE_CONNECT, "ports.test", 8000, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "ports.test", 8099, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "ports.test", 7999, NULL, 0, "port_not_allowed" },
	{ "default", CF_MODE_CONNECT, "ports.test", 8100, NULL, 0, "port_not_allowed" },
	{ "default", CF_MODE_CONNECT, "ports.test", 443, NULL, 0, "port_not_allowed" },
	{ "default", CF_MODE_CONNECT, "any.test", 1, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "any.test", 65535, NULL, 1, "allowed" },
	/* Path prefixes: plain HTTP only, no dot-segment escapes. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x", 1, "allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/", 1, "allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/../admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%2e%2e/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/..%2fadmin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/a\\..\\b", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x?a=/../", 1, "allowed" },
	/* Back-end-specific traversals (issue 12 item 10): Tomcat/Spring path
	 * parameters, escapes of anything but unreserved characters. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/..;/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/.;/..;/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x;jsessionid=1", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks;/../admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%c0%ae%c0%ae/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%252e%252e/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/..%00/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%ef%bc%8e%ef%bc%8e/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%2E%2E/admin", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%5C", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%20x", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%3b", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%4", 0, "path_not_allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%zz", 0, "path_not_allowed" },
	/* Escapes of unreserved characters mean the bare character: kept. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%41%7a%30-%5f%7E", 1, "allowed" },
	/* The query is not the path: ";" and escapes there are the back end's. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x?a=..;/b&c=%00%252e", 1, "allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x#..;/admin", 1, "allowed" },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks?/x/", 0, "path_not_allowed" },
	/* A host rule without a path is not narrowed. */
	{ "default", CF_MODE_HTTP, "api.anthropic.com", 80, "/a/..;/b%00", 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "control.internal", 8080, NULL, 0, "host_not_allowed" },
	/* Addresses only when written so. */
	{ "default", CF_MODE_CONNECT, "10.1.2.3", 8080, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "10.1.2.3", 443, NULL, 0, "port_not_allowed" },
	{ "default", CF_MODE_CONNECT, "11.1.2.3", 8080, NULL, 0, "host_not_allowed" },
	{ "default", CF_MODE_CONNECT, "[fd00::1]", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "[fd00::2]", 443, NULL, 0, "host_not_allowed" },
	/* Sessions layer on [defaults]; their own deny wins. */
	{ "s1", CF_MODE_CONNECT, "only-s1.test", 443, NULL, 1, "allowed" },
	{ "default", CF_MODE_CONNECT, "only-s1.test", 443, NULL, 0, "host_not_allowed" },
	{ "s1", CF_MODE_CONNECT, "a.example.com", 443, NULL, 1, "allowed" },
	{ "s1", CF_MODE_CONNECT, "api.anthropic.com", 443, NULL, 0, "denied_by_rule" },
	{ "s1", CF_MODE_CONNECT, "bad.example.com", 443, NULL, 0, "denied_by_rule" },
};

struct addr_case {
	const char *host;
	unsigned port;
	const char *addr;
	int allow;
	const char *reason;
};

static const struct addr_case addr_cases[] = {
	{ "rebind.test", 443, "93.184.216.34", 1, "allowed" },
	{ "rebind.test", 443, "127.0.0.1", 0, "private_address" },
	{ "rebind.test", 443, "169.254.169.254", 0, "private_address" },
	{ "rebind.test", 443, "10.200.1.3", 0, "private_address" },
	{ "rebind.test", 443, "::ffff:127.0.0.1", 0, "private_address" },
	{ "rebind.test", 443, "::1", 0, "private_address" },
	{ "privok.test", 443, "10.200.1.3", 1, "allowed" },
	{ "privok.test", 443, "127.0.0.1", 1, "allowed" },
	/* The proxy's own listener, even with "private". */
	{ "privok.test", 3128, "127.0.0.1", 0, "private_address" },
	/* An address deny rule applies to resolved addresses too. */
	{ "rebind.test", 443, "10.9.1.1", 0, "denied_by_rule" },
	{ "privok.test", 443, "10.9.1.1", 0, "denied_by_rule" },
	/* A literal inside the rule's own range is allowed without "private". */
	{ "10.1.2.3", 8080, "10.1.2.3", 1, "allowed" },
	/* IPv6 spellings of an IPv4 address meet the IPv4 rules (issue 12). */
	{ "privok.test", 443, "::ffff:10.9.1.1", 0, "denied_by_rule" },
	{ "rebind.test", 443, "::ffff:10.9.1.1", 0, "denied_by_rule" },
	{ "privok.test", 443, "64:ff9b::a09:101", 0, "denied_by_rule" },
	{ "privok.test", 443, "::ffff:10.8.1.1", 1, "allowed" },
	{ "10.1.2.3", 8080, "::ffff:10.1.2.3", 1, "allowed" },
	{ "privok.test", 3128, "::ffff:127.0.0.1", 0, "private_address" },
	{ "privok.test", 3128, "64:ff9b::7f00:1", 0, "private_address" },
	{ "privok.test", 3129, "::ffff:127.0.0.1", 1, "allowed" },
	/* The unspecified address is the host itself (issue 13, --forward). */
	{ "privok.test", 3128, "0.0.0.0", 0, "private_address" },
	{ "privok.test", 3128, "::ffff:0.0.0.0", 0, "private_address" },
	{ "privok.test", 3129, "0.0.0.0", 1, "allowed" },
	/* A wildcard listener takes every local address on its port. */
	{ "privok.test", 3130, "127.0.0.1", 0, "private_address" },
	{ "privok.test", 3130, "127.0.0.2", 0, "private_address" },
	{ "privok.test", 3130, "10.200.1.3", 0, "private_address" },
	{ "privok.test", 3130, "0.0.0.0", 0, "private_address" },
	{ "privok.test", 3130, "::1", 1, "allowed" },
	{ "privok.test", 3131, "127.0.0.1", 0, "private_address" },
	{ "privok.test", 3131, "::1", 0, "private_address" },
	{ "privok.test", 3131, "::", 0, "private_address" },
	{ "privok.test", 3131, "fd00::5", 0, "private_address" },
	{ "privok.test", 3132, "127.0.0.1", 1, "allowed" },
	{ "rebind.test", 443, "64:ff9b:1::a9fe:a9fe", 0, "private_address" },
	{ "rebind.test", 443, "::a9fe:a9fe", 0, "private_address" },
	{ "rebind.test", 443, "fec0::1", 0, "private_address" },
};


/* Fill SS with ADDR (IPv4 or IPv6 text) and PORT. */
static void
sa_fill(struct sockaddr_storage *ss, const char *addr, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':') != NULL) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &sin6->sin6_addr);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, addr, &sin->sin_addr);
	}
}

/*
 * A host with 20 addresses whose 17th (past the 16 the proxy dials) is
 * ODD, under the rule that allows HOST: cf_decide_addrs() must see it.
 */
static void
many_case(const struct cf_config *c, const char *host, const char *base, const char *odd,
    uint16_t port, int allow, const char *reason, const char *detail_has)
{
	const struct cf_session *s = cf_config_find_session(c, "default");
	struct sockaddr_storage addrs[20];
	struct cf_decision d, ad;
	struct cf_host h;
	const char *why;
	char a[64];
	size_t i, bad = 99;
	int ok;

	cf_host_parse(host, strlen(host), 0, &h, &why);
	cf_decide(s, CF_MODE_CONNECT, &h, 443, NULL, 0, &d);
	for (i = 0; i < 20; i++) {
		snprintf(a, sizeof(a), "%s%zu", base, i + 1);
		sa_fill(&addrs[i], i == 16 && odd != NULL ? odd : a, port);
	}
	ok = d.allow && cf_decide_addrs(c, s, &d, addrs, 20, &ad, &bad);
	tap_ok(d.allow && ok == allow && strcmp(cf_reason_code(ad.reason), reason) == 0 &&
	    (allow ? bad == 0 : bad == 16) &&
	    (detail_has == NULL || strstr(ad.detail, detail_has) != NULL),
	    "%s, 20 addresses %s*, the 17th %s, port %u -> %s at %zu (%s)", host, base,
	    odd ? odd : "like the rest", port, reason, bad, ad.detail);
}

int
main(void)
{
	struct cf_config *c;
	struct cf_diag diag;
	size_t i;

	for (i = 0; i < sizeof(pat_cases) / sizeof(pat_cases[0]); i++) {
		struct cf_rule r;
		const char *why = NULL;
		int rc = cf_rule_parse(pat_cases[i].item, strlen(pat_cases[i].item), CF_RULE_ALLOW, &r, &why);
		tap_ok((rc == 0) == pat_cases[i].ok, "pattern '%s' %s (%s)", pat_cases[i].item,
		    pat_cases[i].ok ? "accepted" : "refused", rc ? why : "ok");
		if (rc == 0)
			cf_rule_clear(&r);
	}
	{
		struct cf_rule r;
		const char *why;
		tap_ok(cf_rule_parse("x.test/a/", 9, CF_RULE_DENY, &r, &why) != 0,
		    "a deny rule cannot have a path");
		tap_ok(cf_rule_parse("x.test private", 14, CF_RULE_DENY, &r, &why) != 0,
		    "a deny rule cannot say private");
		memset(&r, 0, sizeof(r));
		tap_ok(cf_rule_parse("https://x.test", 14, CF_RULE_DENY, &r, &why) == 0 &&
		    !r.port_given && strcmp(r.taken_as, "x.test") == 0,
		    "a deny URL without a port denies every port, not just 443");
		cf_rule_clear(&r);
		memset(&r, 0, sizeof(r));
		tap_ok(cf_rule_parse("https://x.test:8443", 19, CF_RULE_DENY, &r, &why) == 0 &&
		    r.port_given && r.port_lo == 8443, "a deny URL with a port denies that port");
		cf_rule_clear(&r);
	}

	{
		/* A pasted URL: what it is taken as, or why it cannot be a rule. */
		static const struct {
			const char *item, *taken_as; /* NULL: refused */
			int port_lo;
			const char *path;
		} url_cases[] = {
			{ "https://github.com", "github.com:443", 443, NULL },
			{ "https://github.com/", "github.com:443", 443, NULL },
			{ "HTTPS://GitHub.com:8443", "GitHub.com:8443", 8443, NULL },
			{ "https://[fd00::1]/", "[fd00::1]:443", 443, NULL },
			{ "http://example.com", "example.com:80", 80, NULL },
			{ "http://example.com:8080/api/", "example.com:8080/api/", 8080, "/api/" },
			{ "http://example.com/api/#frag", "example.com:80/api/", 80, "/api/" },
			{ "https://*.github.com private", "*.github.com:443", 443, NULL },
			{ "https://github.com/org/repo", NULL, 0, NULL },
			{ "https://github.com:", NULL, 0, NULL },
			{ "https://", NULL, 0, NULL },
			{ "https://user@github.com", NULL, 0, NULL },
			{ "http://example.com/a?b=1", NULL, 0, NULL },
			{ "ftp://example.com", NULL, 0, NULL },
		};
		for (i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
			struct cf_rule r;
			const char *why = NULL, *item = url_cases[i].item;
			int rc = cf_rule_parse(item, strlen(item), CF_RULE_ALLOW, &r, &why);
			if (url_cases[i].taken_as == NULL) {
				tap_ok(rc != 0, "URL '%s' refused (%s)", item, rc ? why : "accepted");
				if (rc == 0)
					cf_rule_clear(&r);
				continue;
			}
			tap_ok(rc == 0 && r.taken_as != NULL && strcmp(r.taken_as, url_cases[i].taken_as) == 0 &&
			    r.port_given && r.port_lo == url_cases[i].port_lo && r.port_hi == url_cases[i].port_lo &&
			    (url_cases[i].path == NULL ? r.path == NULL :
			    r.path != NULL && strcmp(r.path, url_cases[i].path) == 0),
			    "URL '%s' taken as %s (%s)", item, url_cases[i].taken_as,
			    rc ? why : r.taken_as ? r.taken_as : "not as a URL");
			if (rc == 0)
				cf_rule_clear(&r);
		}
	}

	memset(&diag, 0, sizeof(diag));
	c = cf_config_parse("t.ini", conf_text, strlen(conf_text), NULL, &diag);
	tap_ok(c != NULL, "decision config parses (%s)", diag.nerrors ? diag.errors[0] : "ok");
	if (c == NULL)
		return tap_done();

	for (i = 0; i < sizeof(dec_cases) / sizeof(dec_cases[0]); i++) {
		const struct dec_case *t = &dec_cases[i];
		const struct cf_session *s = cf_config_find_session(c, t->session);
		struct cf_host h;
		struct cf_decision d;
		const char *why = NULL;

		if (cf_host_parse(t->host, strlen(t->host), 0, &h, &why) != 0) {
			tap_ok(0, "host %s parses (%s)", t->host, why);
			continue;
		}
		cf_decide(s, t->mode, &h, (uint16_t)t->port, t->path, t->path ? strlen(t->path) : 0, &d);
		tap_ok(d.allow == t->allow && strcmp(cf_reason_code(d.reason), t->reason) == 0,
		    "%s %s %s:%u%s%s -> %s %s (%s)", t->session,
		    t->mode == CF_MODE_CONNECT ? "CONNECT" : "HTTP", t->host, t->port,
		    t->path ? " " : "", t->path ? t->path : "", t->allow ? "allow" : "deny", t->reason,
		    d.detail);
	}

	for (i = 0; i < sizeof(addr_cases) / sizeof(addr_cases[0]); i++) {
		const struct addr_case *t = &addr_cases[i];
		const struct cf_session *s = cf_config_find_session(c, "default");
		struct cf_host h;
		struct cf_decision d, ad;
		struct sockaddr_storage ss;
		const char *why;

		memset(&ss, 0, sizeof(ss));
		cf_host_parse(t->host, strlen(t->host), 0, &h, &why);
		cf_decide(s, CF_MODE_CONNECT, &h, (uint16_t)t->port, NULL, 0, &d);
		if (!d.allow) {
			/* For the listener case the rule must allow the port. */
			d.allow = 1;
			d.rule = NULL;
			{
				size_t k;
				for (k = 0; k < s->nallow; k++)
					if (cf_rule_match_host(s->allow[k], &h))
						d.rule = s->allow[k];
			}
		}
		if (strchr(t->addr, ':') != NULL) {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)t->port);
			inet_pton(AF_INET6, t->addr, &sin6->sin6_addr);
		} else {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)t->port);
			inet_pton(AF_INET, t->addr, &sin->sin_addr);
		}
		cf_decide_addr(c, s, &d, (struct sockaddr *)&ss, &ad);
		tap_ok(ad.allow == t->allow && strcmp(cf_reason_code(ad.reason), t->reason) == 0,
		    "%s:%u resolved to %s -> %s (%s)", t->host, t->port, t->addr, t->reason, ad.detail);
	}

	/* Every address is decided, not only the 16 the proxy may dial. */
	many_case(c, "privok.test", "10.200.3.", NULL, 443, 1, "allowed", NULL);
	many_case(c, "privok.test", "10.200.3.", "10.9.0.17", 443, 0, "denied_by_rule", "deny_hosts = 10.9.0.0/16");
	many_case(c, "privok.test", "10.200.3.", "127.0.0.1", 3128, 0, "private_address", "own listener");
	many_case(c, "privok.test", "10.200.3.", "::ffff:127.0.0.1", 3128, 0, "private_address", "own listener");
	many_case(c, "rebind.test", "93.184.9.", NULL, 443, 1, "allowed", NULL);
	many_case(c, "rebind.test", "93.184.9.", "169.254.169.254", 443, 0, "private_address", "never-reachable");
	{
		const struct cf_session *s = cf_config_find_session(c, "default");
		struct cf_decision d, ad;
		size_t bad = 99;

		memset(&d, 0, sizeof(d));
		d.allow = 1;
		tap_ok(cf_decide_addrs(c, s, &d, NULL, 0, &ad, &bad) == 0 && !ad.allow && bad == 0,
		    "no address at all is refused (%s)", ad.detail);
	}

	cf_config_free(c);
	cf_diag_free(&diag);
	return tap_done();
}
