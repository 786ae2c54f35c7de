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

/* The old names of the shared functions, for sidecar/run.c, which another
 * branch is changing; they go once it calls the bs_ names. */
#define sc_sigfd_read bs_sigfd_read
#define sc_reap_one bs_reap_one
#define sc_signal_children bs_signal_children
#define sc_exit_code bs_exit_code

#endif
