/*
 * tests/fuzz/fuzz-rtsess.c: a runtime session (PUT /sessions/NAME) read
 * after the built-in config (cf_config_load_extra()).  The input's first
 * line is NAME, the rest its body.  Invariants: never crashes or leaks;
 * it builds or reports at least one error; a built snapshot has exactly
 * one session more than the built-in one, NAME, marked runtime, and every
 * rule and listener of it names session:NAME and a line of the body.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	struct cf_diag d;
	struct cf_extra ex;
	struct cf_config *c, *base;
	char name[80], file[100];
	size_t n, i, lines = 1;

	if (nl == NULL || (n = (size_t)(nl - (const char *)data)) >= sizeof(name) ||
	    memchr(data, '\0', n) != NULL)
		return 0;
	memcpy(name, data, n);
	name[n] = '\0';
	ex.name = name;
	ex.text = nl + 1;
	ex.len = size - n - 1;
	for (i = 0; i < ex.len; i++)
		lines += ex.text[i] == '\n';
	memset(&d, 0, sizeof(d));
	c = cf_config_load_extra(NULL, NULL, &ex, 1, &d);
	if (c == NULL && d.nerrors == 0)
		abort();
	if (c != NULL) {
		const struct cf_session *s = cf_config_find_session(c, name);

		base = cf_config_load(NULL, NULL, NULL);
		snprintf(file, sizeof(file), "session:%s", name);
		if (base == NULL || s == NULL || !s->runtime || strcmp(s->file, file) != 0 ||
		    cf_config_nsessions(c) != cf_config_nsessions(base) + 1)
			abort();
		for (i = 0; i < s->nallow; i++)
			if (strcmp(s->allow[i]->section, name) == 0 &&
			    (strcmp(s->allow[i]->file, file) != 0 || s->allow[i]->line < 1 ||
			    (size_t)s->allow[i]->line > lines))
				abort();
		for (i = 0; i < s->nlisten; i++)
			if (strcmp(s->listen[i].file, file) != 0 || s->listen[i].line < 1 ||
			    (size_t)s->listen[i].line > lines)
				abort();
		cf_config_free(base);
		cf_config_free(c);
	}
	cf_diag_free(&d);
	return 0;
}
