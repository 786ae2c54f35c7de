/*
 * bridge/env.c: CMD's environment (see env.h).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bridge/env.h"

/*
 * What a program needs to find itself at home; nothing here holds a
 * secret.  Extend it per run with --env, never by default.
 */
static const char *const keep[] = {
	"PATH", "HOME", "USER", "LOGNAME", "TERM", "LANG", "TZ", "TMPDIR",
	"SHELL", "PWD",
	/*
	 * Where the certificate bundles are: paths, not secrets, and without
	 * them a client behind a TLS-inspecting gateway, or one talking to
	 * a private CA, fails its handshakes in the sandbox alone.
	 */
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT",
};

static const char *const proxy_vars[] = {
	"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY",
	"all_proxy",
};

static const char *const no_proxy_vars[] = { "NO_PROXY", "no_proxy" };

/* Node.js (24 and later) reads the proxy variables only when this is 1;
 * without it an agent written in Node goes straight out and fails. */
#define NODE_PROXY_VAR "NODE_USE_ENV_PROXY"

/* Loopback only: everything else goes through the proxy. */
#define NO_PROXY_VALUE "localhost,127.0.0.1,::1"

struct br_env {
	char **v;
	size_t n, cap;
};

static bool
name_is(const char *entry, size_t nlen, const char *name)
{
	return strlen(name) == nlen && memcmp(entry, name, nlen) == 0;
}

static bool
in_list(const char *entry, size_t nlen, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (name_is(entry, nlen, list[i]))
			return true;
	return false;
}

static bool
present(const struct br_env *e, const char *entry, size_t nlen)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], entry, nlen) == 0 && e->v[i][nlen] == '=')
			return true;
	return false;
}

static int
push(struct br_env *e, char *s)
{
	char **nv;

	if (s == NULL)
		return -ENOMEM;
	if (e->n + 2 > e->cap) {
		size_t ncap = e->cap ? e->cap * 2 : 32;

		nv = realloc(e->v, ncap * sizeof(*nv));
		if (nv == NULL) {
			free(s);
			return -ENOMEM;
		}
		e->v = nv;
		e->cap = ncap;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
	return 0;
}

static int
push_var(struct br_env *e, const char *name, const char *prefix, const char *value)
{
	char *s;

	if (asprintf(&s, "%s=%s%s", name, prefix, value) < 0)
		return -ENOMEM;
	return push(e, s);
}

struct br_env *
br_env_new(char *const *src, const char *const *extra, size_t nextra,
    const char *proxy)
{
	struct br_env *e;
	const char *eq;
	size_t i, nlen;
	bool want;

	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->v = calloc(32, sizeof(*e->v));
	if (e->v == NULL)
		goto fail;
	e->cap = 32;
	for (i = 0; src != NULL && src[i] != NULL; i++) {
		eq = strchr(src[i], '=');
		if (eq == NULL || eq == src[i])
			continue;
		nlen = (size_t)(eq - src[i]);
		want = in_list(src[i], nlen, keep, sizeof(keep) / sizeof(keep[0])) ||
		    (nlen > 3 && memcmp(src[i], "LC_", 3) == 0) ||
		    in_list(src[i], nlen, extra, nextra);
		if (!want || present(e, src[i], nlen))
			continue;
		/* Ours replace whatever proxy settings the launcher had. */
		if (proxy != NULL &&
		    (in_list(src[i], nlen, proxy_vars, sizeof(proxy_vars) / sizeof(proxy_vars[0])) ||
		    in_list(src[i], nlen, no_proxy_vars, 2) || name_is(src[i], nlen, NODE_PROXY_VAR)))
			continue;
		if (push(e, strdup(src[i])) < 0)
			goto fail;
	}
	if (proxy != NULL) {
		/* ALL_PROXY is the fallback for whatever is not HTTP(S): the
		 * proxy speaks SOCKS5 too, and socks5h lets it resolve the
		 * name (the sandbox has no resolver of its own). */
		for (i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++)
			if (push_var(e, proxy_vars[i], strcasecmp(proxy_vars[i], "ALL_PROXY") == 0 ?
			    "socks5h://" : "http://", proxy) < 0)
				goto fail;
		for (i = 0; i < 2; i++)
			if (push_var(e, no_proxy_vars[i], "", NO_PROXY_VALUE) < 0)
				goto fail;
		if (push_var(e, NODE_PROXY_VAR, "", "1") < 0)
			goto fail;
	}
	return e;
fail:
	br_env_free(e);
	errno = ENOMEM;
	return NULL;
}

/* The index of NAME's entry in E, or E->n when there is none. */
static size_t
find(const struct br_env *e, const char *name)
{
	size_t i, nlen = strlen(name);

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, nlen) == 0 && e->v[i][nlen] == '=')
			return i;
	return e->n;
}

const char *
br_env_get(const struct br_env *env, const char *name)
{
	size_t i = find(env, name);

	return i < env->n ? env->v[i] + strlen(name) + 1 : NULL;
}

int
br_env_set(struct br_env *env, const char *name, const char *value)
{
	size_t i = find(env, name);
	char *s;

	if (i == env->n)
		return push_var(env, name, "", value);
	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	free(env->v[i]);
	env->v[i] = s;
	return 0;
}

char **
br_env_vector(struct br_env *env)
{
	return env->v;
}

void
br_env_wipe(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		explicit_bzero(v[i], strlen(v[i]));
}

void
br_env_free(struct br_env *env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; i < env->n; i++)
		free(env->v[i]);
	free(env->v);
	free(env);
}
