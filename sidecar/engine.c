/*
 * sidecar/engine.c: the call into the proxy engine.
 */
#include "config.h"

#include "sidecar/engine.h"

int
sc_engine_run(const struct px_engine_opts *opts)
{
	return px_engine_main(opts);
}
