/*
 * bridge/forward.h: --forward, a port of the control host made to appear on
 * the sandbox's loopback.  What is written on the command line
 * ("8099", "8099:127.0.0.1:8099", "9000:[::1]:8099") and what the proxy
 * answers to the CONNECT the bridge sends for each forwarded connection.
 * Pure parsing: no I/O here (bridge/relay.c does that).
 */
#ifndef POSTERN_BRIDGE_FORWARD_H
#define POSTERN_BRIDGE_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "base/reply.h"

/* A host name (253) or "[" IPv6 "]", ":", 5 digits, NUL, rounded up. */
#define BR_FORWARD_TARGET_MAX 272

struct br_forward {
	uint16_t port;                        /* listened on in the sandbox */
	char target[BR_FORWARD_TARGET_MAX];   /* "HOST:PORT", as CONNECT asks */
};

/*
 * Parse S (NUL-terminated, the caller's) as "PORT" or "PORT:HOST:HPORT"
 * into *F.  PORT is the port the bridge listens on in the sandbox; the
 * connection is asked of the proxy as CONNECT HOST:HPORT, and a bare PORT
 * means 127.0.0.1:PORT, the loopback of the proxy's host.  HOST is a name
 * or IPv4 literal (letters, digits, '.', '-') or a bracketed IPv6 literal;
 * ports are 1-65535 in plain decimal without a sign or leading zero.  Only
 * the syntax is judged: whether the proxy allows HOST:HPORT is its rules'
 * business.  Returns 0, or -EINVAL with *WHY (when WHY is not NULL) set to
 * a static phrase; *F is written only on success.
 */
int br_forward_parse(const char *s, struct br_forward *f, const char **why);

/*
 * Copy SRC (LEN bytes, untrusted) into BUF of SIZE bytes (SIZE > 0) for a
 * log line, NUL-terminated: printable ASCII as is, a tab as a space, every
 * other byte (and '\') as \xNN; stops early rather than overflow, so the
 * result may be truncated.  Returns the length written.
 */
size_t br_forward_escape(const char *src, size_t len, char *buf, size_t size);

#endif
