/*
 * sidecar/pid1.c: signals and children, as PID 1 or as any supervisor.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sidecar/pid1.h"

static const int sc_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD };

int
sc_sigfd_open(void)
{
	sigset_t set;
	size_t i;
	int fd;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sc_signals) / sizeof(sc_signals[0]); i++)
		sigaddset(&set, sc_signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	return fd;
}

int
sc_sigfd_read(int fd, struct signalfd_siginfo *info)
{
	ssize_t n;

	do
		n = read(fd, info, sizeof(*info));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (n != (ssize_t)sizeof(*info))
		return -EIO;
	return 1;
}

void
sc_child_signals_reset(void)
{
	struct sigaction sa;
	sigset_t set;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sc_signals) / sizeof(sc_signals[0]); i++)
		sigaction(sc_signals[i], &sa, NULL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
}

void
sc_child_die_with_parent(pid_t parent, int sig)
{
	if (prctl(PR_SET_PDEATHSIG, sig) < 0)
		_exit(127);
	/* The parent may have died between fork() and prctl(): then nobody
	 * would ever send SIG, so go now. */
	if (getppid() != parent)
		_exit(127);
}

pid_t
sc_reap_one(int *status)
{
	pid_t pid;

	do
		pid = waitpid(-1, status, WNOHANG);
	while (pid < 0 && errno == EINTR);
	if (pid < 0)
		return -errno;
	return pid;
}

int
sc_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
