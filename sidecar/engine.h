/*
 * sidecar/engine.h: the one place where the sidecar calls the proxy engine
 * (proxy/engine.h), in its container mode and for `run`.
 */
#ifndef POSTERN_SIDECAR_ENGINE_H
#define POSTERN_SIDECAR_ENGINE_H

#include <sys/types.h>

#include "proxy/engine.h"

/*
 * Run the proxy engine with OPTS in the calling process until it stops, and
 * return the process exit status px_engine_main() gives (0 clean stop, 2
 * config error, 1 other failure).  Meant for a child the sidecar forked:
 * the engine installs its own signal handlers and drops privileges.
 */
int sc_engine_run(const struct px_engine_opts *opts);

struct cf_config;

/*
 * Load the config PATH (NULL: the built-in default) with the overrides the
 * engine will be given (ALLOW items for [defaults], LISTEN replacing the
 * [proxy] listeners, or those of [session SESSION] alone when SESSION is
 * not NULL), so that the file is judged exactly as it will be served.  Returns the snapshot (the caller frees it with
 * cf_config_free()), or NULL after writing every FILE:LINE error and one
 * "config refused" line to stderr.
 */
struct cf_config *sc_config_load(const char *path, const char *const *allow, size_t nallow,
    const char *const *listen, size_t nlisten, const char *session);

/*
 * The same for the container mode, where the file is also refused when
 * anyone but root or the proxy's user could change it (StrictModes, see
 * cf_config_load()): USER when HAS_USER (--user), else the file's own
 * [proxy] user.
 */
struct cf_config *sc_config_load_strict(const char *path, const char *const *allow,
    size_t nallow, const char *const *listen, size_t nlisten, int has_user, uid_t user);

#endif
