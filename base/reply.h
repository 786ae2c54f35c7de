/*
 * base/reply.h: the one parser of an HTTP/1.x response head that
 * postern's own clients read (the bridge's CONNECTs and session request,
 * postern-proxy ctl, postern-sidecar ask).  libc only; pure.
 */
#ifndef POSTERN_BASE_REPLY_H
#define POSTERN_BASE_REPLY_H

#include <stddef.h>

/* The longest X-Postern-Reason value kept (the proxy's are short codes). */
#define BS_REPLY_REASON_MAX 64

/* An HTTP/1.x response head, as far as postern's clients need it: the
 * bridge reading the proxy's answer to a CONNECT, ctl and
 * postern-sidecar ask reading the admin socket's. */
struct bs_reply {
	int status;                           /* 100-999 */
	size_t head_len;                      /* bytes up to and with CRLFCRLF */
	char reason[BS_REPLY_REASON_MAX];     /* X-Postern-Reason, or "" */
};

/*
 * Parse the response head at the start of BUF (LEN bytes, untrusted: the
 * other end of the proxy's socket) into *OUT: status line "HTTP/1.D SP
 * DDD ...", header lines, then an empty line (RFC 9112 §4, §2.2).  The
 * X-Postern-Reason field's value is kept with only letters, digits and
 * '_' copied (anything else ends it).  Returns 1 with *OUT filled when the
 * whole head is in BUF, 0 when more bytes are needed (no CRLFCRLF yet, and
 * what is there could still start a valid head), or -EINVAL when BUF cannot
 * be a response head.  Bytes after the head are not looked at.
 */
int bs_reply_parse(const char *buf, size_t len, struct bs_reply *out);

#endif
