/*
 * bridge/upstream.h: the proxy the bridge reaches.  "PATH" or "unix:PATH"
 * is a UNIX socket, the session's own (the socket is the credential);
 * "tcp:ADDR:PORT" is an auth=token listener of a central proxy, where
 * each connection begins with the preface line "POSTERN-TOKEN CRED" CRLF
 * (postern-bridge(8) "TOKEN LISTENERS"): CRED is the first line of the
 * --token-file, read once at start.  The bridge relays bytes it does not
 * parse, so the token goes as that line, never as a header.
 */
#ifndef POSTERN_BRIDGE_UPSTREAM_H
#define POSTERN_BRIDGE_UPSTREAM_H

#include <stddef.h>
#include <sys/socket.h>

/* "tcp:" + "[" + the longest IPv6 text + "]:" + 5 digits, or a UNIX path. */
#define BR_UPSTREAM_NAME_MAX 128

struct br_upstream {
	struct sockaddr_storage ss;
	socklen_t len;
	int tcp;                            /* tcp:ADDR:PORT */
	char name[BR_UPSTREAM_NAME_MAX];    /* as given, for messages */
};

/*
 * Parse SPEC into U: "tcp:IPV4:PORT", "tcp:[IPV6]:PORT", "unix:PATH" or a
 * PATH.  Returns 0, -ENAMETOOLONG (a path too long for sun_path), or
 * -EINVAL (empty, or a bad tcp: address) with *WHY.
 */
int br_upstream_parse(const char *spec, struct br_upstream *u, const char **why);

/*
 * Read the token file PATH once: its first line, trailing blanks and line
 * end cut, must be 32 to 1100 bytes of printable ASCII without blanks
 * ("TOKEN", or "NAME:TOKEN" to name the session).  It is kept, as the
 * preface, for every later connection to a tcp: upstream, and the
 * process is made non-dumpable so that what it runs cannot read it back.
 * Returns 0, or -1 with WHY (SIZE bytes; never the token).
 */
int br_upstream_token(const char *path, char *why, size_t size);

/* Send the preface, when a token was read, on FD, just connected to U
 * (nothing for a UNIX upstream).  A fresh socket takes it whole.
 * Returns 0, or a negative errno. */
int br_upstream_preface(const struct br_upstream *u, int fd);

#endif
