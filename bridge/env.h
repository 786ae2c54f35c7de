/*
 * bridge/env.h: the environment postern-bridge gives CMD.  Built from a
 * short fixed list of harmless variables plus the names asked for with
 * --env, never from the bridge's environment wholesale, so that credentials
 * the launcher happened to hold do not reach the agent.
 */
#ifndef POSTERN_BRIDGE_ENV_H
#define POSTERN_BRIDGE_ENV_H

#include <stddef.h>

struct br_env;

/*
 * Build CMD's environment from SRC (a NULL-terminated "NAME=value" vector,
 * read only).  Kept: PATH, HOME, USER, LOGNAME, TERM, LANG, every LC_*, TZ,
 * TMPDIR, SHELL, PWD, the certificate-bundle paths SSL_CERT_FILE,
 * SSL_CERT_DIR, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE,
 * GIT_SSL_CAINFO and PIP_CERT, and each of the NEXTRA names in EXTRA; the first
 * occurrence of a name wins, entries without '=' are dropped.  When PROXY
 * is not NULL it is a "HOST:PORT" (e.g. "127.0.0.1:3128") and HTTP_PROXY,
 * HTTPS_PROXY, http_proxy and https_proxy are set to "http://PROXY",
 * ALL_PROXY and all_proxy to "socks5h://PROXY", NO_PROXY and no_proxy to "localhost,127.0.0.1,::1",
 * NODE_USE_ENV_PROXY to "1", replacing any kept value of those names.  Every string is copied, so SRC
 * may be wiped afterwards.  Returns the environment, or NULL with errno
 * ENOMEM.  Free it with br_env_free().
 */
struct br_env *br_env_new(char *const *src, const char *const *extra,
    size_t nextra, const char *proxy);

/*
 * The value of NAME in ENV (owned by ENV: valid until the next
 * br_env_set() or br_env_free()), or NULL when ENV has no NAME.
 */
const char *br_env_get(const struct br_env *env, const char *name);

/*
 * Set NAME (a variable name, the caller's to check) to VALUE in ENV,
 * replacing the entry of that name or appending one.  Both strings are
 * copied.  Returns 0, or -ENOMEM (ENV is then unchanged).  The vector of
 * br_env_vector() may move: take it again afterwards.
 */
int br_env_set(struct br_env *env, const char *name, const char *value);

/*
 * The NULL-terminated "NAME=value" vector of ENV, for execve(2) or to become
 * environ.  Owned by ENV: valid until br_env_free(ENV).
 */
char **br_env_vector(struct br_env *env);

/*
 * Overwrite with zero bytes every string of the NULL-terminated vector V
 * (the process's original environment), in place.  /proc/PID/environ reads
 * those very bytes, so afterwards it shows nothing of them.  V itself is
 * left as it is.
 */
void br_env_wipe(char **v);

/* Free ENV and its strings.  br_env_free(NULL) does nothing. */
void br_env_free(struct br_env *env);

#endif
