/*
 * tests/fuzz/fuzz-suggest.c: what postern offers to allow a refused
 * request (conf/decide.h) against the config reader.  The input is one
 * byte of choices (mode, reason, whether the host's rule has "private"),
 * two of port, then "HOST\nPATH" (HOST other.test when it is no host).
 * Every item cf_suggest_pattern() offers must read back, as an allow_hosts
 * line of a config and as run's --allow, as exactly one rule for that
 * host itself on that port, whose path is a prefix of the request's, with
 * no flag but "private"; cf_suggest()'s hints must hold that item whole,
 * the --allow one as one shell word.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conf/decide.h"
#include "conf/rule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reader's longest line (conf/reader.c): a longer item fits --allow
 * only. */
#define LINE_MAX_READER 190

/* ITEM read back (AS_FLAG: as --allow) must be one rule for H on PORT in
 * MODE, its path a prefix of PATH (LEN bytes). */
static void
read_back(const char *item, int as_flag, enum cf_mode mode, const struct cf_host *h, uint16_t port,
    const char *path, size_t len)
{
	char text[2048];
	struct cf_diag diag;
	struct cf_overrides ov;
	struct cf_config *c;
	const struct cf_session *s;
	const struct cf_rule *r;
	const char *items[1] = { item };

	memset(&diag, 0, sizeof(diag));
	memset(&ov, 0, sizeof(ov));
	if (as_flag) {
		snprintf(text, sizeof(text), "[proxy]\nlisten = tcp:127.0.0.1:3128\n");
		ov.extra_allow = items;
		ov.n_extra_allow = 1;
	} else if ((size_t)snprintf(text, sizeof(text),
	    "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = %s\n", item) >= sizeof(text) ||
	    strlen("allow_hosts = ") + strlen(item) > LINE_MAX_READER) {
		return;
	}
	c = cf_config_parse("fuzz.ini", text, strlen(text), &ov, &diag);
	if (c == NULL)
		abort();
	s = cf_config_find_session(c, "default");
	if (s == NULL || s->nallow != 1)
		abort();
	r = s->allow[0];
	if (!cf_rule_match_host(r, h) || !cf_rule_match_port(r, mode, port))
		abort();
	if ((r->kind != CF_PAT_EXACT && r->kind != CF_PAT_NET4 && r->kind != CF_PAT_NET6) ||
	    (r->kind == CF_PAT_NET4 && r->prefix != 32) || (r->kind == CF_PAT_NET6 && r->prefix != 128))
		abort();
	if (r->port_given && r->port_lo != r->port_hi)
		abort();
	if (r->methods != NULL || r->inspect || cf_rule_has_budget(r) || r->taken_as != NULL)
		abort();
	if (r->path != NULL && (strlen(r->path) > len || memcmp(r->path, path, strlen(r->path)) != 0))
		abort();
	cf_config_free(c);
	cf_diag_free(&diag);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum cf_reason reasons[] = { CF_R_HOST_NOT_ALLOWED, CF_R_PORT_NOT_ALLOWED,
	    CF_R_PATH_NOT_ALLOWED, CF_R_PRIVATE_ADDRESS };
	static const enum cf_mode modes[] = { CF_MODE_HTTP, CF_MODE_CONNECT, CF_MODE_TLS, CF_MODE_HTTP };
	char hbuf[CF_HOST_TEXT_MAX], rtext[CF_HOST_TEXT_MAX + 32], pat[2048], sugg[2048], *path = NULL;
	const char *s, *nl, *why;
	struct cf_host h;
	struct cf_rule rule;
	struct cf_session sess;
	struct cf_decision d;
	enum cf_mode mode;
	uint16_t port;
	size_t n, plen;
	int has_rule = 0;

	if (size < 3)
		return 0;
	mode = modes[data[0] & 3];
	memset(&d, 0, sizeof(d));
	d.reason = reasons[(data[0] >> 2) & 3];
	port = (uint16_t)(data[1] << 8 | data[2]);
	if (port == 0)
		port = mode == CF_MODE_HTTP ? 80 : 443;
	s = (const char *)data + 3;
	n = size - 3;
	nl = memchr(s, '\n', n);
	if (nl == NULL || cf_host_parse(s, (size_t)(nl - s), 0, &h, &why) != 0)
		cf_host_parse("other.test", 10, 0, &h, &why);
	if (nl != NULL) {
		n -= (size_t)(nl + 1 - s);
		s = nl + 1;
	}
	/* The path as the proxy holds it: NUL-terminated. */
	if ((path = malloc(n + 1)) == NULL)
		return 0;
	memcpy(path, s, n);
	path[n] = '\0';
	plen = n;

	/* The host's own rule: narrowed by a path, on another port, or
	 * (private_address) the one that allowed it. */
	cf_host_format(&h, hbuf, sizeof(hbuf));
	snprintf(rtext, sizeof(rtext), "%s:%u%s%s", hbuf,
	    (unsigned)(d.reason == CF_R_PORT_NOT_ALLOWED ? (port == 1 ? 2 : port - 1) : port),
	    d.reason == CF_R_PATH_NOT_ALLOWED ? "/api/" : "", data[0] & 0x10 ? " private" : "");
	if (d.reason != CF_R_HOST_NOT_ALLOWED &&
	    cf_rule_parse(rtext, strlen(rtext), CF_RULE_ALLOW, &rule, &why) == 0) {
		has_rule = 1;
		d.rule = &rule;
	}

	memset(&sess, 0, sizeof(sess));
	sess.name = "default";
	sess.is_default = 1;
	cf_suggest_pattern(&sess, mode, &h, port, path, plen, &d, pat, sizeof(pat));
	if (pat[0] != '\0') {
		const char *p = path[0] != '\0' ? path : "/";
		read_back(pat, 0, mode, &h, port, p, strlen(p));
		read_back(pat, 1, mode, &h, port, p, strlen(p));
		if (strchr(pat, '\'') != NULL)
			abort();
	}
	if (d.reason != CF_R_PRIVATE_ADDRESS) {
		cf_suggest(&sess, mode, &h, port, path, plen, &d, sugg, sizeof(sugg));
		if (pat[0] != '\0' && (strncmp(sugg, "add to [defaults]: allow_hosts = ", 33) != 0 ||
		    strcmp(sugg + 33, pat) != 0))
			abort();
		sess.cli_hints = 1;
		cf_suggest(&sess, mode, &h, port, path, plen, &d, sugg, sizeof(sugg));
		if (pat[0] != '\0' && (strncmp(sugg, "pass --allow '", 14) != 0 ||
		    strncmp(sugg + 14, pat, strlen(pat)) != 0 || strcmp(sugg + 14 + strlen(pat), "'") != 0))
			abort();
	}
	if (has_rule)
		cf_rule_clear(&rule);
	free(path);
	return 0;
}
