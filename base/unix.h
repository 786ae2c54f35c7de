/*
 * base/unix.h: the address of a UNIX socket named by a path.  libc only:
 * the bridge links it.
 */
#ifndef POSTERN_BASE_UNIX_H
#define POSTERN_BASE_UNIX_H

#include <sys/socket.h>
#include <sys/un.h>

/*
 * Fill *SUN with the pathname PATH (NUL-terminated; not an abstract
 * name) and store the address's length (up to and with the NUL) in *LEN
 * (LEN may be NULL).  Returns 0, or -ENAMETOOLONG when PATH does not fit
 * in sun_path with its NUL; *SUN is then zeroed and unusable.
 */
int bs_unix_addr(struct sockaddr_un *sun, socklen_t *len, const char *path);

#endif
