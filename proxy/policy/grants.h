/*
 * proxy/policy/grants.h: runtime grants, what an admin's answer to a
 * question of proxy/policy/ask leaves behind for a whole session: "allow HOST:PORT
 * for session NAME" or "deny it", for the session's life or until a time.
 * They are rules added at run time, consulted where the allowlist refused
 * (proxy/flow/decide.c), in every mode: an allow grant allows as an allow rule
 * without "private" would, a deny grant refuses (denied_by_admin).
 *
 * The set belongs to the engine (made at start, freed at the end) and is
 * reached through the server (px_server_grants()): it outlives every
 * snapshot, so a reload keeps it, and a restart loses it unless the admin
 * wrote it to grants_file.  Keys are the session's NAME, the host in the
 * normal form cf_host_format() writes, and the port, so that a grant
 * speaks of the same session and host across snapshots.  Touched on the
 * proxy's loop thread only.
 */
#ifndef POSTERN_PROXY_GRANTS_H
#define POSTERN_PROXY_GRANTS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "conf/host.h"

enum px_grant_kind {
	PX_GRANT_ALLOW = 1,
	PX_GRANT_DENY = 2,
};

/* One grant; read-only to callers. */
struct px_grant {
	char session[72];
	char host[CF_HOST_TEXT_MAX];
	uint16_t port;
	enum px_grant_kind kind;
	long uid;          /* who answered: the admin client's uid, -1 unknown */
	time_t when;       /* wall clock */
	time_t until;      /* wall clock; 0: as long as the process runs */
	int from_file;     /* read from grants_file (px_grants_set_file()) */
};

struct px_grants;

/* An empty set; NULL (errno) when out of memory.  px_grants_free(NULL) is
 * a no-op. */
struct px_grants *px_grants_new(void);
void px_grants_free(struct px_grants *g);

/*
 * Grant KIND for SESSION, HOST (normal form), PORT, by UID at WHEN, until
 * UNTIL (0: no end).  A grant for the same key is replaced: the last
 * answer is the one in force.  Returns 0, or -ENOMEM, -EINVAL (a name too
 * long for a key).
 */
int px_grants_add(struct px_grants *g, const char *session, const char *host, uint16_t port,
    enum px_grant_kind kind, long uid, time_t when, time_t until);

/*
 * The grant in force for SESSION, HOST (normal form) and PORT at NOW, or
 * NULL; an expired grant is not found (px_grants_expire() drops it).  The
 * pointer is to a copy of the calling thread's own, valid until its next
 * px_grants_find().
 */
const struct px_grant *px_grants_find(struct px_grants *g, const char *session, const char *host,
    uint16_t port, time_t now);

/* Drop the grants expired at NOW, then: how many are left, and the I-th
 * (in the order they were made). */
size_t px_grants_expire(struct px_grants *g, time_t now);
const struct px_grant *px_grants_at(const struct px_grants *g, size_t i);

struct cf_grant_entry;

/*
 * The grants of grants_file, read at start or at a reload (V, N entries,
 * conf/grantfile.h): the grants read from the file before are dropped, and
 * each of V is added as a grant with no end, by uid -1 ("the file"), made
 * at NOW, replacing an admin's grant for the same key.  Returns 0 or
 * -ENOMEM (the grants read so far stay).
 */
int px_grants_set_file(struct px_grants *g, const struct cf_grant_entry *v, size_t n, time_t now);

/*
 * Write the grants with no end to PATH, for grants_file: atomically (a
 * temporary file in PATH's directory, mode 0600, renamed over PATH), one
 * [session NAME] per session, each grant a line with a comment saying who
 * made it and when.  A grant with an end is not written (read back, it
 * would have none): *SKIPPED counts them, each a comment.  *SAVED counts
 * the grants written.  Returns 0, or -errno with one sentence in WHY.
 */
int px_grants_save(struct px_grants *g, const char *path, time_t now, size_t *saved,
    size_t *skipped, char *why, size_t whysize);

/* "allow" or "deny". */
const char *px_grant_kind_word(enum px_grant_kind k);

#endif
