/*
 * proxy/policy/authfail.h: failed credentials on auth=token listeners, by
 * peer address, so that guessing tokens from one place is slow.  An
 * address with PX_AUTHFAIL_LIMIT failures within PX_AUTHFAIL_WINDOW_S
 * seconds is blocked for PX_AUTHFAIL_BLOCK_S seconds: every attempt from
 * it is then refused (429) before any token is compared, the right one
 * too.  A right token outside a block forgets the address's failures.
 *
 * An IPv4 address is counted alone, an IPv6 address by its /64 (one host
 * may hold all of one).  The table is bounded (PX_AUTHFAIL_SLOTS, set
 * associative by a keyed hash): a new address takes the slot, in its set,
 * least recently used, so that a flood from many addresses may evict an
 * older one's count but never grows the table.  One table per process,
 * shared by the workers (its own lock).
 */
#ifndef POSTERN_PROXY_AUTHFAIL_H
#define POSTERN_PROXY_AUTHFAIL_H

#include <sys/socket.h>
#include <time.h>

#define PX_AUTHFAIL_LIMIT 10
#define PX_AUTHFAIL_WINDOW_S 60
#define PX_AUTHFAIL_BLOCK_S 60
#define PX_AUTHFAIL_SLOTS 4096

/* Seconds left of SA's block at NOW (monotonic seconds), 0 when it is
 * not blocked. */
unsigned px_authfail_blocked(const struct sockaddr *sa, time_t now);
/* SA presented a wrong credential at NOW: counted; 1 when this failure
 * starts a block, else 0. */
int px_authfail_failed(const struct sockaddr *sa, time_t now);
/* SA presented a right one (and is not blocked): its failures forgotten. */
void px_authfail_passed(const struct sockaddr *sa);
/* Forget every address (unit tests). */
void px_authfail_reset(void);

#endif
