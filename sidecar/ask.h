/*
 * sidecar/ask.h: answering the questions of `postern-sidecar run --ask`.
 *
 * Every ask-mode run gives its proxy engine an admin socket of its own,
 * BASE/run-PID/admin.sock, where BASE is /run/postern-ask for root and
 * $XDG_RUNTIME_DIR/postern (else /tmp/postern-UID) for anyone else, so
 * that `postern-sidecar ask`, started by the same user in another
 * terminal, finds it.  The asker (the ask command, or the prompt run
 * itself shows on its controlling terminal) polls GET /pending there and
 * answers through POST /decide (proxy/policy/ask.h).
 */
#ifndef POSTERN_SIDECAR_ASK_H
#define POSTERN_SIDECAR_ASK_H

#include <stddef.h>
#include <sys/types.h>

/* A run's directory and admin socket. */
struct sc_ask_dir {
	char dir[128];
	char sock[128];
	char listen[136];  /* "unix:" SOCK, the engine's admin = */
};

/*
 * Create BASE (as above; refused unless it is a directory of the caller's
 * euid, or root's, that nobody else may write) and in it run-PID, 0700,
 * given to OWNER when OWNER is not (uid_t)-1 (the engine's uid, which
 * binds the socket there; root enters it anyway).  A run-PID left by a
 * dead run of the same PID is replaced.  Fills D.  Returns 0 or a
 * negative errno, after saying why on stderr.
 */
int sc_ask_dir_make(struct sc_ask_dir *d, pid_t pid, uid_t owner);

/* Remove D's socket file (when the engine could not) and directory; a D
 * never made is a no-op. */
void sc_ask_dir_remove(struct sc_ask_dir *d);

/* How many other ask-mode runs of this user are going (their socket
 * answers), so that run can tell which PID to give `ask`. */
size_t sc_ask_count_runs(pid_t except);

struct sc_ask_opts {
	pid_t pid;   /* --pid; 0: the one run going */
	int list;    /* --list: print the pending questions once */
};

/*
 * `postern-sidecar ask`: find the run (O->pid, or the only one), then
 * print each new question on stdout and read its answer from stdin (a
 * terminal, or one answer per line from a script), until the run ends.
 * Returns the exit status: 0, 1 when no run could be found or its socket
 * failed, 2 for a bad --pid.
 */
int sc_ask_main(const struct sc_ask_opts *o);

/*
 * For run: fork a child that asks each question on the terminal TTY (an
 * open /dev/tty) and reads the answers there, through the admin socket
 * SOCK, until run (its parent) is gone or sends it SIGTERM.  The child
 * never blocks run, whose loop goes on in the parent.  Returns the pid,
 * or -1 with errno set.
 */
pid_t sc_ask_prompt_start(const char *sock, int tty);

#endif
