/*
 * tests/unit/test-srtsettings.c: run --settings (sidecar/srtsettings.h).
 * The postern.ini made from an srt settings file decides every host as
 * srt's own match would (deny first; "*.example.com" any name below,
 * never example.com), in srt's shape and in Claude Code's; what cannot
 * be one item of one host is an error naming its key, a key that only
 * narrows when left out a warning, bad JSON FILE:LINE:COLUMN.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/config.h"
#include "conf/decide.h"
#include "conf/host.h"
#include "sidecar/srtsettings.h"
#include "tests/unit/tap.h"

/* srt's matchesDomainPattern() and filterNetworkRequest(), by hand. */
static int
srt_match(const char *host, const char *pat)
{
	size_t hl = strlen(host), bl;

	if (strncmp(pat, "*.", 2) == 0) {
		bl = strlen(pat + 1);   /* ".example.com" */
		return hl > bl && strcasecmp(host + hl - bl, pat + 1) == 0;
	}
	return strcasecmp(host, pat) == 0;
}

static int
srt_allows(const char *host, const char *const *allow, const char *const *deny)
{
	for (; *deny != NULL; deny++)
		if (srt_match(host, *deny))
			return 0;
	for (; *allow != NULL; allow++)
		if (srt_match(host, *allow))
			return 1;
	return 0;
}

static int
postern_allows(const struct cf_session *s, const char *host)
{
	struct cf_decision d;
	struct cf_host h;
	const char *why;

	if (cf_host_parse(host, strlen(host), 0, &h, &why) < 0)
		return -1;
	cf_decide(s, CF_MODE_CONNECT, &h, 443, NULL, 0, NULL, &d);
	return d.allow;
}

/* TEXT read, turned into postern.ini and parsed back; NULL on any error. */
static struct cf_config *
roundtrip(const char *text, struct sc_srt *out, char **ini)
{
	static const char *const listen[] = { "unix:/run/postern/run.sock" };
	struct cf_overrides ov;
	struct cf_diag diag;
	struct cf_config *c;

	/* As run loads it: its own listener. */
	memset(&ov, 0, sizeof(ov));
	ov.extra_listen = listen;
	ov.n_extra_listen = 1;
	ov.replace_listen = 1;
	*ini = NULL;
	if (sc_srt_parse("s.json", text, strlen(text), out) < 0)
		return NULL;
	*ini = sc_srt_ini(out, "s.json");
	if (*ini == NULL)
		return NULL;
	memset(&diag, 0, sizeof(diag));
	c = cf_config_parse("p.ini", *ini, strlen(*ini), &ov, &diag);
	if (c == NULL && diag.nerrors)
		tap_diag("%s", diag.errors[0]);
	cf_diag_free(&diag);
	return c;
}

static const char *const hosts[] = {
	"github.com", "api.github.com", "a.b.github.com", "evilgithub.com",
	"github.com.evil.net", "evil.github.com", "x.evil.github.com", "npmjs.org",
	"www.npmjs.org", "registry.npmjs.org", "bad.npmjs.org", "x.bad.npmjs.org",
	"example.com", "docs.rs", NULL,
};

static const char *const allow[] = { "github.com", "*.github.com", "*.npmjs.org", NULL };
static const char *const deny[] = { "evil.github.com", "*.bad.npmjs.org", "bad.npmjs.org",
	NULL };

static void
same_as_srt(const char *shape, const char *text)
{
	struct sc_srt s;
	struct cf_config *c;
	const struct cf_session *sess;
	char *ini;
	int i, same = 1, a, b;

	c = roundtrip(text, &s, &ini);
	tap_ok(c != NULL, "%s: read and parsed back", shape);
	if (ini != NULL)
		tap_diag("%s", ini);
	sess = c != NULL ? cf_config_find_session(c, "default") : NULL;
	for (i = 0; sess != NULL && hosts[i] != NULL; i++) {
		a = srt_allows(hosts[i], allow, deny);
		b = postern_allows(sess, hosts[i]);
		if (a != b) {
			tap_diag("%s: srt %d, postern %d", hosts[i], a, b);
			same = 0;
		}
	}
	tap_ok(sess != NULL && same, "%s: every host decided as srt decides it", shape);
	cf_config_free(c);
	free(ini);
	sc_srt_free(&s);
}

static int
parse(const char *text, struct sc_srt *s)
{
	return sc_srt_parse("s.json", text, strlen(text), s);
}

/* TEXT is refused, with one error that contains WHAT. */
static void
refused(const char *text, const char *what)
{
	struct sc_srt s;
	int r;

	r = sc_srt_parse("s.json", text, strlen(text), &s);
	tap_ok(r < 0 && s.nerrors >= 1 && strstr(s.errors[0], what) != NULL &&
	    s.nallow == 0 && s.ndeny <= 1, "refused: %s (%s)", what,
	    s.nerrors ? s.errors[0] : "no error");
	sc_srt_free(&s);
}

/* TEXT is read, with a warning that contains WHAT. */
static void
warned(const char *text, const char *what)
{
	struct sc_srt s;
	size_t i;
	int hit = 0, r;

	r = sc_srt_parse("s.json", text, strlen(text), &s);
	for (i = 0; i < s.nwarnings; i++)
		hit |= strstr(s.warnings[i], what) != NULL;
	tap_ok(r == 0 && hit, "warned: %s", what);
	sc_srt_free(&s);
}

int
main(void)
{
	static const char *const listen[] = { "unix:/run/postern/run.sock" };
	static const char one[] = "{\"network\":{\"allowedDomains\":[\"a.com\"]}}";
	struct cf_overrides ov;
	struct cf_diag diag;
	struct cf_config *c;
	struct sc_srt s;
	char *ini;
	int r;

	memset(&ov, 0, sizeof(ov));
	ov.extra_listen = listen;
	ov.n_extra_listen = 1;
	ov.replace_listen = 1;

	same_as_srt("srt", "{\"network\": {"
	    "\"allowedDomains\": [\"github.com\", \"*.GitHub.com\", \"*.npmjs.org\"],"
	    "\"deniedDomains\": [\"evil.github.com\", \"*.bad.npmjs.org\", \"bad.npmjs.org\"]},"
	    "\"filesystem\": {\"denyRead\": [\"~/.ssh\"], \"allowWrite\": [\".\"], "
	    "\"denyWrite\": []}}");
	same_as_srt("Claude Code", "{\"model\": \"x\", \"sandbox\": {\"enabled\": true,"
	    "\"network\": {\"allowedDomains\": [\"github.com\", \"*.github.com\"]}},"
	    "\"permissions\": {\"allow\": [\"Bash(ls)\", \"WebFetch(domain:*.npmjs.org)\"],"
	    "\"deny\": [\"WebFetch(domain:evil.github.com)\", \"Read(~/.ssh)\","
	    "\"WebFetch(domain:*.bad.npmjs.org)\", \"WebFetch(domain:bad.npmjs.org)\"]}}");

	/* An empty allowlist is srt's "no network". */
	r = parse("{\"network\":{\"allowedDomains\":[],\"deniedDomains\":[]}}", &s);
	ini = r == 0 ? sc_srt_ini(&s, "s.json") : NULL;
	tap_ok(ini != NULL && strstr(ini, "\nallow_hosts") == NULL &&
	    strstr(ini, "\ndeny_hosts") == NULL && strstr(ini, "\n[defaults]\n") != NULL,
	    "no allowed domain: no rule");
	free(ini);
	sc_srt_free(&s);

	/* Bytes that would be more than one item, or a flag, never pass. */
	refused("{\"network\":{\"allowedDomains\":[\"a.com, b.com\"]}}", "[0]: \"a.com, b.com\"");
	refused("{\"network\":{\"allowedDomains\":[\"a.com private\"]}}", "allowedDomains[0]");
	refused("{\"network\":{\"allowedDomains\":[\"a.com\\nallow_hosts = b.com\"]}}",
	    "a.com\\x0aallow_hosts");
	refused("{\"network\":{\"allowedDomains\":[\"a.com:*\"]}}", "no scheme, port");
	refused("{\"network\":{\"allowedDomains\":[\"https://a.com/\"]}}", "no scheme, port");
	refused("{\"network\":{\"allowedDomains\":[\"*.com\"]}}", "too broad");
	refused("{\"network\":{\"allowedDomains\":[\"*\"]}}", "whole first label");
	refused("{\"network\":{\"allowedDomains\":[\"a.*.com\"]}}", "whole first label");
	refused("{\"network\":{\"allowedDomains\":[\"intranet\"]}}", "not a domain name");
	refused("{\"network\":{\"allowedDomains\":[\"a.com.\"]}}", "not a domain name");
	refused("{\"network\":{\"allowedDomains\":[\"\"]}}", "empty");
	refused("{\"network\":{\"allowedDomains\":[\"caf\\u00e9.com\"]}}", "not a domain pattern");
	refused("{\"network\":{\"allowedDomains\":[\"-a.com\"]}}", "allowedDomains[0]");
	refused("{\"network\":{\"allowedDomains\":[1]}}", "allowedDomains[0]: not a string");
	refused("{\"network\":{\"allowedDomains\":\"a.com\"}}", "not an array");
	refused("{\"network\":{\"deniedDomains\":[\"a.com\", \"*.x\"]}}", "deniedDomains[1]");
	refused("{\"network\":[]}", "network: not an object");
	/* Left out, these could widen what CMD reaches. */
	refused("{\"network\":{\"deniedPorts\":[22]}}", "network.deniedPorts: unknown key");
	refused("{\"sandbox\":{\"network\":{\"denyAll\":true}}}", "sandbox.network.denyAll");
	refused("{\"permissions\":{\"deny\":[\"WebFetch(domain:a b)\"]}}", "permissions.deny[0]");
	refused("{\"sandbox\":{\"enabled\":\"yes\"}}", "sandbox.enabled");
	refused("{\"network\":{}, \"sandbox\":{}}", "which file");
	refused("{\"model\":\"x\"}", "not a settings file");
	refused("[1]", "the top level: not an object");
	refused("{\"network\":{\"allowedDomains\":[\"a.com\"],}}", "s.json:1:");
	refused("{\"network\":{},\"network\":{}}", "duplicate");
	refused("{\"network\":{}} x", "s.json:1:");
	refused("", "s.json:1:0:");

	warned("{\"network\":{\"allowUnixSockets\":[\"/var/run/docker.sock\"]}}",
	    "network.allowUnixSockets: not applied: give CMD a host socket with run --socket");
	warned("{\"network\":{\"allowedDomains\":[\"localhost\"]}}", "\"localhost\": not applied");
	warned("{\"network\":{\"httpProxyPort\":8080}}", "postern is the proxy");
	warned("{\"network\":{\"allowedDomains\":[\"10.0.0.1\"]}}",
	    "\"10.0.0.1\": not applied: an address");
	warned("{\"network\":{},\"filesystem\":{\"denyRead\":[\"~/.ssh\"]}}",
	    "filesystem.denyRead: no postern equivalent");
	warned("{\"network\":{},\"newThing\":1}", "newThing: unknown key");
	warned("{\"network\":{},\"new\\u001bThing\":1}", "new\\x1bThing: unknown key");
	warned("{\"sandbox\":{\"enabled\":false}}", "sandbox.enabled: false");
	warned("{\"sandbox\":{\"excludedCommands\":[\"git\"]}}", "sandbox.excludedCommands");

	/* A deny rule for one name only narrows: srt's "needs a dot" is
	 * for what it allows. */
	r = parse("{\"network\":{\"deniedDomains\":[\"intranet\",\"localhost\"]}}", &s);
	tap_ok(r == 0 && s.ndeny == 2 && strcmp(s.deny[0], "intranet") == 0,
	    "a one-label deny is kept");
	sc_srt_free(&s);
	r = parse("{\"network\":{\"allowedDomains\":[\"10.0.0.1\"],"
	    "\"deniedDomains\":[\"10.0.0.1\"]}}", &s);
	tap_ok(r == 0 && s.nallow == 0 && s.ndeny == 1, "an address is no allow item, a deny one");
	sc_srt_free(&s);

	/* The comments of the ini carry no raw control byte of the file. */
	r = sc_srt_parse("a\nb.json", "{\"network\":{},\"x\\ny\":1}", 23, &s);
	ini = r == 0 ? sc_srt_ini(&s, "a\nb.json") : NULL;
	tap_ok(ini != NULL && strstr(ini, "a\\x0ab.json") != NULL && strstr(ini, "x\\x0ay") != NULL,
	    "names and keys in the ini are escaped");
	free(ini);
	sc_srt_free(&s);

	/* Every line of the ini fits postern.ini's lines: a long name is
	 * refused, a long file name cut in its comment. */
	{
		char text[512], name[400];

		memset(name, 'a', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		snprintf(text, sizeof(text), "{\"network\":{\"allowedDomains\":[\"%.59s.%.59s.%.59s.com\"]}}",
		    name, name, name);
		refused(text, "longer than a line of postern.ini");
		ini = NULL;
		r = sc_srt_parse(name, one, sizeof(one) - 1, &s);
		ini = r == 0 ? sc_srt_ini(&s, name) : NULL;
		tap_ok(ini != NULL && strchr(ini, '\n') - ini < 198 && strstr(ini, "...") != NULL,
		    "a long file name is cut in the ini's comment");
		memset(&diag, 0, sizeof(diag));
		c = ini != NULL ? cf_config_parse("p.ini", ini, strlen(ini), &ov, &diag) : NULL;
		tap_ok(c != NULL, "and the ini parses");
		cf_config_free(c);
		cf_diag_free(&diag);
		free(ini);
		sc_srt_free(&s);
	}

	/* A person reads the notes: a bounded number of them. */
	{
		char big[64 * 1024];
		size_t n = 0, i;

		n += (size_t)snprintf(big + n, sizeof(big) - n, "{\"network\":{\"allowedDomains\":[");
		for (i = 0; i < 2000; i++)
			n += (size_t)snprintf(big + n, sizeof(big) - n, "%s\"*\"", i ? "," : "");
		snprintf(big + n, sizeof(big) - n, "]},\"a\":1,\"b\":2}");
		r = parse(big, &s);
		tap_ok(r < 0 && s.nerrors == 65 && strstr(s.errors[64], "more not shown") != NULL,
		    "2000 bad domains: 64 errors and one line saying more");
		sc_srt_free(&s);
	}

	r = sc_srt_load("/nonexistent/s.json", &s);
	tap_ok(r < 0 && s.nerrors == 1 && strncmp(s.errors[0], "/nonexistent/s.json: ", 21) == 0,
	    "a missing file: PATH: why");
	sc_srt_free(&s);
	r = sc_srt_load("/", &s);
	tap_ok(r < 0 && s.nerrors == 1 && strstr(s.errors[0], "not a regular file") != NULL,
	    "a directory is refused");
	sc_srt_free(&s);
	return tap_done();
}
