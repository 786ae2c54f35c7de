/*
 * sidecar/engine.c: the call into the proxy engine.
 */
#include "config.h"

#include "sidecar/engine.h"
#include "sidecar/log.h"

/*
 * Declared weak until the engine is in libpostern_proxy.a, so the sidecar
 * links (and its lock-down work can be tested) meanwhile.
 */
extern int px_engine_main(const struct px_engine_opts *opts) __attribute__((weak));

int
sc_engine_run(const struct px_engine_opts *opts)
{
	if (px_engine_main == NULL) {
		sc_logx("this build has no proxy engine (libpostern_proxy.a lacks px_engine_main)");
		return 1;
	}
	return px_engine_main(opts);
}
