/*
 * bridge/priv.h: what postern-bridge gives up before it runs CMD, and the
 * identity it refuses to run CMD as.
 *
 * The bridge may start with capabilities (CAP_NET_ADMIN to bring lo up,
 * often all of them as root of a fresh user namespace); CMD gets none, in
 * any of the five sets, and no_new_privs, so that nothing it executes can
 * give them back.  And CMD must not be uid or gid 0 of the initial user
 * namespace: without a single capability, that identity still owns every
 * root-owned file and socket on the host.
 */
#ifndef POSTERN_BRIDGE_PRIV_H
#define POSTERN_BRIDGE_PRIV_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Give up every capability of the calling thread: each one up to the
 * kernel's last (/proc/sys/kernel/cap_last_cap, else probed) is dropped from
 * the bounding set (PR_CAPBSET_DROP, which needs CAP_SETPCAP), the ambient
 * set is cleared, the inheritable, permitted and effective sets are emptied
 * with capset(2), and no_new_privs is set.  Then it checks: the three capset
 * sets and the ambient set must read back empty and no_new_privs set.  A
 * bounding set that cannot be emptied because the thread lacks CAP_SETPCAP
 * is no error: with no_new_privs and empty permitted, inheritable and
 * ambient sets, no execve(2) can raise a capability out of it (file
 * capabilities and set-user-ID bits are not honoured).  *BSET_LEFT, when
 * not NULL, is set to the number of capabilities left in the bounding set.
 * Idempotent.  Returns 0, or a negative errno (-EPERM when a set did not
 * read back empty).
 */
int br_priv_drop(int *bset_left);

/*
 * The first step of br_priv_drop() on its own, for a caller that still
 * needs its other capabilities for a while (postern-sidecar run's child,
 * which changes uid after it): drop every capability from the bounding set
 * and clear the ambient set.  *LEFT, when not NULL, is set to the number of
 * capabilities the bounding set keeps because the thread lacks
 * CAP_SETPCAP.  Returns 0 or a negative errno.
 */
int br_priv_drop_bounding(int *left);

/*
 * Whether this process's identity is, or may be, root outside every user
 * namespace: its real, effective or saved uid is kernel uid 0, its real,
 * effective or saved gid is kernel gid 0, or a supplementary group is
 * kernel gid 0.  Decided from a file the kernel always owns as uid and gid
 * 0 of the initial user namespace (/proc/sys/kernel/overflowuid, or
 * vm/overcommit_memory where procfs lacks it, as gVisor's does; shown in
 * this namespace through its maps, or as the overflow id when unmapped),
 * falling back to /proc/self/uid_map and gid_map when that is ambiguous.
 * Conservative: when it cannot tell (no procfs at /proc, an unmapped own
 * id), the answer is true.  Returns true or false; when true and WHY is not
 * NULL, writes a one-line reason (no trailing newline) into WHY (LEN bytes).
 */
bool br_priv_kernel_root(char *why, size_t len);

/*
 * When the calling process is uid 0 of a user namespace that maps it to
 * another uid outside (bwrap --uid 0, unshare -r), move it into a user
 * namespace of its own (*MOVED), with every capability there, so that
 * br_priv_drop() can then empty the bounding set too.  In it the process
 * is the uid and gid it has outside, mapped onto uid 0 and its gid of the
 * namespace it left, with setgroups(2) denied (*MAPPED); mapping onto uid
 * 0 needs CAP_SETFCAP in the namespace left, and without it the process
 * stays unmapped (the overflow uid and gid), *MAPPED false.  Either way it
 * is no longer the root of any namespace.  Nothing to do (0, *MOVED false)
 * for a non-zero uid, or when uid 0 or the gid maps onto 0 outside.  Returns 0,
 * or a negative errno: with *MOVED false from unshare(2) (nothing changed),
 * with *MOVED true from writing the maps (the process must not go on).
 */
int br_priv_unroot(bool *moved, bool *mapped);

/*
 * Map ID through the text of a /proc/PID/uid_map or gid_map (lines of three
 * decimal numbers: first id inside, first id outside, count).  Returns 0 and
 * stores the outside id in *OUT, -ENOENT when no line covers ID, -EINVAL
 * when the text is not such a map.
 */
int br_priv_map_outside(const char *map, unsigned long id, unsigned long *out);

/*
 * The decision behind br_priv_kernel_root() for one id, without I/O.  ID is
 * the process's id as this namespace shows it; ROOT is how the namespace
 * shows kernel id 0 (the owner of a sysctl file); OVERFLOW is the overflow
 * id (shown for every unmapped id); MAP is the namespace's uid_map or
 * gid_map text, or NULL when unreadable.  True when ID is, or may be,
 * kernel id 0.
 */
bool br_priv_is_root(unsigned long id, unsigned long root,
    unsigned long overflow, const char *map);

#endif
