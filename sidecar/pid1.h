/*
 * sidecar/pid1.h: the sidecar's policy over the shared supervision module
 * (base/super.h): which signals it takes as PID 1 of a container, and
 * that a child whose parent is gone exits 127.
 */
#ifndef POSTERN_SIDECAR_PID1_H
#define POSTERN_SIDECAR_PID1_H

#include <sys/types.h>

#include "base/super.h"

/*
 * Block SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGCHLD, with a no-op handler
 * for all but SIGCHLD (BS_SIG_CATCH), and return a signalfd for them, as
 * bs_sigfd_open().
 */
int sc_sigfd_open(void);

/* In a freshly forked child: bs_child_signals_reset() for those signals. */
void sc_child_signals_reset(void);

/*
 * In a freshly forked child: SIG when the parent dies; _exit(127) at once
 * if the parent (PARENT, its pid before the fork) is already gone or the
 * kernel refuses.  Keeps a killed sidecar from leaving a proxy or a
 * command behind.
 */
void sc_child_die_with_parent(pid_t parent, int sig);

#endif
