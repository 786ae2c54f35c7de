/*
 * proxy/proto/sigv4.h: AWS Signature Version 4, as much as a proxy needs
 * to check a request signed with a placeholder key and sign it again with
 * the real one.  It parses the two forms of a signed request (the
 * Authorization header "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=...,
 * Signature=..." and the presigned query "X-Amz-Algorithm=...&
 * X-Amz-Credential=...&..."), builds the canonical request from a request
 * as it will be sent, and signs it.
 *
 * A pure codec: no I/O, no connection, no allocation it does not return.
 * Every parser takes untrusted bytes (tests/fuzz/fuzz-sigv4.c).  The secret
 * key given to px_sigv4_sign() is read only, and every key derived from it
 * is wiped before return.
 */
#ifndef POSTERN_PROXY_SIGV4_H
#define POSTERN_PROXY_SIGV4_H

#include <stddef.h>

#define PX_SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define PX_SIGV4_UNSIGNED "UNSIGNED-PAYLOAD"
/* Chunks carry no signature here: the head's signature covers all. */
#define PX_SIGV4_UNSIGNED_TRAILER "STREAMING-UNSIGNED-PAYLOAD-TRAILER"

/* Longest fields kept, each NUL-terminated. */
#define PX_SIGV4_KEYID_MAX 128
#define PX_SIGV4_SCOPE_PART_MAX 63
#define PX_SIGV4_SIGNED_MAX 2048

/* A credential scope: KEYID/DATE/REGION/SERVICE/aws4_request. */
struct px_sigv4_cred {
	char key_id[PX_SIGV4_KEYID_MAX + 1];
	char date[9];                              /* YYYYMMDD */
	char region[PX_SIGV4_SCOPE_PART_MAX + 1];
	char service[PX_SIGV4_SCOPE_PART_MAX + 1];
};

/* A parsed signature, of either form. */
struct px_sigv4_auth {
	int presigned;                             /* the query form */
	struct px_sigv4_cred cred;
	char signed_headers[PX_SIGV4_SIGNED_MAX + 1]; /* "host;x-amz-date" */
	char signature[65];                        /* 64 lower-case hex digits */
	char amz_date[17];                         /* query form: X-Amz-Date */
	int has_token;                             /* query form: X-Amz-Security-Token */
};

/* One header as it will be sent (pointers, not NUL-terminated). */
struct px_sigv4_header {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
};

/*
 * Parse the Authorization header value V (LEN bytes) into OUT.  Returns 1
 * when V is a SigV4 signature, 0 when it is another scheme (OUT untouched),
 * or -EINVAL with *WHY a static phrase when it says AWS4-HMAC-SHA256 but is
 * malformed (a missing or repeated part, a bad credential scope, a
 * signature that is not 64 hex digits, signed headers not lower-case or
 * without "host").
 */
int px_sigv4_parse_header(const char *v, size_t len, struct px_sigv4_auth *out, const char **why);

/*
 * Parse the presigned form from the request target T (LEN bytes, path and
 * query, as sent) into OUT.  Returns 1 when T's query has X-Amz-Algorithm,
 * 0 when it has none of the X-Amz-Algorithm, -Credential and -Signature
 * parameters, or -EINVAL with *WHY when it has some and they are not a
 * well-formed AWS4-HMAC-SHA256 presigned request (each parameter once).
 */
int px_sigv4_parse_query(const char *t, size_t len, struct px_sigv4_auth *out, const char **why);

/*
 * The canonical request (AWS: "Create a canonical request") of a request
 * with method M, target T (path and query as sent), headers H (NH of them,
 * as sent: Host included), the signed header names SIGNED (';'-separated,
 * lower case) and the payload hash PAYLOAD (64 hex digits or
 * UNSIGNED-PAYLOAD).  S3 takes the path as sent; other services (S3 = 0)
 * have its dot segments and empty segments removed and every byte but
 * unreserved ones and '/' encoded again.  The query's parameters are
 * decoded and encoded again (RFC 3986 unreserved kept, upper-case hex) and
 * sorted; with PRESIGNED, X-Amz-Signature is left out.  Returns a
 * malloc(3)ed NUL-terminated string (*LEN bytes), or NULL with *WHY a
 * static phrase (a signed header missing from H, out of memory).
 */
char *px_sigv4_canonical(const char *m, size_t mlen, const char *t, size_t tlen,
    const struct px_sigv4_header *h, size_t nh, const char *signed_headers,
    const char *payload, int s3, int presigned, size_t *len, const char **why);

/*
 * The signature of canonical request CR (CRLEN bytes) made at AMZ_DATE
 * (YYYYMMDDTHHMMSSZ) in the scope of CRED, with the secret key SECRET
 * (SLEN bytes), into SIG (64 lower-case hex digits and a NUL).  Returns 0,
 * or -EINVAL (a bad date, a key too long) or -EIO.
 */
int px_sigv4_sign(const char *secret, size_t slen, const char *amz_date,
    const struct px_sigv4_cred *cred, const char *cr, size_t crlen, char sig[65]);

/* Write the Authorization value for CRED, SIGNED and SIG into OUT (SIZE
 * bytes).  Returns its length or -ENOSPC. */
long px_sigv4_auth_value(const struct px_sigv4_cred *cred, const char *signed_headers,
    const char *sig, char *out, size_t size);

/*
 * A copy of target T (LEN bytes) in which the query parameter NAME has the
 * value VALUE (written as is: the caller encodes it), in the place of its
 * first occurrence, its other occurrences dropped; appended when T has
 * none; with VALUE NULL, every occurrence dropped.  Returns a malloc(3)ed
 * NUL-terminated string (*OUTLEN bytes), or NULL (out of memory).
 */
char *px_sigv4_set_param(const char *t, size_t len, const char *name, const char *value,
    size_t *outlen);

/* Percent-encode the LEN bytes at S as a SigV4 query value (all but
 * RFC 3986 unreserved) into OUT (SIZE bytes).  Returns the length, or
 * -ENOSPC. */
long px_sigv4_encode(const char *s, size_t len, char *out, size_t size);

/* Nonzero when the hash PAYLOAD (NUL-terminated) is one a proxy can re-sign
 * with: 64 hex digits, UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER
 * (not STREAMING-AWS4-HMAC-SHA256-PAYLOAD, whose every chunk is signed). */
int px_sigv4_payload_ok(const char *payload, size_t len);

#endif
