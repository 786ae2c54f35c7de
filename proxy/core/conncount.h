/*
 * proxy/core/conncount.h: what each session, and each peer uid within a session,
 * holds of [proxy] max_connections, so that one sandbox holding idle
 * tunnels cannot leave every other session without an answer.
 */
#ifndef POSTERN_PROXY_SHARE_H
#define POSTERN_PROXY_SHARE_H

#include <sys/queue.h>

struct px_share;
LIST_HEAD(px_share_list, px_share);

/*
 * Count one more connection of session SESSION in LIST (an empty list is
 * zero-initialised), and of peer UID within it when UID >= 0 (a UNIX
 * listener's SO_PEERCRED), unless the session already holds MAX or the uid
 * MAX_UID.  Counts are by name, not by snapshot, so a reload that lowers a
 * share keeps what is open and refuses only what comes next.  Returns 0
 * with *SESS (and *USER, NULL when UID < 0) to hand back to
 * px_share_put(), or -EDQUOT (the session is full) or -EUSERS (the uid is
 * full) with *HELD what it holds now, or -ENOMEM.
 */
int px_share_take(struct px_share_list *list, const char *session, long uid, unsigned max,
    unsigned max_uid, struct px_share **sess, struct px_share **user, unsigned *held);

/* Give back one connection of SH (from px_share_take()); NULL is a no-op. */
void px_share_put(struct px_share *sh);

#endif
