/*
 * tests/fuzz/fuzz-config.c: the config parser (inih through our reader,
 * then validation).  Invariants: never crashes or leaks; a config either
 * builds or reports at least one error; every rule it builds re-parses.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_diag d;
	struct cf_config *c;
	size_t i;

	memset(&d, 0, sizeof(d));
	c = cf_config_parse("fuzz.ini", (const char *)data, size, NULL, &d);
	if (c == NULL && d.nerrors == 0)
		abort();
	if (c != NULL) {
		for (i = 0; i < cf_config_nrules(c); i++) {
			const struct cf_rule *r = cf_config_rule(c, (unsigned)i);
			struct cf_rule r2;
			const char *why;
			if (cf_rule_parse(r->text, strlen(r->text), r->type, &r2, &why) != 0)
				abort();
			cf_rule_clear(&r2);
		}
		cf_config_free(c);
	}
	cf_diag_free(&d);
	return 0;
}
