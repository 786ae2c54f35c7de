/*
 * conf/inject.h: one binding of a secret (an "inject" line of a
 * [secret NAME], conf/secret.h): to which HOST:PORT[/PATH] the secret may
 * be sent and how it is put on the request.  The parser and the rendering
 * are the two pieces of secrets that handle bytes: they are fuzzed
 * (tests/fuzz/fuzz-secret.c).
 */
#ifndef POSTERN_CONF_INJECT_H
#define POSTERN_CONF_INJECT_H

#include <stddef.h>
#include <stdint.h>

#include "conf/host.h"

enum cf_inject_kind {
	CF_INJECT_HEADER = 1, /* NAME: FORMAT with the value for %s */
	CF_INJECT_BASIC,      /* Authorization: Basic base64(USER:value) */
	CF_INJECT_QUERY,      /* ?PARAM=value (percent-encoded), added to the target */
	CF_INJECT_REPLACE,    /* the placeholder replaced where WHERE says */
};

/* Where a REPLACE binding replaces the placeholder (a set of them). */
#define CF_REPLACE_PATH      0x1 /* the URL path, the value percent-encoded */
#define CF_REPLACE_BODY      0x2 /* a form (percent-encoded) or JSON (escaped) body */
#define CF_REPLACE_WEBSOCKET 0x4 /* the client's WebSocket text frames, as it is */

/* One binding: where a secret may be sent, and how.  Immutable. */
struct cf_inject {
	char host[CF_HOST_MAX];   /* a host name in normal form, never an IP */
	uint16_t port;            /* 443 unless written */
	const char *path;         /* path prefix (cf_rule_match_path()), or NULL */
	enum cf_inject_kind kind;
	const char *name;         /* header name (BASIC: "Authorization"), PARAM, or "replace" */
	const char *format;       /* HEADER: exactly one %s, no other %; else NULL */
	const char *user;         /* BASIC: the user name; else NULL */
	unsigned where;           /* REPLACE: CF_REPLACE_*; else 0 */
	const char *text;         /* the line as written (no value in it), for people */
	const char *file;         /* NULL for a built-in */
	int line;
};

/*
 * Parse one inject line's value "HOST[:PORT][/PATH-PREFIX] METHOD ARGS"
 * (METHOD ARGS: "header NAME [\"FORMAT\"]", "basic USER", "query PARAM",
 * "replace WHERE[,WHERE...]" with WHERE path, body or websocket)
 * into OUT, its strings allocated (free with cf_inject_clear(), which
 * takes NULL too; OUT->file and OUT->line are left for the caller).
 * Returns 0, or -EINVAL with *WHY a static phrase, or -ENOMEM.
 */
int cf_inject_parse(const char *s, struct cf_inject *out, const char **why);
void cf_inject_clear(struct cf_inject *inj);

/*
 * Render what binding INJ puts on a request with the value VALUE (VLEN
 * bytes) into OUT (SIZE bytes, NUL-terminated): for HEADER and BASIC the
 * header's value ("Bearer sk-...", "Basic dXNlcjp..."), for QUERY
 * "PARAM=VALUE" with VALUE percent-encoded (RFC 3986 §2.1, all but
 * unreserved), for REPLACE the value as it is (its place encodes it:
 * proxy/proto/bodyph.h).  Returns the length written, or -ENOSPC when it does not
 * fit (OUT is then wiped).  OUT holds the secret: the caller wipes it with
 * OPENSSL_cleanse() when done.
 */
long cf_inject_render(const struct cf_inject *inj, const char *value, size_t vlen,
    char *out, size_t size);

/*
 * Whether a request carries the placeholder PH (PHLEN bytes) where binding
 * INJ puts its secret, so that the secret may replace it.  For HEADER and
 * BASIC, VAL (LEN bytes) is the value of one header of the name INJ sets
 * (the caller matches the name): HEADER holds PH anywhere in it; BASIC is
 * "Basic base64(USER:PH)", any user, PH the whole password (RFC 7617 §2;
 * the scheme in any case, strict base64).  For QUERY, VAL is the request
 * target (path and query): a parameter named INJ->name holds PH in its
 * value, as written (not percent-decoded).  For REPLACE, VAL holds PH
 * anywhere (the caller passes the request target; bodies and frames are
 * looked at as they pass).  Returns 1 or 0; only reads.
 */
int cf_inject_carries(const struct cf_inject *inj, const char *val, size_t len, const char *ph,
    size_t phlen);

#endif
