/*
 * sidecar/pid1.h: the duties of a process that supervises its children,
 * PID 1 of a container in particular: signals are taken synchronously
 * through a signalfd, forwarded only to the children we started, and every
 * child that dies, ours or re-parented to us, is reaped so that no zombie
 * accumulates in the container's PID namespace.
 */
#ifndef POSTERN_SIDECAR_PID1_H
#define POSTERN_SIDECAR_PID1_H

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/types.h>

/*
 * Block SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGCHLD and return a
 * close-on-exec, non-blocking signalfd that receives them; call it before
 * forking so that no signal is lost between fork() and the first read.
 * Returns the descriptor or a negative errno.
 */
int sc_sigfd_open(void);

/*
 * Read one signal from FD (from sc_sigfd_open()) into *INFO.  Returns 1 when
 * a signal was read, 0 when none is pending, or a negative errno.
 */
int sc_sigfd_read(int fd, struct signalfd_siginfo *info);

/*
 * In a freshly forked child: unblock every signal and restore the default
 * disposition of those sc_sigfd_open() took, so that an exec'd program (or
 * the proxy engine, which installs its own handlers) starts clean.
 */
void sc_child_signals_reset(void);

/*
 * In a freshly forked child: ask the kernel for SIG when the parent dies, and
 * exit at once if the parent (PARENT, its pid before the fork) is already
 * gone.  Keeps a killed sidecar from leaving a proxy or a command behind.
 */
void sc_child_die_with_parent(pid_t parent, int sig);

/*
 * Reap one exited child without blocking.  Returns its pid and stores its
 * wait status in *STATUS, 0 when no child has exited, or a negative errno
 * (-ECHILD when there are no children at all).
 */
pid_t sc_reap_one(int *status);

/*
 * Send SIG to every child of the calling process (found by scanning /proc)
 * except EXCEPT.  For a subreaper (PR_SET_CHILD_SUBREAPER) or PID 1 this
 * includes the orphans handed to it.  Returns how many were signalled, or a
 * negative errno when /proc cannot be read.
 */
int sc_signal_children(int sig, pid_t except);

/*
 * The shell convention for a wait status: the exit code, or 128 + the
 * signal number for a child killed by a signal.
 */
int sc_exit_code(int status);

#endif
