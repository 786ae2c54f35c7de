/*
 * sidecar/run.h: `postern-sidecar run -- CMD`, one command in a fresh
 * network namespace with only loopback, the proxy engine outside on a
 * private UNIX socket and postern-bridge inside carrying it to CMD.
 */
#ifndef POSTERN_SIDECAR_RUN_H
#define POSTERN_SIDECAR_RUN_H

#include <stddef.h>

struct sc_run_opts {
	const char *config_path;       /* NULL: the built-in default */
	const char *const *allow;      /* extra allow_hosts items */
	size_t n_allow;
	const char *bridge;            /* NULL: next to /proc/self/exe */
	const char *session_name;      /* NULL: "default" */
	char *const *argv;             /* CMD and its arguments, NULL-ended */
};

/*
 * Run OPTS->argv as described above and return the exit status the sidecar
 * should exit with: CMD's (128 + N when a signal killed it), or the engine's
 * start-up status (1, or 2 for a config error), or 125 when the sidecar
 * itself could not set things up (no user namespaces, no bridge binary).
 * On return no socket file, directory, namespace or child process of ours
 * is left, also after SIGINT, SIGTERM or SIGHUP (forwarded to CMD first).
 */
int sc_run_main(const struct sc_run_opts *opts);

#endif
