/*
 * tests/fuzz/fuzz-grantfile.c: the grants_file parser (conf/grantfile.h,
 * inih through the config's reader).  Invariants: never crashes or leaks;
 * a file either parses or reports at least one error, and never both;
 * every grant it gives is one host in normal form that parses again, and a
 * port, in a session of the config.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conf/grantfile.h"
#include "conf/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_text[] =
    "[proxy]\nlisten = tcp:127.0.0.1:3128\n[session a]\nlisten = tcp:127.0.0.1:3129\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cf_config *c;
	struct cf_grant_entry *v = NULL;
	struct cf_diag d;
	size_t n = 0, i;
	int rc;

	if (c == NULL && (c = cf_config_parse("fuzz.ini", conf_text, strlen(conf_text), NULL, NULL)) == NULL)
		abort();
	memset(&d, 0, sizeof(d));
	rc = cf_grants_parse("grants.ini", (const char *)data, size, c, &d, &v, &n);
	if ((rc == 0) != (d.nerrors == 0) || (rc != 0 && v != NULL))
		abort();
	for (i = 0; i < n; i++) {
		struct cf_host h;
		const char *why;

		if (v[i].port == 0 || cf_config_find_session(c, v[i].session) == NULL ||
		    cf_host_parse(v[i].host, strlen(v[i].host), 0, &h, &why) != 0)
			abort();
	}
	free(v);
	cf_diag_free(&d);
	return 0;
}
