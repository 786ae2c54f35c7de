/*
 * sidecar/engine.c: the call into the proxy engine.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conf/config.h"
#include "sidecar/engine.h"
#include "sidecar/log.h"

int
sc_engine_run(const struct px_engine_opts *opts)
{
	return px_engine_main(opts);
}

static struct cf_config *
sc_load(const char *path, const char *const *allow, size_t nallow,
    const char *const *listen, size_t nlisten, int strict, int has_user, uid_t user,
    const char *session)
{
	struct cf_overrides ov;
	struct cf_config *cfg;
	struct cf_diag diag;
	size_t i;

	memset(&ov, 0, sizeof(ov));
	ov.extra_allow = allow;
	ov.n_extra_allow = nallow;
	ov.extra_listen = listen;
	ov.n_extra_listen = nlisten;
	ov.replace_listen = 1;
	ov.serve_session = session;
	ov.strict_modes = strict;
	ov.trust_file_user = strict && !has_user;
	/* Only who may own the file: the uid itself is applied by the
	 * caller, which also reads it from the snapshot. */
	ov.has_user = has_user;
	ov.user = user;
	memset(&diag, 0, sizeof(diag));
	cfg = cf_config_load(path, &ov, &diag);
	if (cfg == NULL) {
		for (i = 0; i < diag.nerrors; i++)
			fprintf(stderr, "%s\n", diag.errors[i]);
		sc_logx("config refused, not starting");
	}
	cf_diag_free(&diag);
	return cfg;
}

struct cf_config *
sc_config_load(const char *path, const char *const *allow, size_t nallow,
    const char *const *listen, size_t nlisten, const char *session)
{
	return sc_load(path, allow, nallow, listen, nlisten, 0, 0, 0, session);
}

struct cf_config *
sc_config_load_strict(const char *path, const char *const *allow, size_t nallow,
    const char *const *listen, size_t nlisten, int has_user, uid_t user)
{
	return sc_load(path, allow, nallow, listen, nlisten, 1, has_user, user, NULL);
}
