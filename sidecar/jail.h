/*
 * sidecar/jail.h: the mount namespace `run` gives its command.  What the
 * command must not reach is decided outside, before its namespaces exist
 * (the host's bound UNIX sockets are listed per network namespace); the
 * layout is then built by the command child, in its own mount namespace,
 * while it still holds CAP_SYS_ADMIN over that namespace:
 *
 *   - nothing it mounts propagates back to the host (everything private);
 *   - fresh, empty tmpfs over /tmp, /var/tmp, /run and /dev/shm, the usual
 *     homes of sockets (an ssh-agent, tmux, docker.sock, D-Bus, journald);
 *   - every other pathname socket bound on the host when the command
 *     starts is covered with a bind of /dev/null (connect: ECONNREFUSED),
 *     and each directory given to sc_jail_cover() with an empty tmpfs;
 *   - each directory the user named (--bind DIR) is bound in read-write
 *     at its path, before the sockets are covered, so those in it are too;
 *   - each socket the user named (--socket PATH) is bound back in at its
 *     path, the directory of the proxy's socket at SC_JAIL_ENGINE_DIR
 *     (the socket is SC_JAIL_SOCK) and the bridge binary at SC_JAIL_BRIDGE;
 *   - a /proc of the command's own PID namespace over /proc, and an mqueue
 *     of its own IPC namespace over /dev/mqueue where there is one.
 */
#ifndef POSTERN_SIDECAR_JAIL_H
#define POSTERN_SIDECAR_JAIL_H

#include <stddef.h>

/* Where the command finds the proxy's socket and the bridge binary. */
#define SC_JAIL_DIR "/run/postern"
/* The directory the engine's socket is in, not the socket file: an engine
 * started after a crash binds a new socket there, which a bind of the old
 * file would not show. */
#define SC_JAIL_ENGINE_DIR SC_JAIL_DIR "/engine"
#define SC_JAIL_SOCK SC_JAIL_ENGINE_DIR "/proxy.sock"
#define SC_JAIL_BRIDGE SC_JAIL_DIR "/postern-bridge"
/* CMD's HOME when its uid has none of its own (run, started by root): made
 * on the jail's fresh /run, so it goes with the namespace. */
#define SC_JAIL_HOME SC_JAIL_DIR "/home"

struct sc_jail;

/* An empty plan; NULL with errno set when out of memory. */
struct sc_jail *sc_jail_new(void);

/* Free JAIL and everything it holds; NULL is a no-op. */
void sc_jail_free(struct sc_jail *jail);

/*
 * Let the command reach the socket PATH (--socket): it must name an
 * existing UNIX socket (symbolic links are resolved now, and the socket is
 * bound in at its real path).  Returns 0, -ENOTSOCK when PATH is something
 * else, or another negative errno (-ENAMETOOLONG, -ENOENT, -ENOMEM).
 */
int sc_jail_keep(struct sc_jail *jail, const char *path);

/*
 * Show the host directory DIR to the command at its path, read-write, also
 * where a fresh tmpfs would hide it (--bind); host sockets in it are still
 * covered unless kept.  Symbolic links are resolved now.  Returns 0,
 * -ENOTDIR, -EPERM for /, or a path under /run, /proc or /dev (the jail's
 * own), or another negative errno.
 */
int sc_jail_bind(struct sc_jail *jail, const char *dir);

/*
 * Hide the host directory DIR from the command (run --ask's admin socket
 * directory): when DIR is still there in the command's view (it is not
 * under a fresh tmpfs already), an empty read-only tmpfs is mounted over
 * it, so that a socket made in it later (by an engine started after a
 * crash) is hidden too.  DIR is copied; 0 or -ENOMEM.
 */
int sc_jail_cover(struct sc_jail *jail, const char *dir);

/*
 * Record every pathname socket bound in the caller's network namespace
 * (/proc/self/net/unix) and, where it can be read, in PID 1's (the
 * sidecar may itself run in a namespace of its own, under `ip netns
 * exec`).  Call it before the command's network namespace is made.
 * Returns 0 or a negative errno (the caller's own table could not be read).
 */
int sc_jail_scan(struct sc_jail *jail);

/*
 * In the command child, in a mount namespace of its own, a PID namespace
 * whose PID 1 it is and an IPC namespace, with CAP_SYS_ADMIN over all
 * three: build the layout above,
 * binding ENGINE_DIR (the host directory the engine's socket proxy.sock is
 * in) and BRIDGE (the bridge binary) in, then re-enter the working directory by its path so
 * that it is looked up in the new layout (else "/", with a warning).
 * Logs what failed; returns 0 or a negative errno.
 */
int sc_jail_build(const struct sc_jail *jail, const char *engine_dir, const char *bridge);

#endif
