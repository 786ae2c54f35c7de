/*
 * tests/fuzz/fuzz-rule.c: the host-pattern parser and matcher.  The input
 * is "PATTERN\nHOST": the pattern is parsed, the host normalised, and the
 * match computed; a wildcard or domain match must always be on a label
 * boundary of the normalised name.  The second line is also matched as a
 * path: a path a prefix rule admits has, before its query, no ';' and no
 * %-escape other than of an unreserved character other than '.'.  And
 * as a method: one that a methods= flag admits is in its list.  A budget
 * taken is never zero and within its bounds.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/rule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *nl = memchr(s, '\n', size);
	size_t plen = nl ? (size_t)(nl - s) : size;
	struct cf_rule r;
	struct cf_host h;
	const char *why;

	if (cf_rule_parse(s, plen, CF_RULE_ALLOW, &r, &why) != 0)
		return 0;
	if (nl != NULL && cf_host_parse(nl + 1, size - plen - 1, 0, &h, &why) == 0 &&
	    cf_rule_match_host(&r, &h)) {
		size_t hl = strlen(h.name), bl = strlen(r.name);
		if (r.kind == CF_PAT_WILDCARD && !(hl > bl + 1 && h.name[hl - bl - 1] == '.'))
			abort();
		if (r.kind == CF_PAT_EXACT && strcmp(h.name, r.name) != 0)
			abort();
		if (r.kind == CF_PAT_DOMAIN && hl != bl && h.name[hl - bl - 1] != '.')
			abort();
	}
	/* "inspect" is on one exact name only: the CA's name constraints
	 * list it as such. */
	if (r.inspect && (r.kind != CF_PAT_EXACT || (r.port_given && r.port_lo != r.port_hi)))
		abort();
	if ((r.up_max != 0) != (r.up_window != 0) || r.up_max > CF_BUDGET_UP_MAX ||
	    r.up_window > CF_BUDGET_WINDOW_MAX || r.rps > CF_BUDGET_N_MAX || r.conns > CF_BUDGET_N_MAX)
		abort();
	/* A method a methods= list admits is one of its items, never empty,
	 * never CONNECT. */
	if (r.methods != NULL && (cf_rule_match_method(&r, "") || cf_rule_match_method(&r, "CONNECT") ||
	    strchr(r.methods, ' ') != NULL))
		abort();
	if (nl != NULL && r.methods != NULL && size - plen - 1 <= CF_METHOD_MAX) {
		char m[CF_METHOD_MAX + 1];
		memcpy(m, nl + 1, size - plen - 1);
		m[size - plen - 1] = '\0';
		if (strlen(m) > 0 && cf_rule_match_method(&r, m) && strstr(r.methods, m) == NULL)
			abort();
	}
	(void)cf_rule_match_path(&r, s, size);
	if (nl != NULL && r.path != NULL && cf_rule_match_path(&r, nl + 1, size - plen - 1)) {
		const char *p = nl + 1;
		size_t n = size - plen - 1, i;

		for (i = 0; i < n && p[i] != '?' && p[i] != '#'; i++) {
			if (p[i] == ';')
				abort();
			if (p[i] == '%') {
				char a, b, dec[3];
				unsigned long v;

				if (i + 2 >= n)
					abort();
				a = p[i + 1];
				b = p[i + 2];
				dec[0] = a;
				dec[1] = b;
				dec[2] = '\0';
				v = strtoul(dec, NULL, 16);
				if (!isxdigit((unsigned char)a) || !isxdigit((unsigned char)b) ||
				    !(isalnum((int)v) || v == '-' || v == '_' || v == '~'))
					abort();
			}
		}
	}
	cf_rule_clear(&r);
	return 0;
}
