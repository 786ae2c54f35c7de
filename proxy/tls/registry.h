/*
 * proxy/tls/registry.h: the TLS state of every session that terminates
 * TLS: its certificate authorities and the one upstream client
 * context, kept in line with the config snapshot at start and at each
 * reload.
 *
 * A session terminates TLS for the hosts its secrets are bound to
 * (cf_session_terminated_hosts()).  Its first CA is made for the hosts it
 * has when it first appears (or loaded from [proxy] state_dir, see
 * proxy/tls/ca.h).  A reload never replaces a CA that running sandboxes trust:
 * a host it does not cover gets a further CA of the session, made for the
 * hosts no CA of it covers yet (named SESSION+2, SESSION+3, ... in the
 * state directory), so the sandboxes already running keep every host they
 * had, and the ones started afterwards trust all of the session's CAs
 * (px_tlsreg_pem()).  A session that no longer terminates anything, or is
 * gone, drops its CAs; connections using one of its leaves keep their own
 * references.
 *
 * Owned by the engine, used on the loop's thread only.
 */
#ifndef POSTERN_PROXY_TLSREG_H
#define POSTERN_PROXY_TLSREG_H

#include <stddef.h>

#include <openssl/ssl.h>

struct cf_config;
struct px_tlsreg;

/* At most this many CAs per session (each reload that adds hosts may add
 * one); past it a reload that adds hosts is refused. */
#define PX_SESSTLS_MAX_CAS 8

/* An empty registry (no session terminates anything), or NULL. */
struct px_tlsreg *px_tlsreg_new(void);
void px_tlsreg_free(struct px_tlsreg *r);

/*
 * Bring R in line with CFG: every session of CFG that terminates TLS has
 * CAs covering all its terminated hosts, and the upstream context trusts
 * CFG's [proxy] upstream_ca_file (or the system store).  All or nothing:
 * returns 0, or -1 with one line in ERR (ERRSZ bytes), and then R is as it
 * was (a reload must then be refused, and a start fail).  *MADE (when not
 * NULL) is set to how many CAs were made or loaded by this call.
 */
int px_tlsreg_update(struct px_tlsreg *r, const struct cf_config *cfg, size_t *made,
    char *err, size_t errsz);

/*
 * The same in two steps, for a reload that has more to check after it:
 * px_tlsreg_prepare() makes (or loads) every CA CFG needs and changes
 * nothing in R (NULL with ERR when it cannot); then exactly one of
 * px_tlsreg_commit() (R follows CFG) or px_tlsreg_abort() (everything
 * prepared is freed, R as it was).  Nothing else may touch R between.
 */
struct px_tlsreg_next;
struct px_tlsreg_next *px_tlsreg_prepare(struct px_tlsreg *r, const struct cf_config *cfg,
    size_t *made, char *err, size_t errsz);
void px_tlsreg_commit(struct px_tlsreg *r, struct px_tlsreg_next *x);
void px_tlsreg_abort(struct px_tlsreg *r, struct px_tlsreg_next *x);

/*
 * A server-side context presenting a leaf for HOST, issued by the oldest
 * CA of SESSION that covers HOST: a new reference (SSL_CTX_free()), or
 * NULL with errno (ENOENT: SESSION terminates nothing or not HOST).
 */
SSL_CTX *px_tlsreg_leaf(struct px_tlsreg *r, const char *session, const char *host);

/* Every CA of SESSION in PEM, oldest first (what its sandbox is to trust),
 * owned by R until the next update; NULL when SESSION terminates nothing.
 * Only on the first worker's loop, where updates run (reload.c). */
const char *px_tlsreg_pem(const struct px_tlsreg *r, const char *session);
/* The same, copied under R's lock for any worker's loop: in *PEM, for the
 * caller to free (NULL when SESSION terminates nothing); 0 or -ENOMEM. */
int px_tlsreg_pem_copy(const struct px_tlsreg *r, const char *session, char **pem);

/* How many CAs SESSION has (0: it terminates nothing). */
size_t px_tlsreg_ncas(const struct px_tlsreg *r, const char *session);

/* The client context for upstream TLS (verification on, TLS 1.2 or
 * newer), owned by R; NULL until an update with a session that
 * terminates TLS (it loads the whole trust store, so only then). */
SSL_CTX *px_tlsreg_upstream(const struct px_tlsreg *r);

#endif
