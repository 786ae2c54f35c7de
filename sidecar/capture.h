/*
 * sidecar/capture.h: transparent capture for the pod (container mode with
 * --capture, postern-sidecar(8) "TRANSPARENT CAPTURE IN THE POD").
 *
 * The bridge's DNS stub (bridge/dnsstub.h) and relay (bridge/relay.h) in a
 * process of their own: the stub on 127.0.0.1:53 of the pod's namespace,
 * 198.18.0.0/15 made local on lo, and every connection to a synthetic
 * address relayed as "CONNECT NAME:PORT" to the engine's UNIX listener.
 * Nothing of it leaves lo, so the lock-down's "oif lo accept" is all it
 * needs; the stub forwards no query and a name gets listeners only when
 * the session allows it.
 */
#ifndef POSTERN_SIDECAR_CAPTURE_H
#define POSTERN_SIDECAR_CAPTURE_H

#include <sys/types.h>

/*
 * Fork the capture process (as root, before the caller drops): it makes
 * the synthetic range local, binds the stub, becomes UID for good keeping
 * only CAP_NET_BIND_SERVICE (for each allowed name's low ports; nothing
 * inheritable or ambient, no_new_privs), dies with the
 * caller (PARENT, its pid), and then relays towards the UNIX socket SOCK
 * (a path) until SIGTERM or SIGINT.  Returns its pid once it says it is
 * ready, or a negative errno after it said why it could not start (it has
 * then exited, reaped by the caller's usual loop).
 */
pid_t sc_capture_start(const char *sock, uid_t uid, pid_t parent);

#endif
