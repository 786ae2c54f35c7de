/*
 * bridge/addr.h: the listen addresses of postern-bridge, as written on its
 * command line ("127.0.0.1:3128", "[::1]:3128") and as put into the proxy
 * URLs it exports.
 */
#ifndef POSTERN_BRIDGE_ADDR_H
#define POSTERN_BRIDGE_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

/* "[" + the longest IPv6 text + "]:" + 5 digits + NUL, rounded up. */
#define BR_ADDR_TEXT_MAX 64

/*
 * Parse S (NUL-terminated, owned by the caller) as "IPV4:PORT" or
 * "[IPV6]:PORT" into *SS and *LEN.  The IPv4 address must be a dotted quad
 * (inet_pton(3) rules: no octal, hex or shortened forms), the IPv6 address a
 * literal without a zone, the port plain decimal digits 0-65535 with no sign,
 * no leading zero and nothing after it (0 asks the kernel for a free port).
 * Returns 0, or -EINVAL with *WHY (when WHY is not NULL) pointing to a static
 * phrase saying what is wrong; *SS and *LEN are written only on success.
 */
int br_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
    const char **why);

/*
 * Parse the LEN bytes at S (the whole of them) as a port: 1-5 decimal
 * digits, no sign, no leading zero (except "0" itself), at most 65535.
 * Stores it in *OUT and returns 0, or returns -EINVAL.
 */
int br_addr_port_parse(const char *s, size_t len, unsigned int *out);

/*
 * Write SA (an AF_INET or AF_INET6 address) as "A.B.C.D:PORT" or
 * "[X::Y]:PORT" into BUF of SIZE bytes, NUL-terminated.  Returns 0, -EINVAL
 * for another family, or -ENOSPC when SIZE is too small (BR_ADDR_TEXT_MAX
 * always suffices).
 */
int br_addr_format(const struct sockaddr *sa, char *buf, size_t size);

#endif
