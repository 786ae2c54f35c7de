/*
 * sidecar/capture.c: the pod's DNS stub and capture listeners, in a
 * process of their own (sidecar/capture.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "base/super.h"
#include "bridge/dnsstub.h"
#include "bridge/link.h"
#include "bridge/priv.h"
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

/*
 * Become UID for good keeping CAP_NET_BIND_SERVICE alone, effective and
 * permitted: the stub's port 53 and each allowed name's ports (80, 443)
 * are bound after the drop, as names are asked.  The pod's low ports stay
 * closed to every other uid (no ip_unprivileged_port_start 0 here), and
 * no_new_privs with nothing inheritable or ambient lets no exec gain any.
 * Returns 0 or a negative errno with *WHAT set.
 */
static int
become_binder(uid_t uid, const char **what)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	const uint32_t bind = 1u << CAP_NET_BIND_SERVICE;

	*what = "PR_SET_KEEPCAPS";
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return -errno;
	*what = "setgroups/setresgid/setresuid";
	if (bs_become(uid, (gid_t)uid) < 0)
		return -errno;
	*what = "PR_SET_KEEPCAPS";
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return -errno;
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	data[0].effective = data[0].permitted = bind;
	*what = "capset CAP_NET_BIND_SERVICE (the container needs it)";
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	*what = "PR_CAP_AMBIENT_CLEAR_ALL";
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	*what = "PR_SET_NO_NEW_PRIVS";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	memset(data, 0, sizeof(data));
	*what = "capget";
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	*what = "capabilities other than CAP_NET_BIND_SERVICE remain";
	if (data[0].effective != bind || data[0].permitted != bind || data[0].inheritable ||
	    data[1].effective || data[1].permitted || data[1].inheritable || getuid() != uid)
		return -EPERM;
	*what = NULL;
	return 0;
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
	/* Root still: the route needs CAP_NET_ADMIN. */
	err = br_link_capture_route();
	if (err < 0) {
		sc_logerr(err, "capture: cannot make 198.18.0.0/15 local on lo");
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
	/* Nothing a later exec could raise (without CAP_SETPCAP, as in a
	 * container, the bounding set stays; no_new_privs covers it). */
	err = br_priv_drop_bounding(NULL);
	if (err < 0) {
		sc_logerr(err, "capture: cannot empty the bounding set");
		_exit(1);
	}
	err = become_binder(uid, &what);
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
