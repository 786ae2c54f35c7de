/*
 * base/super.h: the duties of a process that supervises its children (PID
 * 1 of a container or of a sandbox in particular, bubblewrap's do_init):
 * signals taken synchronously through a signalfd, every child that dies,
 * ours or re-parented to us, reaped; what is left signalled; the child's
 * wait status passed on as an exit code (propagate_exit_status); and the
 * one privilege drop to an unprivileged uid (drop_privs).  libc only: the
 * bridge links it.
 */
#ifndef POSTERN_BASE_SUPER_H
#define POSTERN_BASE_SUPER_H

#include <signal.h>
#include <stddef.h>
#include <sys/signalfd.h>
#include <sys/types.h>

/* bs_sigfd_open() flags. */
#define BS_SIG_CATCH 0x1 /* install a no-op handler (see bs_sigfd_open) */

/*
 * Block the N signals SIGS and return a close-on-exec, non-blocking
 * signalfd that receives them; call it before forking so that no signal is
 * lost between fork() and the first read.  With BS_SIG_CATCH each of them
 * but SIGCHLD also gets a no-op handler: the kernel drops signals sent to
 * the init of a PID namespace while their disposition is SIG_DFL.
 * Without it dispositions stay as inherited (for a CMD to inherit in turn).
 * Returns the descriptor or a negative errno.
 */
int bs_sigfd_open(const int *sigs, size_t n, unsigned flags);

/*
 * Read one signal from FD (a signalfd) into *INFO.  Returns 1 when a
 * signal was read, 0 when none is pending, or a negative errno.
 */
int bs_sigfd_read(int fd, struct signalfd_siginfo *info);

/*
 * In a freshly forked child: restore the default disposition of the N
 * signals SIGS and unblock every signal, so that an exec'd program (or the
 * proxy engine, which installs its own handlers) starts clean.
 */
void bs_child_signals_reset(const int *sigs, size_t n);

/*
 * In a freshly forked child: ask the kernel for SIG when the parent dies.
 * Returns 0; -ESRCH when the parent (PARENT, its pid before the fork) is
 * already gone, so that nobody would ever send SIG and the child must go
 * now; or a negative errno from prctl(2).
 */
int bs_child_die_with_parent(pid_t parent, int sig);

/*
 * Reap one exited child without blocking.  Returns its pid and stores its
 * wait status in *STATUS (STATUS may be NULL), 0 when no child has
 * exited, or a negative errno (-ECHILD when there are no children at all).
 */
pid_t bs_reap_one(int *status);

/*
 * Send SIG to every child of the calling process (found by scanning /proc)
 * except EXCEPT; SIG 0 only counts them.  For a subreaper
 * (PR_SET_CHILD_SUBREAPER) or PID 1 this includes the orphans handed to
 * it.  Returns how many were signalled, or a negative errno when /proc
 * cannot be read.
 */
int bs_signal_children(int sig, pid_t except);

/*
 * The shell convention for a wait status: the exit code, or 128 + the
 * signal number for a child killed by a signal; 1 for anything else.
 */
int bs_exit_code(int status);

/*
 * Become UID and GID for good, with no supplementary group: from root
 * this also clears every capability set.  Returns 0 or a negative errno
 * (the process may then be half-changed and must not go on as if dropped).
 */
int bs_become(uid_t uid, gid_t gid);

/*
 * A daemon's drop, for good: from root bs_become(UID, GID) (any other
 * effective uid must already be UID: -EPERM), then no_new_privs, then a
 * check that no capability is left (for UID != 0: -EPERM).  Returns 0, or
 * a negative errno with *WHAT set to the step that failed ("setgroups",
 * "setresgid", "setresuid", "not running as root", "PR_SET_NO_NEW_PRIVS",
 * "capget", "capabilities remain"), for the caller's message.
 */
int bs_drop_privileges(uid_t uid, gid_t gid, const char **what);

#endif
