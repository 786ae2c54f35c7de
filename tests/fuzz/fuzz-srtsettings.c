/*
 * tests/fuzz/fuzz-srtsettings.c: run --settings' reader
 * (sidecar/srtsettings.c) over any bytes.  An accepted file hands out
 * only items of lower-case letters, digits, '-', '.' and a leading "*.",
 * each one postern rule of its kind (an allow item a name, never an
 * address); its postern.ini reads back with
 * exactly those rules; every warning and error, and every line of the
 * ini, is printable ASCII.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conf/rule.h"
#include "sidecar/srtsettings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_printable(const char *s, int lines)
{
	for (; *s; s++)
		if ((*s < 0x20 || *s > 0x7e) && !(lines && *s == '\n'))
			abort();
}

static void
check_item(const char *s, enum cf_rule_type type)
{
	struct cf_rule r;
	const char *why, *p = s;

	if (strncmp(p, "*.", 2) == 0)
		p += 2;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		    *p == '.'))
			abort();
	if (cf_rule_parse(s, strlen(s), type, &r, &why) < 0)
		abort();
	/* Only a name: an address rule would pass a private one. */
	if (type == CF_RULE_ALLOW && r.kind != CF_PAT_EXACT && r.kind != CF_PAT_WILDCARD)
		abort();
	cf_rule_clear(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const listen[] = { "unix:/run/postern/run.sock" };
	const struct cf_session *sess;
	struct cf_overrides ov;
	struct cf_config *c;
	struct sc_srt s;
	char *ini;
	size_t i;
	int r;

	r = sc_srt_parse("f.json", (const char *)data, size, &s);
	for (i = 0; i < s.nerrors; i++)
		check_printable(s.errors[i], 0);
	for (i = 0; i < s.nwarnings; i++)
		check_printable(s.warnings[i], 0);
	if (r == 0) {
		if (s.nerrors != 0 || s.nomem)
			abort();
		for (i = 0; i < s.nallow; i++)
			check_item(s.allow[i], CF_RULE_ALLOW);
		for (i = 0; i < s.ndeny; i++)
			check_item(s.deny[i], CF_RULE_DENY);
		ini = sc_srt_ini(&s, "f.json");
		if (ini == NULL)
			abort();
		check_printable(ini, 1);
		memset(&ov, 0, sizeof(ov));
		ov.extra_listen = listen;
		ov.n_extra_listen = 1;
		ov.replace_listen = 1;
		c = cf_config_parse("p.ini", ini, strlen(ini), &ov, NULL);
		sess = c != NULL ? cf_config_find_session(c, "default") : NULL;
		if (sess == NULL || sess->nallow != s.nallow || sess->ndeny != s.ndeny)
			abort();
		cf_config_free(c);
		free(ini);
	} else if (s.nerrors == 0 && !s.nomem) {
		abort();
	}
	sc_srt_free(&s);
	return 0;
}
