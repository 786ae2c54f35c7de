/*
 * sidecar/capture.c: the pod's DNS stub and capture listeners, in a
 * process of their own (sidecar/capture.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/log.h"
#include "base/super.h"
#include "bridge/dnsstub.h"
#include "bridge/link.h"
#include "bridge/relay.h"
#include "sidecar/capture.h"
#include "sidecar/log.h"
#include "sidecar/pid1.h"

static void
on_signal(int fd, void *arg)
{
	struct br_relay *r = arg;
	struct signalfd_siginfo si;

	/* SIGHUP (a reload) means nothing here: the stub asks the engine,
	 * which has the new rules, about every name it has not seen. */
	while (bs_sigfd_read(fd, &si) == 1)
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			br_relay_stop(r);
}

/* The namespace's ip_unprivileged_port_start, or -1 when unreadable. */
static long
port_start(void)
{
	char buf[32];
	ssize_t n;
	int fd;

	fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

static void
capture_child(const char *sock, uid_t uid, pid_t parent, int ready)
{
	struct br_dnsstub *dns = NULL;
	struct br_relay *r = NULL;
	sigset_t set;
	const char *what;
	int err, sfd;

	/* Our own signalfd: the supervisor's stays with the supervisor. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sc_child_signals_reset();
	/* The relay's splice(2) into a socket its peer closed must be an
	 * EPIPE for that connection, not the end of every one. */
	signal(SIGPIPE, SIG_IGN);
	/* The bridge code's own lines (refusals, relay errors). */
	log_init("postern-sidecar", 0);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		_exit(1);
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		sc_logerr(errno, "capture: signalfd");
		_exit(1);
	}
	/* Root still: the route (CAP_NET_ADMIN) and the sysctl.  A runtime
	 * that mounts /proc/sys read-only refuses the sysctl; the pod's
	 * securityContext.sysctls can set it instead (checked below). */
	err = br_link_capture();
	if (err < 0 && port_start() != 0) {
		sc_logerr(err, "capture: cannot ready the namespace (the synthetic route, and "
		    "net.ipv4.ip_unprivileged_port_start 0: set it in the pod's sysctls "
		    "when /proc/sys is read-only)");
		_exit(1);
	}
	r = br_relay_new(sock);
	if (r == NULL) {
		sc_logerr(errno, "capture: relay towards %s", sock);
		_exit(1);
	}
	dns = br_dnsstub_new(r, sock);
	if (dns == NULL) {
		sc_logerr(errno, "capture: cannot serve the DNS stub on 127.0.0.1:53");
		_exit(1);
	}
	if (br_relay_watch(r, sfd, on_signal, r) < 0)
		_exit(1);
	err = bs_drop_privileges(uid, (gid_t)uid, &what);
	if (err < 0) {
		sc_logerr(err, "capture: cannot drop to uid %u (%s)", (unsigned)uid, what);
		_exit(1);
	}
	/* After the change of uid, which clears the parent-death signal. */
	sc_child_die_with_parent(parent, SIGTERM);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	close(ready);
	err = br_relay_run(r);
	if (err < 0)
		sc_logerr(err, "capture: relay loop");
	br_dnsstub_free(dns);
	br_relay_free(r);
	_exit(err < 0 ? 1 : 0);
}

pid_t
sc_capture_start(const char *sock, uid_t uid, pid_t parent)
{
	int pipefd[2];
	pid_t pid;
	ssize_t n;
	char byte;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (pid == 0) {
		close(pipefd[0]);
		capture_child(sock, uid, parent, pipefd[1]);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &byte, 1);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n != 1) {
		/* It said why; the caller's loop reaps it. */
		kill(pid, SIGKILL);
		return -EIO;
	}
	return pid;
}
