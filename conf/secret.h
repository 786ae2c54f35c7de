/*
 * conf/secret.h: named secrets.  A secret is a credential the proxy holds
 * and the sandbox never does: its value comes from the proxy's environment
 * or a file, its bindings ("inject" lines) say to which HOST:PORT[/PATH]
 * it may be sent and how (a header with a format, Basic auth, a query
 * parameter), and each session that selects it (secrets =) gets its own
 * placeholder, random past a public vendor prefix, to hand to its sandbox
 * in the variable placeholder_env.  The built-in providers (anthropic, openai, ...) are
 * secrets every config has; a [secret NAME] of the same name replaces one.
 *
 * Everything here reads an immutable snapshot (conf/config.h): nothing
 * allocates, nothing fails, and every pointer returned lives as long as the
 * snapshot.  A value is never written into any message, log or --check
 * output; only names, hosts and variable names are.
 */
#ifndef POSTERN_CONF_SECRET_H
#define POSTERN_CONF_SECRET_H

#include <stddef.h>
#include <stdint.h>

#include "conf/host.h"
#include "conf/inject.h"

struct cf_config;
struct cf_session;

/* What a secret holds and how it reaches a request (kind =). */
enum cf_secret_kind {
	CF_SECRET_STATIC = 0,   /* one value, put on by its inject lines */
	CF_SECRET_AWS_SIGV4,    /* AWS keys: requests re-signed (conf/awskey.h) */
	CF_SECRET_OAUTH2,       /* an access token the proxy gets from a token endpoint */
	CF_SECRET_GITHUB_APP,   /* a GitHub App installation token, per session */
};

/* The settings of a secret the proxy mints (kind = oauth2), by key. */
enum cf_mint_key {
	CF_MINT_TOKEN_URL = 0,  /* token_url: the token endpoint, https */
	CF_MINT_CLIENT_ID,      /* client_id */
	CF_MINT_SCOPE,          /* scope */
	CF_MINT_REFRESH_ENV,    /* refresh_token_env: the first refresh token's variable */
	CF_MINT_REFRESH_FILE,   /* refresh_token_file: or its file */
	CF_MINT_APP_ID,         /* app_id: a GitHub App's id */
	CF_MINT_INSTALLATION,   /* installation_id: its installation */
	CF_MINT_API_URL,        /* api_url: GitHub's API (https://api.github.com) */
	CF_MINT_KEY_FILE,       /* private_key_file: the app's private key, PEM */
	CF_MINT_NKEYS
};

struct cf_secret;
struct cf_rule;

/* Longest value accepted, in bytes. */
#define CF_SECRET_MAX 4096
/* Random characters every placeholder has at least (the list of formats
 * in conf/secret.c keeps to it). */
#define CF_PLACEHOLDER_MIN_RANDOM 20
/* Longest prefix placeholder_prefix = may set. */
#define CF_PLACEHOLDER_PREFIX_MAX 32
/* Longest placeholder, in bytes, without its NUL. */
#define CF_PLACEHOLDER_MAX 200

/*
 * The secrets of session S, in selection order ([defaults]' secrets =
 * first, then the session's own, each once): cf_session_nsecrets() of them,
 * cf_session_secret() the Ith (NULL past the last), and
 * cf_session_placeholder() the Ith's placeholder for this session (NUL-
 * terminated; printable ASCII; different in every session).
 */
size_t cf_session_nsecrets(const struct cf_session *s);
const struct cf_secret *cf_session_secret(const struct cf_session *s, size_t i);
const char *cf_session_placeholder(const struct cf_session *s, size_t i);

/* The secret's name, the variable its placeholder goes in, and where its
 * value comes from, for people: "env NAME" or "file PATH". */
const char *cf_secret_name(const struct cf_secret *sec);
const char *cf_secret_placeholder_env(const struct cf_secret *sec);
/* A second variable the placeholder goes in, for a client that reads its
 * key from another name (the built-in openai's CODEX_API_KEY), or NULL. */
const char *cf_secret_also_env(const struct cf_secret *sec);
const char *cf_secret_source(const struct cf_secret *sec);
int cf_secret_builtin(const struct cf_secret *sec);
/* The variable SEC reads its value from, or NULL (a file). */
const char *cf_secret_from_env(const struct cf_secret *sec);

/*
 * The value of SEC (*LEN bytes, NUL-terminated), read at load; NULL when no
 * session selects SEC (its value is never read then).  Never log it.
 */
const char *cf_secret_value(const struct cf_secret *sec, size_t *len);

/*
 * Nonzero when SEC is put on every request its bindings match
 * (inject_when = always); zero (the default, inject_when = placeholder)
 * when only on a request that carries the session's placeholder of SEC
 * where the binding puts the value (cf_inject_carries()).
 */
int cf_secret_inject_always(const struct cf_secret *sec);

/* SEC's kind (kind =; CF_SECRET_STATIC unless written). */
enum cf_secret_kind cf_secret_kind(const struct cf_secret *sec);
/* SEC's setting K as written, or NULL. */
const char *cf_secret_mint(const struct cf_secret *sec, enum cf_mint_key k);
/*
 * The refresh token SEC was given (refresh_token_env or _file; *LEN
 * bytes, NUL-terminated), read at load like the value; NULL when none.
 * Never log it.
 */
const char *cf_secret_refresh_token(const struct cf_secret *sec, size_t *len);
/*
 * The private key of a kind = github-app secret (PEM, *LEN bytes,
 * NUL-terminated), read at load from private_key_file; NULL when none.
 */
const char *cf_secret_private_key(const struct cf_secret *sec, size_t *len);
/*
 * What session S's GitHub App tokens may reach: WHICH 0 the repositories
 * (github_repositories, "OWNER/REPO,..."), 1 the permissions
 * (github_permissions, "NAME:LEVEL,..."), as the session or [defaults]
 * gives them; NULL when neither does.
 */
const char *cf_session_github(const struct cf_session *s, int which);
/* The name of KIND as kind = writes it ("static", ...). */
const char *cf_secret_kind_name(enum cf_secret_kind kind);
/* The kind KIND names, or -1. */
int cf_secret_kind_parse(const char *name);

/*
 * kind = aws-sigv4: the AWS part of SEC (conf/awskey.h), or NULL for
 * another kind.  Such a secret has no inject lines: it is bound to the
 * hosts of hosts =, where cf_secret_binding() gives a binding of no
 * CF_INJECT_* kind (nothing is injected by it; the proxy re-signs).
 */
const struct cf_aws *cf_secret_aws(const struct cf_secret *sec);

/*
 * The index of the first aws-sigv4 secret of session S that signs for HOST
 * (normal form) on PORT, or -1.
 */
long cf_session_aws_secret(const struct cf_session *s, const char *host, uint16_t port);

/*
 * More variables for the sandbox than placeholder_env and also_env: the
 * Kth (from 0) for session S's Ith secret, its name (cf_secret_more_env())
 * and its placeholder (cf_session_placeholder_more()), NULL past the last.
 * An aws-sigv4 secret's placeholder (placeholder_env, AWS_ACCESS_KEY_ID
 * unless written) is an access key id, "AKIA" and 16 upper-case letters
 * and digits; it adds AWS_SECRET_ACCESS_KEY (40 characters) and, with a
 * session token, AWS_SESSION_TOKEN.  Each is random per session as
 * cf_placeholder_make() draws, never a value of the secret.
 */
const char *cf_secret_more_env(const struct cf_secret *sec, size_t k);
const char *cf_session_placeholder_more(const struct cf_session *s, size_t i, size_t k);

/* The bindings of SEC, in file order: cf_secret_ninject() of them. */
size_t cf_secret_ninject(const struct cf_secret *sec);
const struct cf_inject *cf_secret_inject(const struct cf_secret *sec, size_t i);

/*
 * The binding of SEC for a request to HOST (normal form) on PORT with the
 * request target PATH (LEN bytes, path and query; NULL matches only a
 * binding without a path prefix), or NULL when SEC may not be sent there.
 * Among several, the one with the longest path prefix wins.
 */
const struct cf_inject *cf_secret_binding(const struct cf_secret *sec, const char *host,
    uint16_t port, const char *path, size_t len);

/*
 * The index (for cf_session_secret()) of the first secret of session S
 * bound to HOST (normal form) on PORT, any path, or -1: the hosts whose
 * requests the proxy narrows and whose TRACE it refuses.
 */
long cf_session_bound_secret(const struct cf_session *s, const char *host, uint16_t port);

/*
 * Nonzero when some secret of session S is bound to HOST:PORT (any path),
 * or an allow rule of S asks to inspect it (cf_session_inspects()): the
 * proxy terminates TLS for it.
 */
int cf_session_terminates(const struct cf_session *s, const char *host, uint16_t port);

/*
 * The first allow rule of session S with the "inspect" flag for HOST
 * (normal form) on PORT (443 when the rule names none), or NULL; always
 * NULL for a session that listens nowhere.  The rule is the snapshot's.
 */
const struct cf_rule *cf_session_inspects(const struct cf_session *s, const char *host,
    uint16_t port);

/*
 * The distinct host names session S terminates TLS for (its secrets'
 * hosts, then those its allow rules inspect), for its CA's name
 * constraints: returns how many and points *NAMES at them (the snapshot's;
 * *NAMES is NULL when there are none).
 */
size_t cf_session_terminated_hosts(const struct cf_session *s, const char *const **names);

/*
 * Search the LEN bytes at BUF for any placeholder of session S.  Returns
 * the index (for cf_session_secret()) of the first one found, or -1.  One
 * memmem(3) per secret of S: linear in LEN for each.  Only the plain form
 * is found, not one hidden by an encoding (base64, %-escapes of characters
 * that need none).
 */
long cf_session_find_placeholder(const struct cf_session *s, const void *buf, size_t len);
/* Nonzero when the LEN bytes at BUF hold the placeholder of S's Ith
 * secret (as cf_session_find_placeholder() looks for it). */
int cf_session_has_placeholder(const struct cf_session *s, size_t i, const void *buf, size_t len);

/*
 * The secrets of snapshot C that --check shows: every [secret] of the file
 * and every built-in some session selects, in that order.
 */
size_t cf_config_nsecrets(const struct cf_config *c);
const struct cf_secret *cf_config_secret(const struct cf_config *c, size_t i);

/*
 * Make the placeholder for VALUE (VLEN bytes) of secret SECRET in session
 * SESSION into OUT (SIZE bytes; CF_PLACEHOLDER_MAX + 1 always suffice): a
 * public prefix, then random characters, their number and alphabet fixed
 * by the prefix.  The prefix is PREFIX when not NULL (placeholder_prefix
 * =), else the longest of a fixed list of vendor formats ("sk-ant-api03-",
 * "sk-proj-", "ghp_", ...) that VALUE starts with, else the built-in
 * provider SECRET's own, else none.  A listed prefix gets its vendor's
 * length (95 characters of [A-Za-z0-9] after "sk-ant-api03-", 64 of
 * [0-9a-f] after "sk-or-v1-"); any other 32 of [A-Za-z0-9].  Nothing else
 * of VALUE goes in: the characters are drawn without bias from an
 * HMAC-SHA-256 over (SESSION, SECRET, prefix, alphabet) keyed by 32 bytes
 * from getrandom(2) drawn once per process, so the same session, secret
 * and format give the same placeholder for as long as the process runs
 * (across reloads, and when the value changes within its format); it is
 * never VALUE.  Returns its length, or a negative errno (-EINVAL for a
 * bad PREFIX or VLEN).
 */
long cf_placeholder_make(const char *session, const char *secret, const char *prefix,
    const char *value, size_t vlen, char *out, size_t size);

/* Nonzero when PREFIX may be a placeholder's prefix: at most
 * CF_PLACEHOLDER_PREFIX_MAX URL-unreserved characters (RFC 3986: letters,
 * digits, '-', '.', '_', '~'), so that it goes unchanged through a
 * header, a query and a shell. */
int cf_placeholder_prefix_ok(const char *prefix);

#endif
