/*
 * base/tcp.h: congestion control for TCP sockets that stay on loopback:
 * a listener's (its accepted sockets inherit it) and a socket about to
 * connect to a loopback address.  libc only: the bridge links it.
 */
#ifndef POSTERN_BASE_TCP_H
#define POSTERN_BASE_TCP_H

#include <stdbool.h>
#include <sys/socket.h>

/* SA is 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6. */
bool bs_addr_is_loopback(const struct sockaddr *sa);

/*
 * When the TCP listener FD is bound to a loopback address: congestion
 * control Reno for it, which the sockets it accepts inherit.  A loopback
 * connection never leaves the machine: no loss, no queue, nothing for
 * congestion control to do, and Reno (every kernel has it, any user may
 * choose it) does that without pacing; where the system's default is
 * BBR, every send would arm the socket's pacing timer for nothing.  1
 * when set, 0 otherwise (not loopback, or refused: the default stays).
 */
int bs_tcp_loopback_reno(int fd);

/*
 * Congestion control Reno on the TCP socket FD, before it connects to a
 * loopback address (the same reasons).  Set afterwards it would come too
 * late: the default's pacing, once the connection started it, stays on
 * the socket.  1 when set, 0 when refused (the default stays).
 */
int bs_tcp_reno(int fd);

#endif
