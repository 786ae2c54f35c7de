/*
 * proxy/proto/proxyauth.h: the credentials a client presents on an
 * auth=token listener (postern-proxy(8) "TOKEN LISTENERS"): the value of
 * a Proxy-Authorization header, and the one-line preface a bridge sends
 * first on its connection.  Codecs only: which session a credential is
 * (conf/token.h) and what follows are the flow's.
 */
#ifndef POSTERN_PROXY_PROXYAUTH_H
#define POSTERN_PROXY_PROXYAUTH_H

#include <stddef.h>

enum {
	PX_PROXYAUTH_OK = 0,
	PX_PROXYAUTH_INCOMPLETE,   /* the preface: more bytes are needed */
	PX_PROXYAUTH_NONE,         /* the preface: the bytes do not begin one */
	PX_PROXYAUTH_BAD,          /* malformed: *WHY says how */
};

/* The preface: this, the credential, then LF or CRLF. */
#define PX_PROXYAUTH_PREFACE "POSTERN-TOKEN "
/* Its longest line: the word, a name, ':', a token, CRLF. */
#define PX_PROXYAUTH_PREFACE_MAX (14 + 64 + 1 + 1024 + 2)

/* A credential: NAME (NULL when none was given: Bearer, or a preface
 * with the token alone) and TOKEN, pointing into the caller's bytes. */
struct px_proxyauth {
	const char *name;
	size_t name_len;
	const char *token;
	size_t token_len;
};

/*
 * The value V (LEN bytes) of a Proxy-Authorization header: "Basic" and
 * base64 of NAME ":" TOKEN (RFC 7617), or "Bearer" and TOKEN (RFC 6750);
 * the scheme in any case, one or more blanks after it.  The decoded
 * credential is written to BUF (SIZE bytes) and OUT points into it (or
 * into V for Bearer).  Returns PX_PROXYAUTH_OK, or PX_PROXYAUTH_BAD with
 * *WHY (another scheme, bad base64, no ':', a NUL byte, too long).
 */
int px_proxyauth_header(const char *v, size_t len, char *buf, size_t size, struct px_proxyauth *out,
    const char **why);

/*
 * The first LEN bytes a client sent, DATA: PX_PROXYAUTH_NONE when they do
 * not begin the preface (a request or SOCKS5 follows), INCOMPLETE when
 * they are a prefix of one, or PX_PROXYAUTH_OK with *USED (the line and
 * its end) and OUT pointing into DATA: "POSTERN-TOKEN " then TOKEN or
 * NAME ":" TOKEN, then LF or CRLF.  A line longer than
 * PX_PROXYAUTH_PREFACE_MAX, a blank or control byte in it, or an empty
 * part is PX_PROXYAUTH_BAD with *WHY.
 */
int px_proxyauth_preface(const char *data, size_t len, size_t *used, struct px_proxyauth *out,
    const char **why);

#endif
