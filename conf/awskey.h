/*
 * conf/awskey.h: what a [secret NAME] of kind = aws-sigv4 holds beside its
 * value (the secret access key, from from_env or from_file): the real
 * access key id, the session token if any, and the hosts the secret signs
 * for (hosts =, "*.amazonaws.com" unless written).  The proxy checks a
 * request signed with the session's placeholders and signs it again with
 * these (proxy/flow/awssign.c).
 *
 * Built with the snapshot (conf/secret.c) and immutable after.  The key
 * id and the token are never written into any message or log.
 */
#ifndef POSTERN_CONF_AWSKEY_H
#define POSTERN_CONF_AWSKEY_H

#include <stddef.h>
#include <stdint.h>

struct cf_build;
struct cf_aws;

/* The keys only kind = aws-sigv4 takes, as conf/build.h keeps them. */
enum cf_aws_key {
	CF_AWS_KEY_ID = 0,      /* access_key_id = AKIA... */
	CF_AWS_KEY_ID_ENV,      /* access_key_id_env = VAR */
	CF_AWS_TOKEN_ENV,       /* session_token_env = VAR */
	CF_AWS_TOKEN_FILE,      /* session_token_file = PATH */
	CF_AWS_HOSTS,           /* hosts = NAME|*.DOMAIN[:PORT], ... */
	CF_AWS_NKEYS
};

/* The name of key K as a file writes it. */
const char *cf_aws_key_name(enum cf_aws_key k);

/*
 * Check the value V of key K as written on its line: NULL when good, else
 * a static phrase saying why (never quoting V for the key id).
 */
const char *cf_aws_key_check(enum cf_aws_key k, const char *v);

/*
 * The AWS part of the secret NAME from the keys FIELDS (CF_AWS_NKEYS
 * strings or NULL, taken: each set to NULL), reported at B's LINE.
 * Exactly one of access_key_id and access_key_id_env, at most one of
 * session_token_env and session_token_file.  Returns NULL on an error
 * (reported) or out of memory (reported).
 */
struct cf_aws *cfaws_new(struct cf_build *b, int line, const char *name, char **fields);
void cfaws_free(struct cf_aws *a);

/* Read the key id from its variable and the token from its variable or
 * file, as a secret's value is read; reported at LINE. */
void cfaws_read(struct cf_build *b, struct cf_aws *a, const char *name, int line);

/* Nonzero when A signs for HOST (normal form) on PORT. */
int cf_aws_binds(const struct cf_aws *a, const char *host, uint16_t port);

/* The I-th name the session CA must be allowed to sign for (a host, or
 * the domain of "*.DOMAIN", whose name constraint admits every name
 * below it), or NULL past the last. */
const char *cf_aws_term_name(const struct cf_aws *a, size_t i);

/* "A, B" as hosts = wrote them (or the default), for people. */
const char *cf_aws_hosts_text(const struct cf_aws *a);

/* The real access key id (NUL-terminated), NULL before cfaws_read(). */
const char *cf_aws_key_id(const struct cf_aws *a);
/* The real session token (*LEN bytes) or NULL when the secret has none. */
const char *cf_aws_token(const struct cf_aws *a, size_t *len);
/* Nonzero when the secret has a session token (set or not yet read). */
int cf_aws_has_token(const struct cf_aws *a);

#endif
