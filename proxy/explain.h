/*
 * proxy/explain.h: postern-proxy --explain, the admin's "what would happen".
 */
#ifndef POSTERN_PROXY_EXPLAIN_H
#define POSTERN_PROXY_EXPLAIN_H

#include <stdio.h>

/*
 * Load the config PATH (NULL: built-in default) with OV (may be NULL:
 * postern-proxy's --allow and --listen) and explain what the proxy
 * would decide for TARGET ("HOST:PORT" for CONNECT, "http://HOST[:PORT]/PATH"
 * for plain HTTP) arriving in SESSION.  The first line written to OUT is
 * "allow RULE FILE:LINE" or "deny REASON (detail)"; explanations follow.
 * With RESOLVE, the name is resolved with c-ares and every address is
 * classified as the proxy would.  Returns 0 for allow, 1 for deny, 2 when
 * the config or the arguments are bad.
 */
struct cf_overrides;
int px_explain(const char *path, const struct cf_overrides *ov, const char *target,
    const char *session, int resolve, FILE *out);

#endif
