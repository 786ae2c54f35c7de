/*
 * bridge/dnsstub.h: the sandbox's resolver for transparent capture (issue
 * 16, postern-bridge(8) "TRANSPARENT CAPTURE").
 *
 * A DNS stub on 127.0.0.1:53 (UDP and TCP) that never forwards a query and
 * has no upstream: for a name the session would allow on some port (the
 * proxy's name check, proxy/flow/bridgereq.h) it answers an A record from
 * 198.18.0.0/15 (RFC 2544's benchmark range, never a real destination),
 * the same address for the bridge's whole life, and the bridge listens on
 * that address on each port the rules allow for the name, relaying every
 * connection there as "CONNECT NAME:PORT" (br_relay_forward()).  A name
 * never allowed gets NXDOMAIN, and the proxy audits the refusal; a query
 * with EDNS also gets why, as an Extended DNS Error (RFC 8914, Blocked)
 * whose text is the refusal's reason and what would allow it.  AAAA and
 * every other type get an empty NOERROR answer: there is no IPv6 range, so
 * clients fall back to the A record.
 *
 * The wire format is bridge/dnswire.h (pure, fuzzed); this is the server
 * in the relay's loop.
 */
#ifndef POSTERN_BRIDGE_DNSSTUB_H
#define POSTERN_BRIDGE_DNSSTUB_H

#include <stddef.h>
#include <stdint.h>

#include "bridge/dnswire.h"

struct br_relay;

struct br_dnsstub;

/*
 * Start the stub on 127.0.0.1:53, UDP and TCP, in R's loop (br_relay_watch
 * takes the sockets), asking the proxy at SOCK (copied) for each new name
 * and listening for its connections in R.  Needs port 53 to be bindable
 * (CAP_NET_BIND_SERVICE, or net.ipv4.ip_unprivileged_port_start 0 in the
 * namespace, see br_link_capture()) and 198.18.0.0/15 to be local.
 * Returns the stub (free it with br_dnsstub_free(), after R's loop has
 * ended and before R is freed), or NULL with errno set: EADDRNOTAVAIL
 * when the synthetic range is not local, what bind(2) failed with, ENOMEM.
 */
struct br_dnsstub *br_dnsstub_new(struct br_relay *r, const char *sock);

/* Free D (the sockets belong to the relay).  NULL: no-op. */
void br_dnsstub_free(struct br_dnsstub *d);

/*
 * Answer one query MSG (LEN bytes) into OUT (CAP >= BR_DNS_MSG_MAX),
 * asking the proxy about a name seen for the first time (blocking, at
 * most a second: the stub serves one query at a time).  Returns the
 * response's length, or 0 when the message gets no answer.
 */
size_t br_dnsstub_answer(struct br_dnsstub *d, const uint8_t *msg, size_t len, uint8_t *out,
    size_t cap);

#endif
