/*
 * sidecar/link.h: bring the loopback interface up over netlink.
 *
 * A fresh network namespace starts with "lo" down, and a scratch image has
 * no iproute2.  The bridge owns the same helper for its side (DESIGN.md);
 * this small copy serves the sidecar until the two are shared.
 */
#ifndef POSTERN_SIDECAR_LINK_H
#define POSTERN_SIDECAR_LINK_H

/*
 * Set IFF_UP on "lo" in the caller's network namespace with libnl-route-3
 * (rtnl_link_change), doing nothing when it is already up.  Needs
 * CAP_NET_ADMIN over the namespace.  Returns 0 or a negative errno after
 * logging what failed.
 */
int sc_link_up_lo(void);

#endif
