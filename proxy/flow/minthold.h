/*
 * proxy/flow/minthold.h: a request inside a terminated tunnel that needs a
 * minted token (proxy/flow/mint.h) not yet ready waits for it, as a
 * request held for a decider does; a failed mint refuses it with
 * credential_unavailable (503), the endpoint's words in the detail.
 */
#ifndef POSTERN_PROXY_MINTHOLD_H
#define POSTERN_PROXY_MINTHOLD_H

#include <stddef.h>

struct px_conn;

/*
 * The token of C's session's secret I (a minted kind) into OUT (SIZE
 * bytes; wipe it after use): its length, noting its generation in C for
 * px_minthold_answer(); or -EAGAIN when none is ready.
 */
long px_minthold_value(struct px_conn *c, size_t i, char *out, size_t size);

/*
 * Hold C's request (its head still in the client's input) until secret
 * I's token is minted, then call RESUME(C); or refuse C.  C may be freed
 * on return.
 */
void px_minthold(struct px_conn *c, size_t i, void (*resume)(struct px_conn *c));

/* The upstream answered C's request with STATUS: a 401 to a request that
 * carried a minted token drops that token. */
void px_minthold_answer(struct px_conn *c, int status);

/* Nonzero when a minted secret of C's session is bound to the host and
 * port of C's terminated tunnel: it is not offered h2 (only the
 * HTTP/1.1 path waits for a token). */
int px_minthold_bound(const struct px_conn *c);

/*
 * A request to a host a github-app secret of C's session is bound to,
 * whose target PATH (LEN bytes) names a repository outside the session's
 * github_repositories (proxy/proto/mintmsg.h: px_mint_github_repo(); the
 * REST API's form where the binding is a header, git's where it is
 * basic), is refused 403 repository_not_allowed before it leaves.
 * Returns 1 after refusing C, else 0.
 */
int px_minthold_repo_refused(struct px_conn *c, const char *path, size_t len);

#endif
