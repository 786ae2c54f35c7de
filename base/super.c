/*
 * base/super.c: signals, children and privileges, as PID 1 or as any
 * supervisor (see super.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/super.h"

static void
bs_signal_noop(int sig)
{
	(void)sig;
}

int
bs_sigfd_open(const int *sigs, size_t n, unsigned flags)
{
	struct sigaction sa;
	sigset_t set;
	size_t i;
	int fd;

	/* A handler, though the signals stay blocked and are read from the
	 * signalfd: the kernel drops signals sent to the init of a PID
	 * namespace when their disposition is SIG_DFL, and that is us in a
	 * container. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bs_signal_noop;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	for (i = 0; i < n; i++) {
		sigaddset(&set, sigs[i]);
		if ((flags & BS_SIG_CATCH) && sigs[i] != SIGCHLD)
			sigaction(sigs[i], &sa, NULL);
	}
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	return fd;
}

int
bs_sigfd_read(int fd, struct signalfd_siginfo *info)
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
bs_child_signals_reset(const int *sigs, size_t n)
{
	struct sigaction sa;
	sigset_t set;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < n; i++)
		sigaction(sigs[i], &sa, NULL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
}

int
bs_child_die_with_parent(pid_t parent, int sig)
{
	if (prctl(PR_SET_PDEATHSIG, sig) < 0)
		return -errno;
	/* The parent may have died between fork() and prctl(): then nobody
	 * would ever send SIG. */
	if (getppid() != parent)
		return -ESRCH;
	return 0;
}

pid_t
bs_reap_one(int *status)
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
bs_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int
bs_become(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		return -errno;
	return 0;
}

int
bs_drop_privileges(uid_t uid, gid_t gid, const char **what)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];

	if (geteuid() == 0) {
		/* The three steps one by one, so that the message names the
		 * one that failed. */
		*what = "setgroups";
		if (setgroups(0, NULL) < 0)
			return -errno;
		*what = "setresgid";
		if (setresgid(gid, gid, gid) < 0)
			return -errno;
		*what = "setresuid";
		if (setresuid(uid, uid, uid) < 0)
			return -errno;
	} else if (geteuid() != uid) {
		*what = "not running as root";
		return -EPERM;
	}
	*what = "PR_SET_NO_NEW_PRIVS";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	*what = "capget";
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	*what = "capabilities remain";
	if (uid != 0 && (data[0].effective || data[0].permitted || data[1].effective ||
	    data[1].permitted))
		return -EPERM;
	*what = NULL;
	return 0;
}

/* Parse a decimal pid of LEN bytes at S; -1 when it is not one. */
static pid_t
parse_pid(const char *s, size_t len)
{
	uint64_t v;

	if (len > 9 || bs_num_parse(s, len, 999999999, BS_NUM_ZEROS, &v) < 0)
		return -1;
	return (pid_t)v;
}

/* The parent pid in /proc/PID/stat: "pid (comm) state ppid ...", where comm
 * may itself hold spaces and parentheses, so the last ')' is the anchor. */
static pid_t
read_ppid(const char *pid)
{
	char path[64], buf[512];
	const char *p, *end, *q;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	end = buf + n;
	p = strrchr(buf, ')');
	/* ") S 1234 " */
	if (p == NULL || end - p < 5 || p[1] != ' ' || p[3] != ' ')
		return -1;
	p += 4;
	for (q = p; q < end && *q != ' '; q++)
		;
	return parse_pid(p, (size_t)(q - p));
}

int
bs_signal_children(int sig, pid_t except)
{
	pid_t self = getpid(), pid;
	struct dirent *de;
	DIR *d;
	int n = 0;

	d = opendir("/proc");
	if (d == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		pid = parse_pid(de->d_name, strlen(de->d_name));
		if (pid <= 0 || pid == except || pid == self)
			continue;
		if (read_ppid(de->d_name) == self && kill(pid, sig) == 0)
			n++;
	}
	closedir(d);
	return n;
}
