/*
 * bridge/link.h: bring a network interface up over netlink (libnl-route-3),
 * so that a sealed namespace needs no iproute2 in its image.  The bridge uses
 * it for "lo"; the sidecar reuses it for the same job.
 */
#ifndef POSTERN_BRIDGE_LINK_H
#define POSTERN_BRIDGE_LINK_H

#include <stdbool.h>

/*
 * Make sure the interface called NAME (a NUL-terminated name owned by the
 * caller) in the calling thread's network namespace is administratively up.
 * It is read over an rtnetlink socket; when IFF_UP is clear it is set with
 * RTM_NEWLINK/RTM_SETLINK and read back again, so success means the kernel
 * reports the link up afterwards.  *CHANGED (when CHANGED is not NULL) is
 * set to true when this call brought the link up and to false when it was up
 * already; it is written only on success.  Returns 0, or a negative errno:
 * -EPERM when the caller lacks CAP_NET_ADMIN over the namespace, -ENODEV when
 * there is no such interface, -ENOMEM, or -EIO for any other netlink failure.
 * Opens and closes its own netlink socket; keeps no state.
 */
int br_link_up(const char *name, bool *changed);

/*
 * br_link_up() for the loopback interface "lo": the one a freshly unshared
 * network namespace has, down.  Same return values and CHANGED contract.
 */
int br_link_up_lo(bool *changed);

/* The synthetic range of transparent capture (bridge/dnsstub.h). */
#define BR_LINK_CAPTURE_NET 0xc6120000u /* 198.18.0.0 */
#define BR_LINK_CAPTURE_PREFIX 15

/*
 * Ready the calling thread's network namespace for transparent capture
 * (postern-bridge(8) "TRANSPARENT CAPTURE"): a "local" route for
 * 198.18.0.0/15 on lo (table local, replacing any), so that every address
 * of the range is the namespace's own, and net.ipv4.ip_unprivileged_port_start
 * 0, so that a bridge without capabilities can bind the stub's port 53 and
 * each name's ports.  Needs CAP_NET_ADMIN over the namespace.  Returns 0,
 * -EPERM, -ENODEV (no lo), -ENOMEM, -EIO, or the errno of the sysctl's
 * write.  Keeps no state.
 */
int br_link_capture(void);

/*
 * The route of br_link_capture() alone, for a namespace whose low ports
 * must stay as they are (postern-sidecar --capture in a pod, whose capture
 * process keeps CAP_NET_BIND_SERVICE instead).  Same return values, but
 * none from the sysctl.
 */
int br_link_capture_route(void);

#endif
