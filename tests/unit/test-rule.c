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
	/* "inspect": one exact name on one port, TLS only. */
	{ "x.test inspect", 1 },
	{ "x.test:8443 inspect", 1 },
	{ "x.test/org/ inspect private", 1 },
	{ "https://x.test/org/ inspect", 1 },
	{ "https://x.test inspect", 1 },
	{ "*.x.test inspect", 0 },
	{ ".x.test inspect", 0 },
	{ "10.0.0.1 inspect", 0 },
	{ "10.0.0.0/8:443 inspect", 0 },
	{ "[fd00::1]:443 inspect", 0 },
	{ "x.test:8000-8099 inspect", 0 },
	{ "x.test:* inspect", 0 },
	{ "http://x.test inspect", 0 },
	{ "http://x.test/a/ inspect", 0 },
	{ "x.test Inspect", 0 },
	{ "x.test inspect=yes", 0 },
	/* Budgets: up=SIZE/WINDOW, rps=N, conns=N. */
	{ "x.test up=1M/h rps=5 conns=4", 1 },
	{ "x.test up=64k/10m", 1 },
	{ "x.test up=100/s", 1 },
	{ "x.test up=2G/7d private", 1 },
	{ "x.test up=1024T/h", 0 },           /* T is no unit */
	{ "x.test up=1m/h", 0 },              /* m is minutes, never a size */
	{ "x.test up=1M", 0 },                /* no window */
	{ "x.test up=1M/", 0 },
	{ "x.test up=1M/w", 0 },
	{ "x.test up=1M/0h", 0 },
	{ "x.test up=0/h", 0 },
	{ "x.test up=/h", 0 },
	{ "x.test up=k/h", 0 },
	{ "x.test up=01M/h", 0 },
	{ "x.test up=-1M/h", 0 },
	{ "x.test up=1M/367d", 0 },
	{ "x.test up=1048577G/h", 0 },        /* over 2^50 bytes */
	{ "x.test up=99999999999999999999/h", 0 },
	{ "x.test up=1M/h up=2M/h", 0 },
	{ "x.test rps=0", 0 },
	{ "x.test rps=", 0 },
	{ "x.test rps=5 rps=5", 0 },
	{ "x.test rps=1000001", 0 },
	{ "x.test rps=5x", 0 },
	{ "x.test conns=0", 0 },
	{ "x.test conns=1 conns=2", 0 },
	{ "x.test conns= 4", 0 },
	{ "x.test Rps=5", 0 },
	/* "methods=": RFC 9110 tokens, a non-empty list, each once. */
	{ "x.test methods=GET", 1 },
	{ "x.test methods=GET,HEAD,M-SEARCH,PROPFIND", 1 },
	{ "x.test/a/ methods=POST inspect private", 1 },
	{ "x.test methods=ABCDEFGHIJKLMNOPQRST", 1 },
	{ "x.test methods=ABCDEFGHIJKLMNOPQRSTU", 0 },
	{ "x.test methods=", 0 },
	{ "x.test methods", 0 },
	{ "x.test methods=GET,", 0 },
	{ "x.test methods=,GET", 0 },
	{ "x.test methods=GET,,HEAD", 0 },
	{ "x.test methods=G(ET", 0 },
	{ "x.test methods=GET;HEAD", 0 },
	{ "x.test methods=GET/HEAD", 0 },
	{ "x.test methods=CONNECT", 0 },
	{ "x.test methods=GET,CONNECT", 0 },
	{ "x.test methods=GET,GET", 0 },
	{ "x.test methods=GET,HEAD,GET", 0 },
	{ "x.test methods=GET methods=HEAD", 0 },
	{ "x.test METHODS=GET", 0 },
	{ "x.test methods=get", 0 },
	{ "x.test methods=Get", 0 },
	{ "x.test methods=GET,example.com", 0 },
	{ "x.test methods=M.SEARCH", 0 },
};

struct dec_case {
	const char *session;
	enum cf_mode mode;
	const char *host;
	unsigned port;
	const char *path;
	int allow;
	const char *reason;
	const char *method; /* NULL: GET for plain HTTP, none otherwise */
};

/*
 * mode = report: what the allowlist refuses is allowed with
 * "would" set and no rule; a deny rule still refuses; an address of the
 * relaxed request in a never-reachable range is still refused; the same
 * requests in an enforcing session are refused as before.
 */
static const char report_text[] =
	"[proxy]\nlisten = tcp:127.0.0.1:3128\n"
	"[defaults]\nallow_hosts = ok.test, ports.test:8080, http://paths.test/api/, m.test methods=GET\n"
	"allow_hosts = lan.test:8443 private\n"
	"deny_hosts = bad.test, 10.9.0.0/16\n"
	"[session r]\nlisten = unix:/r\nmode = report\n";

static const struct {
	const char *session, *host;
	enum cf_mode mode;
	unsigned port;
	const char *path, *method;
	int allow;
	const char *reason, *would; /* would: "allowed" when not relaxed */
} report_dec[] = {
	{ "r", "ok.test", CF_MODE_CONNECT, 443, NULL, NULL, 1, "allowed", "allowed" },
	{ "r", "new.test", CF_MODE_CONNECT, 443, NULL, NULL, 1, "allowed", "host_not_allowed" },
	{ "r", "ports.test", CF_MODE_CONNECT, 9090, NULL, NULL, 1, "allowed", "port_not_allowed" },
	{ "r", "paths.test", CF_MODE_HTTP, 80, "/other", "GET", 1, "allowed", "path_not_allowed" },
	{ "r", "m.test", CF_MODE_HTTP, 80, "/", "POST", 1, "allowed", "method_not_allowed" },
	{ "r", "bad.test", CF_MODE_CONNECT, 443, NULL, NULL, 0, "denied_by_rule", "allowed" },
	{ "r", "bad.test", CF_MODE_HTTP, 80, "/", "GET", 0, "denied_by_rule", "allowed" },
	{ "default", "new.test", CF_MODE_CONNECT, 443, NULL, NULL, 0, "host_not_allowed", "allowed" },
	{ "default", "ports.test", CF_MODE_CONNECT, 9090, NULL, NULL, 0, "port_not_allowed", "allowed" },
	{ "default", "m.test", CF_MODE_HTTP, 80, "/", "POST", 0, "method_not_allowed", "allowed" },
};

static const struct {
	const char *host;
	unsigned port;
	const char *addr;
	int allow;
	const char *reason;
} report_addr[] = {
	{ "new.test", 443, "93.184.9.1", 1, "allowed" },
	{ "new.test", 443, "10.200.0.1", 0, "private_address" },
	{ "new.test", 443, "127.0.0.1", 0, "private_address" },
	{ "new.test", 3128, "127.0.0.1", 0, "private_address" },
	{ "new.test", 443, "169.254.169.254", 0, "private_address" },
	{ "new.test", 443, "10.9.0.1", 0, "denied_by_rule" },
	{ "lan.test", 8443, "10.200.0.1", 1, "allowed" },
	/* Relaxed (port_not_allowed): the host's own rule says private. */
	{ "lan.test", 443, "10.200.0.1", 1, "allowed" },
	{ "ok.test", 443, "10.200.0.1", 0, "private_address" },
};

static void
report_cases(void)
{
	struct cf_diag diag;
	struct cf_config *c;
	size_t i;

	memset(&diag, 0, sizeof(diag));
	c = cf_config_parse("r.ini", report_text, strlen(report_text), NULL, &diag);
	tap_ok(c != NULL && cf_config_find_session(c, "r")->report && !cf_config_find_session(c, "default")->report,
	    "report config parses, session r in report mode (%s)", diag.nerrors ? diag.errors[0] : "ok");
	if (c == NULL)
		return;
	for (i = 0; i < sizeof(report_dec) / sizeof(report_dec[0]); i++) {
		const struct cf_session *s = cf_config_find_session(c, report_dec[i].session);
		struct cf_host h;
		struct cf_decision d;
		const char *why;

		cf_host_parse(report_dec[i].host, strlen(report_dec[i].host), 0, &h, &why);
		cf_decide(s, report_dec[i].mode, &h, (uint16_t)report_dec[i].port, report_dec[i].path,
		    report_dec[i].path ? strlen(report_dec[i].path) : 0, report_dec[i].method, &d);
		tap_ok(d.allow == report_dec[i].allow && strcmp(cf_reason_code(d.reason), report_dec[i].reason) == 0 &&
		    strcmp(cf_reason_code(d.would), report_dec[i].would) == 0 &&
		    (d.would == CF_R_ALLOWED || (d.rule == NULL && strstr(d.detail, "would refuse") != NULL)),
		    "session %s %s:%u -> %s %s, would %s (%s)", report_dec[i].session, report_dec[i].host,
		    report_dec[i].port, report_dec[i].allow ? "allow" : "deny", report_dec[i].reason,
		    report_dec[i].would, d.detail);
	}
	for (i = 0; i < sizeof(report_addr) / sizeof(report_addr[0]); i++) {
		const struct cf_session *s = cf_config_find_session(c, "r");
		struct sockaddr_in sin;
		struct cf_host h;
		struct cf_decision d, ad;
		const char *why;

		cf_host_parse(report_addr[i].host, strlen(report_addr[i].host), 0, &h, &why);
		cf_decide(s, CF_MODE_CONNECT, &h, (uint16_t)report_addr[i].port, NULL, 0, NULL, &d);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)report_addr[i].port);
		inet_pton(AF_INET, report_addr[i].addr, &sin.sin_addr);
		cf_decide_addr(c, s, &d, (struct sockaddr *)&sin, &ad);
		tap_ok(d.allow && ad.allow == report_addr[i].allow &&
		    strcmp(cf_reason_code(ad.reason), report_addr[i].reason) == 0,
		    "report mode: %s:%u at %s -> %s (%s)", report_addr[i].host, report_addr[i].port, report_addr[i].addr,
		    report_addr[i].reason, ad.detail);
	}
	cf_config_free(c);
	cf_diag_free(&diag);
}

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
	"allow_hosts = m.test methods=GET,HEAD\n"
	"allow_hosts = mp.test/api/ methods=POST\n"
	"allow_hosts = both.test methods=GET, both.test/open/\n"
	"allow_hosts = wide.test methods=GET, wide.test\n"
	"allow_hosts = insp.test inspect\n"
	"allow_hosts = https://inspp.test/org/ inspect, inspp.test/pub/ methods=GET inspect\n"
	"allow_hosts = inspm.test:8443 inspect methods=GET\n"
	"deny_hosts = bad.example.com, Deny.Example.COM.\n"
	"deny_hosts = 10.9.0.0/16\n"
	"[session s1]\n"
	"listen = unix:/tmp/s1.sock\n"
	"allow_hosts = only-s1.test\n"
	"deny_hosts = api.anthropic.com:443\n";

static const struct dec_case dec_cases[] = {
	{ "default", CF_MODE_CONNECT, "api.anthropic.com", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "API.Anthropic.com.", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "api.anthropic.com", 8443, NULL, 0, "port_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "api.anthropic.com", 80, "/", 1, "allowed", NULL },
	{ "default", CF_MODE_HTTP, "api.anthropic.com", 443, "/", 0, "port_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "evil.test", 443, NULL, 0, "host_not_allowed", NULL },
	/* Wildcards: below only, never a look-alike. */
	{ "default", CF_MODE_CONNECT, "a.example.com", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "a.b.c.example.com", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "example.com", 443, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "evilexample.com", 443, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "example.com.evil.net", 443, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "xexample.com", 443, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "apex.test", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "x.apex.test", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "xapex.test", 443, NULL, 0, "host_not_allowed", NULL },
	/* Deny wins, whatever the case or trailing dot on either side. */
	{ "default", CF_MODE_CONNECT, "bad.example.com", 443, NULL, 0, "denied_by_rule", NULL },
	{ "default", CF_MODE_CONNECT, "BAD.EXAMPLE.COM.", 443, NULL, 0, "denied_by_rule", NULL },
	{ "default", CF_MODE_CONNECT, "deny.example.com", 443, NULL, 0, "denied_by_rule", NULL },
	{ "default", CF_MODE_HTTP, "deny.example.com", 8080, "/", 0, "denied_by_rule", NULL },
	{ "default", CF_MODE_CONNECT, "sub.bad.example.com", 443, NULL, 1, "allowed", NULL },
	/* Ports. */
	{ "default", CF_MODE_CONNECT, "ports.test", 8000, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "ports.test", 8099, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "ports.test", 7999, NULL, 0, "port_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "ports.test", 8100, NULL, 0, "port_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "ports.test", 443, NULL, 0, "port_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "any.test", 1, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "any.test", 65535, NULL, 1, "allowed", NULL },
	/* Path prefixes: plain HTTP only, no dot-segment escapes. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x", 1, "allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/", 1, "allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/../admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%2e%2e/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/..%2fadmin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/a\\..\\b", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x?a=/../", 1, "allowed", NULL },
	/* Back-end-specific traversals: Tomcat/Spring path
	 * parameters, escapes of anything but unreserved characters. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/..;/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/.;/..;/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x;jsessionid=1", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks;/../admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%c0%ae%c0%ae/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%252e%252e/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/..%00/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%ef%bc%8e%ef%bc%8e/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%2E%2E/admin", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%5C", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%20x", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%3b", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%4", 0, "path_not_allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%zz", 0, "path_not_allowed", NULL },
	/* Escapes of unreserved characters mean the bare character: kept. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/%41%7a%30-%5f%7E", 1, "allowed", NULL },
	/* The query is not the path: ";" and escapes there are the back end's. */
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x?a=..;/b&c=%00%252e", 1, "allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks/x#..;/admin", 1, "allowed", NULL },
	{ "default", CF_MODE_HTTP, "control.internal", 8080, "/hooks?/x/", 0, "path_not_allowed", NULL },
	/* A host rule without a path is not narrowed. */
	{ "default", CF_MODE_HTTP, "api.anthropic.com", 80, "/a/..;/b%00", 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "control.internal", 8080, NULL, 0, "host_not_allowed", NULL },
	/* Addresses only when written so. */
	{ "default", CF_MODE_CONNECT, "10.1.2.3", 8080, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "10.1.2.3", 443, NULL, 0, "port_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "11.1.2.3", 8080, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_CONNECT, "[fd00::1]", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "[fd00::2]", 443, NULL, 0, "host_not_allowed", NULL },
	/* Sessions layer on [defaults]; their own deny wins. */
	{ "s1", CF_MODE_CONNECT, "only-s1.test", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_CONNECT, "only-s1.test", 443, NULL, 0, "host_not_allowed", NULL },
	{ "s1", CF_MODE_CONNECT, "a.example.com", 443, NULL, 1, "allowed", NULL },
	{ "s1", CF_MODE_CONNECT, "api.anthropic.com", 443, NULL, 0, "denied_by_rule", NULL },
	{ "s1", CF_MODE_CONNECT, "bad.example.com", 443, NULL, 0, "denied_by_rule", NULL },
	/* Methods: case-sensitive (RFC 9110 §9.1), plain HTTP and inside a
	 * terminated tunnel; never an opaque tunnel, whose methods nobody sees. */
	{ "default", CF_MODE_HTTP, "m.test", 80, "/", 1, "allowed", "GET" },
	{ "default", CF_MODE_HTTP, "m.test", 80, "/x", 1, "allowed", "HEAD" },
	{ "default", CF_MODE_HTTP, "m.test", 80, "/", 0, "method_not_allowed", "POST" },
	{ "default", CF_MODE_HTTP, "m.test", 80, "/", 0, "method_not_allowed", "get" },
	{ "default", CF_MODE_HTTP, "m.test", 80, "/", 0, "method_not_allowed", "GETX" },
	{ "default", CF_MODE_HTTP, "m.test", 80, "/", 0, "method_not_allowed", "GE" },
	{ "default", CF_MODE_HTTP, "m.test", 8080, "/", 0, "port_not_allowed", "GET" },
	{ "default", CF_MODE_CONNECT, "m.test", 443, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_TLS, "m.test", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_TLS, "m.test", 443, "/", 1, "allowed", "GET" },
	{ "default", CF_MODE_TLS, "m.test", 443, "/", 0, "method_not_allowed", "DELETE" },
	/* A path and methods on one rule: both must hold; the path is
	 * judged first, so a path outside says path_not_allowed. */
	{ "default", CF_MODE_HTTP, "mp.test", 80, "/api/x", 1, "allowed", "POST" },
	{ "default", CF_MODE_HTTP, "mp.test", 80, "/api/x", 0, "method_not_allowed", "GET" },
	{ "default", CF_MODE_HTTP, "mp.test", 80, "/other", 0, "path_not_allowed", "POST" },
	{ "default", CF_MODE_HTTP, "mp.test", 80, "/api/../x", 0, "path_not_allowed", "POST" },
	/* Several rules: any one that admits the request admits it. */
	{ "default", CF_MODE_HTTP, "both.test", 80, "/open/x", 1, "allowed", "POST" },
	{ "default", CF_MODE_HTTP, "both.test", 80, "/x", 1, "allowed", "GET" },
	{ "default", CF_MODE_HTTP, "both.test", 80, "/x", 0, "method_not_allowed", "POST" },
	{ "default", CF_MODE_HTTP, "wide.test", 80, "/x", 1, "allowed", "POST" },
	{ "default", CF_MODE_CONNECT, "wide.test", 443, NULL, 1, "allowed", NULL },
	/* "inspect": never an opaque tunnel; the terminated one, and each
	 * request inside by the rule's path and methods. */
	{ "default", CF_MODE_CONNECT, "insp.test", 443, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_TLS, "insp.test", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_TLS, "insp.test", 443, "/any", 1, "allowed", "DELETE" },
	{ "default", CF_MODE_TLS, "insp.test", 8443, "/any", 0, "port_not_allowed", "GET" },
	{ "default", CF_MODE_HTTP, "insp.test", 80, "/any", 1, "allowed", "GET" },
	{ "default", CF_MODE_TLS, "inspp.test", 443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_TLS, "inspp.test", 443, "/org/repo", 1, "allowed", "POST" },
	{ "default", CF_MODE_TLS, "inspp.test", 443, "/pub/x", 1, "allowed", "GET" },
	{ "default", CF_MODE_TLS, "inspp.test", 443, "/pub/x", 0, "method_not_allowed", "PUT" },
	{ "default", CF_MODE_TLS, "inspp.test", 443, "/other", 0, "path_not_allowed", "GET" },
	{ "default", CF_MODE_TLS, "inspp.test", 443, "/org/%2e%2e/x", 0, "path_not_allowed", "GET" },
	{ "default", CF_MODE_CONNECT, "inspp.test", 443, NULL, 0, "host_not_allowed", NULL },
	{ "default", CF_MODE_TLS, "inspm.test", 8443, NULL, 1, "allowed", NULL },
	{ "default", CF_MODE_TLS, "inspm.test", 8443, "/", 1, "allowed", "GET" },
	{ "default", CF_MODE_TLS, "inspm.test", 8443, "/", 0, "method_not_allowed", "POST" },
	{ "default", CF_MODE_TLS, "inspm.test", 443, NULL, 0, "port_not_allowed", NULL },
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
	/* IPv6 spellings of an IPv4 address meet the IPv4 rules. */
	{ "privok.test", 443, "::ffff:10.9.1.1", 0, "denied_by_rule" },
	{ "rebind.test", 443, "::ffff:10.9.1.1", 0, "denied_by_rule" },
	{ "privok.test", 443, "64:ff9b::a09:101", 0, "denied_by_rule" },
	{ "privok.test", 443, "::ffff:10.8.1.1", 1, "allowed" },
	{ "10.1.2.3", 8080, "::ffff:10.1.2.3", 1, "allowed" },
	{ "privok.test", 3128, "::ffff:127.0.0.1", 0, "private_address" },
	{ "privok.test", 3128, "64:ff9b::7f00:1", 0, "private_address" },
	{ "privok.test", 3129, "::ffff:127.0.0.1", 1, "allowed" },
	/* The unspecified address is the host itself (--forward). */
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
	cf_decide(s, CF_MODE_CONNECT, &h, 443, NULL, 0, NULL, &d);
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
		tap_cmp_int((rc == 0), "==", pat_cases[i].ok, "pattern '%s' %s (%s)", pat_cases[i].item,
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
				tap_cmp_int(rc, "!=", 0, "URL '%s' refused (%s)", item, rc ? why : "accepted");
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

	{
		/* What the flags leave in the rule, and what the errors say. */
		struct cf_rule r;
		const char *why = NULL;

		memset(&r, 0, sizeof(r));
		tap_ok(cf_rule_parse("https://github.com/my-org/ inspect", 34, CF_RULE_ALLOW, &r, &why) == 0 &&
		    r.inspect && r.kind == CF_PAT_EXACT && r.port_lo == 443 && r.path != NULL &&
		    strcmp(r.path, "/my-org/") == 0 && strcmp(r.taken_as, "github.com:443/my-org/") == 0,
		    "https://HOST/PATH/ inspect is HOST:443/PATH/, inspected (%s)", why ? why : "ok");
		cf_rule_clear(&r);
		memset(&r, 0, sizeof(r));
		tap_ok(cf_rule_parse("x.test methods=GET,HEAD", 23, CF_RULE_ALLOW, &r, &why) == 0 &&
		    r.methods != NULL && !r.inspect && cf_rule_match_method(&r, "GET") &&
		    cf_rule_match_method(&r, "HEAD") && !cf_rule_match_method(&r, "HEA") &&
		    !cf_rule_match_method(&r, "head") && !cf_rule_match_method(&r, "GET,HEAD") &&
		    !cf_rule_match_method(&r, "") && !cf_rule_match_method(&r, NULL),
		    "methods=GET,HEAD admits GET and HEAD exactly");
		cf_rule_clear(&r);
		why = NULL;
		tap_ok(cf_rule_parse("https://x.test/org/", 19, CF_RULE_ALLOW, &r, &why) != 0 &&
		    why != NULL && strstr(why, "inspect") != NULL,
		    "an https:// rule with a path points to inspect (%s)", why ? why : "accepted");
		tap_ok(cf_rule_parse("*.x.test inspect", 16, CF_RULE_ALLOW, &r, &why) != 0 &&
		    strstr(why, "exact host name") != NULL, "inspect on a wildcard says why (%s)", why);
		tap_ok(cf_rule_parse("x.test inspect", 14, CF_RULE_DENY, &r, &why) != 0,
		    "a deny rule cannot inspect");
		tap_ok(cf_rule_parse("x.test methods=GET", 18, CF_RULE_DENY, &r, &why) != 0,
		    "a deny rule cannot have methods");
		tap_ok(cf_rule_parse("x.test up=1M/h", 14, CF_RULE_DENY, &r, &why) != 0 &&
		    strstr(why, "deny") != NULL, "a deny rule cannot have a budget (%s)", why);
		tap_ok(cf_rule_parse("x.test conns=2", 14, CF_RULE_DENY, &r, &why) != 0,
		    "a deny rule cannot have conns=");
		{
			/* What the budgets leave in the rule, and how people see them. */
			static const struct {
				const char *item;
				uint64_t up;
				uint32_t window, rps, conns;
				const char *text;
			} bcases[] = {
				{ "x.test up=1M/h rps=5 conns=4", 1048576, 3600, 5, 4,
				  "up 1M per 1h, 5 requests/s, 4 at once" },
				{ "x.test up=64k/10m", 65536, 600, 0, 0, "up 64k per 10m" },
				{ "x.test up=1500/90s", 1500, 90, 0, 0, "up 1500 bytes per 90s" },
				{ "x.test up=3G/2d", UINT64_C(3) << 30, 172800, 0, 0, "up 3G per 2d" },
				{ "x.test up=1024K/60m", 1048576, 3600, 0, 0, "up 1M per 1h" },
				{ "x.test conns=1", 0, 0, 0, 1, "1 at once" },
				{ "x.test rps=2 conns=3", 0, 0, 2, 3, "2 requests/s, 3 at once" },
				{ "x.test", 0, 0, 0, 0, "" },
			};
			char bt[128];
			for (i = 0; i < sizeof(bcases) / sizeof(bcases[0]); i++) {
				int rc;
				memset(&r, 0, sizeof(r));
				rc = cf_rule_parse(bcases[i].item, strlen(bcases[i].item), CF_RULE_ALLOW, &r, &why);
				tap_ok(rc == 0 && r.up_max == bcases[i].up && r.up_window == bcases[i].window &&
				    r.rps == bcases[i].rps && r.conns == bcases[i].conns &&
				    strcmp(cf_rule_budget_text(&r, bt, sizeof(bt)), bcases[i].text) == 0 &&
				    (cf_rule_has_budget(&r) != 0) == (bcases[i].text[0] != '\0'),
				    "'%s' budgets: %s", bcases[i].item, rc == 0 ? bt : why);
				cf_rule_clear(&r);
			}
		}
		why = "";
		tap_ok(cf_rule_parse("x.test up=1M/h up=1M/h", 22, CF_RULE_ALLOW, &r, &why) != 0 &&
		    strstr(why, "twice") != NULL, "up= given twice says so (%s)", why);
		why = "";
		tap_ok(cf_rule_parse("x.test up=1M/w", 14, CF_RULE_ALLOW, &r, &why) != 0 &&
		    strstr(why, "window unit") != NULL, "an unknown window unit says so (%s)", why);
		/* The list splitter: a comma inside methods= continues it. */
		tap_ok(cf_rule_item_len("a.test methods=GET,HEAD, b.test") == 23 &&
		    cf_rule_item_len("a.test methods=GET,HEAD") == 23 &&
		    cf_rule_item_len("a.test, b.test") == 6 &&
		    cf_rule_item_len("a.test methods=GET, b.test") == 18 &&
		    cf_rule_item_len("a.test methods=GET,") == 18 &&
		    cf_rule_item_len("a.test methods=GET,,b") == 18 &&
		    cf_rule_item_len("a.test private,b.test") == 14 &&
		    cf_rule_item_len("xmethods=GET,b.test") == 12,
		    "cf_rule_item_len() keeps methods=GET,HEAD whole");
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
		cf_decide(s, t->mode, &h, (uint16_t)t->port, t->path, t->path ? strlen(t->path) : 0,
		    t->method != NULL ? t->method : t->mode == CF_MODE_HTTP ? "GET" : NULL, &d);
		tap_ok(d.allow == t->allow && strcmp(cf_reason_code(d.reason), t->reason) == 0 &&
		    (d.reason != CF_R_METHOD_NOT_ALLOWED || strstr(d.detail, "admits only") != NULL),
		    "%s %s %s %s:%u%s%s -> %s %s (%s)", t->session,
		    t->mode == CF_MODE_CONNECT ? "CONNECT" : t->mode == CF_MODE_TLS ? "TLS" : "HTTP",
		    t->method ? t->method : "-", t->host, t->port,
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
		cf_decide(s, CF_MODE_CONNECT, &h, (uint16_t)t->port, NULL, 0, NULL, &d);
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

	{
		/* Inspected hosts are terminated, on the rule's port, and join
		 * the CA's names; a host narrowed by methods alone is not. */
		const struct cf_session *s = cf_config_find_session(c, "default");
		const char *const *names;
		size_t n = cf_session_terminated_hosts(s, &names), k;
		int ins = 0, insp = 0, inspm = 0, other = 0;

		for (k = 0; k < n; k++) {
			ins += strcmp(names[k], "insp.test") == 0;
			insp += strcmp(names[k], "inspp.test") == 0;
			inspm += strcmp(names[k], "inspm.test") == 0;
			other += strcmp(names[k], "m.test") == 0 || strcmp(names[k], "wide.test") == 0;
		}
		tap_ok(n == 3 && ins == 1 && insp == 1 && inspm == 1 && other == 0,
		    "the terminated names are the inspected ones, each once (%zu)", n);
		tap_ok(cf_session_terminates(s, "insp.test", 443) && !cf_session_terminates(s, "insp.test", 8443) &&
		    cf_session_terminates(s, "inspm.test", 8443) && !cf_session_terminates(s, "inspm.test", 443) &&
		    cf_session_terminates(s, "inspp.test", 443) && !cf_session_terminates(s, "m.test", 443) &&
		    !cf_session_terminates(s, "api.anthropic.com", 443),
		    "cf_session_terminates() follows the inspect rules' ports");
		tap_ok(cf_session_inspects(s, "inspp.test", 443) != NULL &&
		    strcmp(cf_session_inspects(s, "inspp.test", 443)->text, "https://inspp.test/org/ inspect") == 0 &&
		    cf_session_inspects(cf_config_find_session(c, "s1"), "insp.test", 443) != NULL &&
		    cf_session_inspects(s, "m.test", 443) == NULL,
		    "cf_session_inspects() names the first inspect rule, [defaults]' ones in every session");
	}
	{
		/* A bad flag is a FILE:LINE error of the config. */
		static const char bad[] = "[defaults]\nallow_hosts = ok.test\nallow_hosts = *.x.test inspect\n"
		    "[proxy]\nlisten = tcp:127.0.0.1:3128\n";
		struct cf_diag d2;
		struct cf_config *c2;

		memset(&d2, 0, sizeof(d2));
		c2 = cf_config_parse("b.ini", bad, strlen(bad), NULL, &d2);
		tap_ok(c2 == NULL && d2.nerrors == 1 && strstr(d2.errors[0], "b.ini:3: ") != NULL &&
		    strstr(d2.errors[0], "inspect") != NULL, "inspect on a wildcard: %s",
		    d2.nerrors ? d2.errors[0] : "no error");
		cf_config_free(c2);
		cf_diag_free(&d2);
	}

	report_cases();

	cf_config_free(c);
	cf_diag_free(&diag);
	return tap_done();
}
