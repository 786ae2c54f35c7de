/*
 * proxy/flow/mint.h: the credentials the proxy mints at run time for a
 * secret of a minted kind (conf/secret.h: kind = oauth2), and their cache.
 *
 * One cache for the whole process, shared by every worker under one lock:
 * a rotated refresh token is good for one use, so two workers refreshing
 * one grant on their own would spend each other's.  An oauth2 secret's
 * token is one per secret, shared by the sessions that select it (they
 * hold the same grant).  A token is kept until shortly before it expires
 * and refreshed in the background before that; at most one mint of an
 * entry is in flight, on the loop of the worker that asked first, and
 * what waits for it on other workers is woken on its own loop.
 *
 * A token lives only here, in the secure heap when there is one; it is
 * never logged.  A rotated refresh token is kept in state_dir when set
 * (mode 0600, a temporary file renamed), and used after a restart as
 * long as the refresh token the config gives is still the one it
 * replaced.
 */
#ifndef POSTERN_PROXY_MINT_H
#define POSTERN_PROXY_MINT_H

#include <stddef.h>

struct cf_secret;
struct px_server;
struct px_mint_wait;

/* Nonzero when SEC is of a kind the proxy mints. */
int px_mint_kind(const struct cf_secret *sec);

/*
 * The token of SEC for SESSION, ready to use, into OUT (SIZE bytes, NUL
 * added; wipe it after use) with its generation in *GEN: returns its
 * length, or 0 when none is ready (px_mint_wait() then).  Past its
 * refresh time it is still given, and a refresh starts on SRV's loop.
 */
long px_mint_token(struct px_server *srv, const char *session, const struct cf_secret *sec,
    char *out, size_t size, unsigned long *gen);

/*
 * Wait for SEC's token for SESSION: a mint starts on SRV's loop unless
 * one is in flight.  CB is called once, later, on SRV's loop: OK nonzero
 * when a token was minted (px_mint_token() gives it), else ERR says why
 * (the endpoint's words, never a token).  Returns the wait, or NULL when
 * memory ran out (CB is then never called).
 */
typedef void px_mint_cb(void *arg, int ok, const char *err);
struct px_mint_wait *px_mint_wait(struct px_server *srv, const char *session,
    const struct cf_secret *sec, px_mint_cb *cb, void *arg);

/* Stop waiting: CB is never called.  NULL is a no-op.  On W's loop only. */
void px_mint_wait_cancel(struct px_mint_wait *w);

/*
 * The upstream refused the token of generation GEN of secret SECRET for
 * SESSION (a 401): it is dropped, and the next request mints a new one.
 */
void px_mint_rejected(const char *session, const char *secret, unsigned long gen);

/*
 * Session SESSION ended (a runtime session removed): its github-app tokens
 * are revoked (DELETE /installation/token) from SRV's loop, and forgotten.
 */
void px_mint_session_ended(struct px_server *srv, const char *session);

/*
 * The proxy stops: every github-app token is revoked from SRV's loop,
 * which is turned here (its dispatch has ended) until GitHub has answered
 * each or TIMEOUT_MS have passed.
 */
void px_mint_revoke_all(struct px_server *srv, unsigned timeout_ms);

/* SRV goes away: the mints in flight on its loop are stopped (their
 * waiters are told they failed). */
void px_mint_server_gone(struct px_server *srv);

#endif
