/*
 * bridge/session.h: what the bridge learns of its session from the proxy
 * before it runs CMD (the placeholders CMD gets instead of the real
 * secrets, and the session CA it must trust), and the certificate bundle
 * written from it.  See postern-bridge(8) "SESSION INFO".
 *
 * The protocol (version 1).  The bridge opens one connection to the
 * session's proxy socket (the one it relays to, --connect) and sends
 *
 *     GET /.well-known/postern/session HTTP/1.1\r\n
 *     Host: postern\r\n
 *     Connection: close\r\n
 *     \r\n
 *
 * (an origin-form request, RFC 9112 §3.2.1, which an allowlist proxy
 * never forwards, so it cannot be mistaken for traffic).  A proxy that
 * knows the session answers "HTTP/1.1 200 OK" with "Content-Type:
 * text/plain; charset=utf-8", a Content-Length (RFC 9112 §6.3: the body
 * is exactly that many bytes; it must be there, once, and the bytes read
 * up to the close must be exactly that many) and a body of lines, each
 * ended by one LF (a CR anywhere is malformed: the proxy's own renderer
 * writes LF, and one line ending leaves nothing to disagree about):
 *
 *     postern-session 1                   first line: the version
 *     env NAME VALUE                      zero or more
 *     KEYWORD ...                         unknown keywords: ignored
 *     ca                                  optional, and then last:
 *     -----BEGIN CERTIFICATE-----         the session CA's PEM, one or
 *     ...                                 more blocks, to the end of
 *     -----END CERTIFICATE-----           the body
 *
 * NAME is a shell variable name, [A-Za-z_][A-Za-z0-9_]*, at most 255
 * bytes, each NAME at most once; VALUE is 1 to 4096 bytes of printable
 * ASCII without space (0x21-0x7e): the placeholder CMD gets as NAME.  A
 * KEYWORD is [a-z][a-z0-9-]* and its line printable ASCII, so that a
 * newer proxy can add lines an older bridge skips.  Anything else (NUL
 * bytes, an empty line, a bad name or value, a PEM block cut short or
 * with a byte outside base64, bytes after the last END line) makes the
 * whole body malformed.  Any status but 200 means "no session info" (an
 * older proxy answers 400 to the origin form).
 */
#ifndef POSTERN_BRIDGE_SESSION_H
#define POSTERN_BRIDGE_SESSION_H

#include <stddef.h>

/* The request the bridge sends, byte for byte. */
#define BR_SESSION_REQUEST \
	"GET /.well-known/postern/session HTTP/1.1\r\n" \
	"Host: postern\r\n" \
	"Connection: close\r\n" \
	"\r\n"

#define BR_SESSION_NAME_MAX 255      /* bytes of an env NAME */
#define BR_SESSION_VALUE_MAX 4096    /* bytes of an env VALUE */
#define BR_SESSION_ENV_MAX 256       /* env lines in one body */
#define BR_SESSION_CERTS_MAX 16      /* PEM blocks after "ca" */
/* The most bytes of a whole response the bridge reads: the env lines at
 * their longest, a CA chain, and the head. */
#define BR_SESSION_RESPONSE_MAX (2u * 1024 * 1024)
/* How long the bridge waits for the whole answer, in milliseconds. */
#define BR_SESSION_TIMEOUT_MS 5000

struct br_session;

/*
 * Parse BODY (LEN bytes, untrusted: the other end of the proxy's socket)
 * as a version 1 body, above.  Returns 0 and sets *OUT to a new session
 * info (free it with br_session_free()); or -EINVAL with *WHY set to a
 * static phrase saying what is wrong (WHY may be NULL), or -ENOMEM.
 * *OUT is set only on success.
 */
int br_session_parse(const char *body, size_t len, struct br_session **out,
    const char **why);

/*
 * Parse BUF (LEN bytes: everything read from the connection up to its
 * close) as the proxy's whole answer to BR_SESSION_REQUEST.  Returns 1
 * with *OUT set as br_session_parse() sets it, when the status is 200 and
 * the body is valid; 0 when the answer is not a 200 (*STATUS is set to
 * its code, or to 0 when no complete response head came: the proxy
 * closed early), *OUT untouched; -EINVAL with *WHY set when the head
 * cannot be a response, or a 200's length or body is malformed; -ENOMEM.
 */
int br_session_response(const char *buf, size_t len, int *status,
    struct br_session **out, const char **why);

/*
 * Ask the proxy on the UNIX socket SOCK (a path) for the session info:
 * send BR_SESSION_REQUEST and read to the close, within TIMEOUT_MS in
 * all (connect included), at most BR_SESSION_RESPONSE_MAX bytes.
 * Returns 0 and sets *BUF (malloc'ed, the caller frees it) and *LEN;
 * -ETIMEDOUT, -EFBIG when the answer is longer, or another negative
 * errno from connect/read/write.
 */
int br_session_fetch(const char *sock, int timeout_ms, char **buf, size_t *len);

/* br_session_fetch() with another REQUEST (a whole head, NUL-terminated):
 * the DNS stub's name check (bridge/dnsstub.h). */
int br_session_get(const char *sock, const char *request, int timeout_ms, char **buf,
    size_t *len);

/* How many env lines S has; the Ith one's NAME and VALUE (NUL-terminated,
 * owned by S, in the order of the body). */
size_t br_session_nenv(const struct br_session *s);
void br_session_env(const struct br_session *s, size_t i, const char **name,
    const char **value);

/* The CA's PEM (every block, NUL-terminated, owned by S), or NULL when the
 * body had no "ca" line. */
const char *br_session_ca(const struct br_session *s);

/* Free S (wiping nothing: placeholders are not secrets).  NULL: no-op. */
void br_session_free(struct br_session *s);

/*
 * The variables a session CA's bundle is exported as (NULL-terminated):
 * SSL_CERT_FILE (OpenSSL, Python's ssl, Go on Linux), NODE_EXTRA_CA_CERTS
 * (Node.js, added to its own roots), REQUESTS_CA_BUNDLE (Python requests),
 * CURL_CA_BUNDLE (curl), GIT_SSL_CAINFO (git), PIP_CERT (pip),
 * CARGO_HTTP_CAINFO (cargo) and AWS_CA_BUNDLE (the AWS CLI and SDKs).
 */
extern const char *const br_session_ca_vars[];

/*
 * The roots a bundle starts with: ROOTS (the file named by SSL_CERT_FILE
 * in CMD's environment; may be NULL) when it can be opened, else the
 * first readable of /etc/ssl/certs/ca-certificates.crt,
 * /etc/pki/tls/certs/ca-bundle.crt and /etc/ssl/cert.pem.  Write them,
 * then CA_PEM, into a new file "DIR/ca-bundle.pem" in a new directory
 * made by mkdtemp(3) under TMPDIR (may be NULL or empty: /tmp), the
 * directory mode 0755 and the file 0644 (created O_EXCL|O_NOFOLLOW),
 * written and closed before this returns.  Returns 0 with the file's path
 * in PATH (SIZE bytes) and *USED set to the roots file read (a static or
 * ROOTS) or NULL when none could be read (the bundle is then the CA
 * alone); or a negative errno (nothing is left behind).
 */
int br_bundle_write(const char *roots, const char *tmpdir, const char *ca_pem,
    char *path, size_t size, const char **used);

/* Remove the bundle at PATH and its directory (best effort). */
void br_bundle_remove(const char *path);

#endif
