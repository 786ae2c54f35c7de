/*
 * tests/unit/test-suggest.c: what postern offers to allow a refused request
 * (conf/decide.h: cf_suggest_pattern(), cf_suggest() in both its forms)
 * reads back, through the config reader and through run's --allow, as
 * exactly one rule for the refused host and port whose path is a prefix of
 * the request's, whatever bytes the request's path held: a ',' never
 * makes a second rule, an address's "/8" never a network, a quote never
 * ends the shell word of the hint.  cf_suggest_check() refuses an item
 * that does not.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "conf/config.h"
#include "conf/decide.h"
#include "conf/rule.h"
#include "tests/unit/tap.h"

static const char text[] =
	"[proxy]\nlisten = tcp:127.0.0.1:3128\n"
	"[defaults]\nallow_hosts = http://other.test/api/ private, 10.0.0.0:80/api/ private, "
	"[fd00::1]:80/api/, other.test:8080/api/\n";

static const char *const hostile[] = {
	"/x,*.attacker.test:1-65535",
	"/x,169.254.169.254:80",
	"/x,*.attacker.test:*/",
	"/x, *.attacker.test:22 private",
	"/,*.attacker.test:22",
	"/x *.attacker.test:22",
	"/x\t*.attacker.test:22",
	"/x#,*.attacker.test:22",
	"/x;,*.attacker.test:22",
	"/x',*.attacker.test:22",
	"/x'/",
	"/x\"/",
	"/x\",*.attacker.test:22",
	"/*.attacker.test",
	"/x*/",
	"/x%2C*.attacker.test:22",
	"/x%41,*.attacker.test:22",
	"/x\xc3\xa9,*.attacker.test:22",
	"/x\r\nallow_hosts = *.attacker.test:22",
	"/.,*.attacker.test:22",
	"/..,*.attacker.test:22",
	"/x:,*.attacker.test:22",
	"/a://b,*.attacker.test:22",
	"/x`id`/",
	"/x$(id)/",
	"/8",
	"/0",
	"/32,*.attacker.test:22",
	"/x/,*.attacker.test:22",
	"*",
	"",
};

static struct cf_host
host(const char *name)
{
	struct cf_host h;
	const char *why;

	memset(&h, 0, sizeof(h));
	cf_host_parse(name, strlen(name), 0, &h, &why);
	return h;
}

/*
 * Does ITEM, as the line "allow_hosts = ITEM" of a config (AS_FLAG 0) or
 * as run's --allow ITEM (1), give exactly one rule, for H on PORT in MODE,
 * whose path (if any) PATH starts with, and never one for
 * foo.attacker.test:22 or 169.254.169.254:80?
 */
static int
reads_back(const char *item, int as_flag, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, const char **why)
{
	char t[2048];
	struct cf_diag diag;
	struct cf_overrides ov;
	struct cf_config *c;
	const struct cf_session *s;
	const struct cf_rule *r;
	struct cf_host evil = host("foo.attacker.test"), meta = host("169.254.169.254");
	const char *items[1] = { item };
	int ok = 0;

	memset(&diag, 0, sizeof(diag));
	memset(&ov, 0, sizeof(ov));
	if (as_flag) {
		snprintf(t, sizeof(t), "[proxy]\nlisten = tcp:127.0.0.1:3128\n");
		ov.extra_allow = items;
		ov.n_extra_allow = 1;
	} else {
		snprintf(t, sizeof(t), "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = %s\n",
		    item);
	}
	c = cf_config_parse("s.ini", t, strlen(t), &ov, &diag);
	*why = "it does not parse";
	if (c == NULL)
		goto out;
	s = cf_config_find_session(c, "default");
	*why = "not one rule";
	if (s == NULL || s->nallow != 1)
		goto out;
	r = s->allow[0];
	*why = "not for the refused host and port";
	if (!cf_rule_match_host(r, h) || !cf_rule_match_port(r, mode, port))
		goto out;
	*why = "its path is no prefix of the request's";
	if (r->path != NULL && strncmp(path, r->path, strlen(r->path)) != 0)
		goto out;
	*why = "it allows another host";
	if ((cf_rule_match_host(r, &evil) && cf_rule_match_port(r, CF_MODE_CONNECT, 22)) ||
	    (cf_rule_match_host(r, &meta) && !cf_host_equal(h, &meta)))
		goto out;
	*why = "ok";
	ok = 1;
out:
	cf_config_free(c);
	cf_diag_free(&diag);
	return ok;
}

/* The text of HINT after LEAD up to the END that closes it, into BUF;
 * NULL when HINT is not LEAD...END or holds END before its end. */
static const char *
hint_item(const char *hint, const char *lead, const char *end, char *buf, size_t size)
{
	size_t ll = strlen(lead), n;

	if (strncmp(hint, lead, ll) != 0)
		return NULL;
	hint += ll;
	n = strlen(hint);
	if (end[0] != '\0') {
		if (n == 0 || hint[n - 1] != end[0] || memchr(hint, end[0], n - 1) != NULL)
			return NULL;
		n--;
	}
	if (n >= size)
		return NULL;
	memcpy(buf, hint, n);
	buf[n] = '\0';
	return buf;
}

/*
 * Every form of the suggestion for PATH refused by RULE (REASON) on H,
 * PORT in MODE: the item reads back as one rule as a config line and as
 * --allow, and each hint holds it whole.  Returns 0, or 1 after saying
 * what did not.
 */
static int
check_path(const struct cf_session *s, const struct cf_session *cli, enum cf_mode mode,
    const struct cf_host *h, uint16_t port, enum cf_reason reason, const struct cf_rule *rule,
    const char *path)
{
	char pat[1024], sugg[1024], item[1024], lead[128];
	const char *priv = reason == CF_R_PRIVATE_ADDRESS ? "if this private address is intended, " : "";
	const char *why = "ok", *it, *p = path[0] != '\0' ? path : "/";
	struct cf_decision d;

	memset(&d, 0, sizeof(d));
	d.reason = reason;
	d.rule = rule;
	cf_suggest_pattern(s, mode, h, port, path, strlen(path), &d, pat, sizeof(pat));
	if (pat[0] == '\0')
		return 0;
	if (!reads_back(pat, 0, mode, h, port, p, &why)) {
		tap_diag("%s: as a config line: %s", pat, why);
		return 1;
	}
	if (!reads_back(pat, 1, mode, h, port, p, &why)) {
		tap_diag("%s: as --allow: %s", pat, why);
		return 1;
	}
	cf_suggest(s, mode, h, port, path, strlen(path), &d, sugg, sizeof(sugg));
	snprintf(lead, sizeof(lead), "%sadd to [defaults]: allow_hosts = ", priv);
	it = hint_item(sugg, lead, "", item, sizeof(item));
	if (it == NULL || strcmp(it, pat) != 0) {
		tap_diag("%s: the config hint is %s", pat, sugg);
		return 1;
	}
	cf_suggest(cli, mode, h, port, path, strlen(path), &d, sugg, sizeof(sugg));
	snprintf(lead, sizeof(lead), "%spass --allow '", priv);
	it = hint_item(sugg, lead, "'", item, sizeof(item));
	if (it == NULL || strcmp(it, pat) != 0) {
		tap_diag("%s: the --allow hint is %s", pat, sugg);
		return 1;
	}
	return 0;
}

int
main(void)
{
	struct cf_diag diag;
	struct cf_config *c, *cc;
	struct cf_overrides ov;
	const struct cf_session *s, *cli;
	struct cf_host h;
	struct cf_decision d;
	char pat[1024];
	size_t i;

	memset(&diag, 0, sizeof(diag));
	c = cf_config_parse("t.ini", text, strlen(text), NULL, &diag);
	if (!tap_ok(c != NULL, "config parses (%s)", diag.nerrors ? diag.errors[0] : "ok"))
		return tap_done();
	cf_diag_free(&diag);
	memset(&ov, 0, sizeof(ov));
	ov.cli_hints = 1;
	cc = cf_config_parse("t.ini", text, strlen(text), &ov, &diag);
	if (!tap_ok(cc != NULL, "config parses with cli_hints"))
		return tap_done();
	cf_diag_free(&diag);
	s = cf_config_find_session(c, "default");
	cli = cf_config_find_session(cc, "default");

	/* What a plain path is offered: its first segment. */
	h = host("other.test");
	memset(&d, 0, sizeof(d));
	d.reason = CF_R_PATH_NOT_ALLOWED;
	d.rule = s->allow[0];
	cf_suggest_pattern(s, CF_MODE_HTTP, &h, 80, "/other/x?q", 10, &d, pat, sizeof(pat));
	tap_cmp_str(pat, "other.test/other/ private", "a plain path: its first segment (%s)", pat);
	cf_suggest_pattern(s, CF_MODE_HTTP, &h, 80, "/x,*.attacker.test:1-65535", 26, &d, pat, sizeof(pat));
	tap_cmp_str(pat, "other.test/x private", "a ',' in it: cut before it (%s)", pat);
	cf_suggest_pattern(s, CF_MODE_HTTP, &h, 80, "/v1/models'x", 12, &d, pat, sizeof(pat));
	tap_cmp_str(pat, "other.test/v1/ private", "a quote after the first segment: not in it (%s)",
	    pat);
	cf_suggest_pattern(s, CF_MODE_HTTP, &h, 80, "/..,x", 5, &d, pat, sizeof(pat));
	tap_cmp_str(pat, "other.test/ private", "a cut that leaves a dot segment: back to its / (%s)",
	    pat);
	h = host("10.0.0.0");
	d.rule = s->allow[1];
	cf_suggest_pattern(s, CF_MODE_HTTP, &h, 80, "/8", 2, &d, pat, sizeof(pat));
	tap_cmp_str(pat, "10.0.0.0:80/8 private", "an address: its port before the path, "
	    "never a prefix length (%s)", pat);
	h = host("[fd00::1]");
	d.rule = s->allow[2];
	cf_suggest_pattern(s, CF_MODE_HTTP, &h, 80, "/64", 3, &d, pat, sizeof(pat));
	tap_cmp_str(pat, "[fd00::1]:80/64", "an IPv6 address too (%s)", pat);

	/* The check itself. */
	h = host("other.test");
	tap_ok(cf_suggest_check("other.test/x private", CF_MODE_HTTP, &h, 80, "/x", 2, 1),
	    "check: one rule for the host");
	tap_ok(!cf_suggest_check("other.test/x,*.attacker.test:1-65535 private", CF_MODE_HTTP, &h, 80,
	    "/x,*.attacker.test:1-65535", 26, 1), "check: a list is refused");
	tap_ok(!cf_suggest_check("other.test/x private", CF_MODE_HTTP, &h, 80, "/x", 2, 0),
	    "check: a flag not meant is refused");
	tap_ok(!cf_suggest_check("other.test/x", CF_MODE_HTTP, &h, 8080, "/x", 2, 0),
	    "check: another port is refused");
	tap_ok(!cf_suggest_check("other.test/x", CF_MODE_HTTP, &h, 80, "/y", 2, 0),
	    "check: another path is refused");
	tap_ok(!cf_suggest_check("*.other.test", CF_MODE_CONNECT, NULL, 0, NULL, 0, -1),
	    "check: a wildcard is refused");
	tap_ok(!cf_suggest_check("10.0.0.0/8", CF_MODE_CONNECT, NULL, 0, NULL, 0, -1),
	    "check: a network is refused");
	tap_ok(!cf_suggest_check("other.test/x'y", CF_MODE_HTTP, NULL, 0, NULL, 0, -1),
	    "check: a quote is refused");
	tap_ok(!cf_suggest_check("other.test:1-65535", CF_MODE_CONNECT, NULL, 0, NULL, 0, -1),
	    "check: a port range is refused");
	tap_ok(!cf_suggest_check("other.test methods=GET,HEAD", CF_MODE_HTTP, NULL, 0, NULL, 0, -1),
	    "check: another flag is refused");
	tap_ok(!cf_suggest_check("http://other.test/", CF_MODE_HTTP, NULL, 0, NULL, 0, -1),
	    "check: a URL is refused");

	/* Every hostile path, on every kind of host and rule. */
	d.rule = s->allow[0];
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char shown[200];
		int bad = 0;

		h = host("other.test");
		bad += check_path(s, cli, CF_MODE_HTTP, &h, 80, CF_R_PATH_NOT_ALLOWED, s->allow[0], hostile[i]);
		cf_suggest_pattern(s, CF_MODE_HTTP, &h, 80, hostile[i], strlen(hostile[i]), &d, pat, sizeof(pat));
		bad += check_path(s, cli, CF_MODE_HTTP, &h, 8080, CF_R_PATH_NOT_ALLOWED, s->allow[3],
		    hostile[i]);
		bad += check_path(s, cli, CF_MODE_HTTP, &h, 80, CF_R_HOST_NOT_ALLOWED, NULL, hostile[i]);
		bad += check_path(s, cli, CF_MODE_TLS, &h, 443, CF_R_PATH_NOT_ALLOWED, s->allow[0], hostile[i]);
		h = host("10.0.0.0");
		bad += check_path(s, cli, CF_MODE_HTTP, &h, 80, CF_R_PATH_NOT_ALLOWED, s->allow[1], hostile[i]);
		bad += check_path(s, cli, CF_MODE_HTTP, &h, 80, CF_R_PRIVATE_ADDRESS, s->allow[1], hostile[i]);
		h = host("[fd00::1]");
		bad += check_path(s, cli, CF_MODE_HTTP, &h, 80, CF_R_PATH_NOT_ALLOWED, s->allow[2], hostile[i]);
		bs_escape(hostile[i], strlen(hostile[i]), shown, sizeof(shown), 0);
		tap_cmp_int(bad, "==", 0, "%s: every suggestion reads back as one rule for its host (other.test: %s)",
		    shown, pat[0] ? pat : "none");
	}

	cf_config_free(cc);
	cf_config_free(c);
	return tap_done();
}
