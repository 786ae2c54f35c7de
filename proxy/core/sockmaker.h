/*
 * proxy/core/sockmaker.h: the socket maker, a small process postern-proxy
 * starts before its privilege drop (with [proxy] user and socket_dir, as
 * root) so that after the drop a reload can still make UNIX sockets owned
 * by other uids.  It is postern-proxy's own binary (/proc/self/exe)
 * executed again in an internal mode, "postern-proxy --socket-maker",
 * with an empty environment, so that it holds no copy of the proxy's
 * memory and so none of its secrets.  It keeps uid 0 with only CAP_CHOWN,
 * CAP_DAC_OVERRIDE and CAP_FOWNER (every other capability out of its
 * bounding set too), sets no_new_privs, holds no descriptor but its end of
 * one socketpair and one on socket_dir, and serves base/sockmsg.h
 * requests, one at a time, for paths below socket_dir only, never through
 * a symbolic link.  It dies with the proxy (PR_SET_PDEATHSIG, and end of
 * file on the pair) and runs nothing else.
 *
 * One maker per process; the calls below are for any thread (one request
 * at a time, under a lock) and block for at most PX_SOCKMAKER_TIMEOUT_MS.
 */
#ifndef POSTERN_PROXY_CORE_SOCKMAKER_H
#define POSTERN_PROXY_CORE_SOCKMAKER_H

#include <sys/types.h>

#define PX_SOCKMAKER_TIMEOUT_MS 5000

/* postern-proxy's first argument that selects the maker's mode. */
#define PX_SOCKMAKER_ARG "--socket-maker"

/*
 * The maker's mode, for postern-proxy's main() before anything else:
 * ARGV is "postern-proxy --socket-maker PARENT UID GID ROOT", with the
 * pair at descriptor 3 and ROOT at 4, as px_sockmaker_start() gives them.
 * It serves only that pair, while PARENT is its parent.  Returns 2 (after
 * a line on standard error) when the descriptors are not such; otherwise
 * never returns.
 */
int px_sockmaker_main(int argc, char **argv);

/*
 * Start the maker for ROOT (a normal absolute path, made 0755 if missing),
 * giving the socket directories it makes to UID:GID (the proxy's user):
 * fork, then execute /proc/self/exe, which must be postern-proxy.  Without
 * /proc there is no maker: never a forked copy of the proxy.  Call it as
 * root, before the drop, while the process has one thread.  Returns 0, or
 * a negative errno after saying why.
 */
int px_sockmaker_start(const char *root, uid_t uid, gid_t gid);

/* The maker's pid, or 0 when there is none. */
pid_t px_sockmaker_pid(void);

/* Nonzero when a maker runs and PATH lies below its socket_dir; that
 * socket_dir, or NULL when no maker runs. */
int px_sockmaker_covers(const char *path);
const char *px_sockmaker_root(void);

/*
 * Ask the maker for a listening socket at PATH owned by OWNER:GROUP with
 * MODE.  Returns the descriptor (non-blocking, close-on-exec) and sets
 * *MADE_DIR, *UID, *GID, *MODE to what the file has; or a negative errno
 * with one sentence in WHY (SIZE).
 */
int px_sockmaker_bind(const char *path, uid_t owner, gid_t group, mode_t mode, int *made_dir,
    uid_t *uid, gid_t *gid, mode_t *fmode, char *why, size_t size);

/* Give the socket PATH OWNER and GROUP ((uid_t)-1, (gid_t)-1: unchanged)
 * and MODE; the same results as px_sockmaker_bind(), without a descriptor:
 * 0 or a negative errno. */
int px_sockmaker_perms(const char *path, uid_t owner, gid_t group, mode_t mode, uid_t *uid,
    gid_t *gid, mode_t *fmode, char *why, size_t size);

/* Remove the socket file PATH (only if it is a socket).  0 or a negative
 * errno, with WHY. */
int px_sockmaker_unlink(const char *path, char *why, size_t size);

/* End the maker (end of file on its pair) and reap it.  Idempotent. */
void px_sockmaker_stop(void);

#endif
