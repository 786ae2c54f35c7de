/*
 * proxy/core/conncount.h: what each session, and each peer uid within a session,
 * holds of [proxy] max_connections, so that one sandbox holding idle
 * tunnels cannot leave every other session without an answer.
 */
#ifndef POSTERN_PROXY_CONNCOUNT_H
#define POSTERN_PROXY_CONNCOUNT_H

#include <sys/queue.h>

struct px_conncount;
LIST_HEAD(px_conncount_list, px_conncount);

/*
 * Count one more connection of session SESSION in LIST (an empty list is
 * zero-initialised), and of peer UID within it when UID >= 0 (a UNIX
 * listener's SO_PEERCRED), unless the session already holds MAX or the uid
 * MAX_UID.  Counts are by name, not by snapshot, so a reload that lowers a
 * share keeps what is open and refuses only what comes next.  Returns 0
 * with *SESS (and *USER, NULL when UID < 0) to hand back to
 * px_conncount_put(), or -EDQUOT (the session is full) or -EUSERS (the uid is
 * full) with *HELD what it holds now, or -ENOMEM.
 */
int px_conncount_take(struct px_conncount_list *list, const char *session, long uid, unsigned max,
    unsigned max_uid, struct px_conncount **sess, struct px_conncount **user, unsigned *held);

/* Give back one connection of SH (from px_conncount_take()); NULL is a no-op. */
void px_conncount_put(struct px_conncount *sh);

#endif
