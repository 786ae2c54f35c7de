/*
 * proxy/core/sockmaker.c: the socket maker process and the proxy's calls
 * to it (see sockmaker.h).  The maker's half runs in postern-proxy
 * executed again in its internal mode (px_sockmaker_main): it uses no
 * log, no loop and nothing of the proxy's state.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "base/sockmsg.h"
#include "base/super.h"
#include "base/unix.h"
#include "proxy/core/log.h"
#include "proxy/core/sockmaker.h"

/* The maker's descriptors, fixed after its start. */
#define MK_SOCK 3
#define MK_ROOT 4
#define MK_CAPS ((1u << CAP_CHOWN) | (1u << CAP_DAC_OVERRIDE) | (1u << CAP_FOWNER))

/* The proxy's side. */
static struct {
	pthread_mutex_t lock;
	int fd;                         /* -1: no maker, or it is gone */
	pid_t pid;
	uint32_t seq;
	char root[BS_SOCKMSG_PATH];
} mk = { PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, "" };

/* ---- the maker -------------------------------------------------------------- */

/* What the maker serves for: fixed at its start. */
static const char *mk_root;
static uid_t mk_uid;
static gid_t mk_gid;

static void
fail(struct bs_sockrep *rep, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fail(struct bs_sockrep *rep, int err, const char *fmt, ...)
{
	va_list ap;

	rep->err = (uint32_t)err;
	va_start(ap, fmt);
	vsnprintf(rep->why, sizeof(rep->why), fmt, ap);
	va_end(ap);
}

/*
 * Open the directory that holds PATH's last component, from socket_dir
 * down, one level at a time, never through a symbolic link (O_NOFOLLOW on
 * each level).  With CREATE, make each missing level 0755 (root's), and
 * give the socket's own directory, when made, to the proxy's user, as at
 * start.  Copies the last component into NAME.  Returns the directory's
 * descriptor, or -1 with REP filled.
 */
static int
walk(const char *path, int create, char *name, struct bs_sockrep *rep)
{
	char buf[BS_SOCKMSG_PATH], *p, *slash;
	int dir, next, e;

	snprintf(buf, sizeof(buf), "%s", path);
	if ((dir = fcntl(MK_ROOT, F_DUPFD_CLOEXEC, 0)) < 0) {
		fail(rep, errno, "%s", strerror(errno));
		return -1;
	}
	for (p = buf + strlen(mk_root) + 1; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		int made = 0;

		*slash = '\0';
		next = openat(dir, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(dir, p, 0755) == 0)
				made = 1;
			next = openat(dir, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		e = errno;
		close(dir);
		if (next < 0) {
			if (e == ELOOP || e == ENOTDIR)
				fail(rep, e, "%s is a symbolic link or not a directory: not followed", buf);
			else
				fail(rep, e, "cannot open or make the directory %s: %s", buf, strerror(e));
			return -1;
		}
		dir = next;
		if (made && strchr(slash + 1, '/') == NULL) {
			rep->made_dir = 1;
			if (fchown(dir, mk_uid, mk_gid) != 0) {
				fail(rep, errno, "chown %s: %s", buf, strerror(errno));
				close(dir);
				return -1;
			}
		}
		*slash = '/';
	}
	snprintf(name, BS_SOCKMSG_PATH, "%s", p);
	return dir;
}

/* Say in REP what the file ST now has. */
static void
put_stat(const struct stat *st, struct bs_sockrep *rep)
{
	rep->uid = st->st_uid;
	rep->gid = st->st_gid;
	rep->mode = st->st_mode & 0777;
}

/*
 * Open NAME in DIR, without following it, if it is a socket with no
 * other name: a socket elsewhere on the file system that the proxy's uid
 * linked into its directory (any 0666 socket on the same file system)
 * must not be changed.  Returns an O_PATH descriptor, or -1 with REP
 * filled.
 */
static int
open_socket(int dir, const char *name, const char *path, struct bs_sockrep *rep)
{
	struct stat st;
	int fd;

	if ((fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		fail(rep, errno, "open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		fail(rep, errno, "stat %s: %s", path, strerror(errno));
	} else if (!S_ISSOCK(st.st_mode)) {
		fail(rep, EEXIST, "%s is not a socket", path);
	} else if (st.st_nlink != 1) {
		fail(rep, EMLINK, "%s has other names (hard links): refused", path);
	} else {
		put_stat(&st, rep);
		return fd;
	}
	close(fd);
	return -1;
}

/* Give NAME in DIR, a socket of one name, OWNER, GROUP and MODE: on the
 * inode checked, never through a link.  0 or -1 with REP filled. */
static int
set_perms(int dir, const char *name, const struct bs_sockreq *req, struct bs_sockrep *rep)
{
	struct stat st;
	char self[64];
	int fd, rc = -1;

	if ((fd = open_socket(dir, name, req->path, rep)) < 0)
		return -1;
	/* chmod(2) takes no O_PATH descriptor; its /proc name is that
	 * inode. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (chmod(self, req->mode) != 0)
		fail(rep, errno, "chmod %s: %s", req->path, strerror(errno));
	else if ((req->owner != BS_SOCK_KEEP || req->group != BS_SOCK_KEEP) &&
	    fchownat(fd, "", (uid_t)req->owner, (gid_t)req->group, AT_EMPTY_PATH) != 0)
		fail(rep, errno, "chown %s: %s", req->path, strerror(errno));
	else if (fstat(fd, &st) != 0)
		fail(rep, errno, "stat %s: %s", req->path, strerror(errno));
	else {
		put_stat(&st, rep);
		rc = 0;
	}
	close(fd);
	return rc;
}

/*
 * BIND: as listen.c binds as root, but below socket_dir only and through
 * no symbolic link.  The maker is single-threaded, so it binds and probes
 * by the name relative to its working directory, DIR.  Returns the
 * listening descriptor, or -1 with REP filled.
 */
static int
serve_bind(const struct bs_sockreq *req, struct bs_sockrep *rep)
{
	struct sockaddr_un sun;
	socklen_t len;
	struct stat st;
	char name[BS_SOCKMSG_PATH];
	int dir, fd = -1, old = -1, probe, rc, e;

	if ((dir = walk(req->path, 1, name, rep)) < 0)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, name, strlen(name) + 1);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name) + 1);
	if (fchdir(dir) != 0) {
		fail(rep, errno, "chdir: %s", strerror(errno));
		goto out;
	}
	/* Only a stale socket is replaced: never a live one, never anything
	 * else.  The probe goes to the inode checked, by its /proc name, not
	 * by a name the proxy's user could swap in the directory it was
	 * given; there it may unlink anyway. */
	if ((old = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		struct sockaddr_un self;
		socklen_t slen;
		char proc[64];

		if (fstat(old, &st) != 0 || !S_ISSOCK(st.st_mode)) {
			fail(rep, EEXIST, "%s exists and is not a socket; refusing to replace it",
			    req->path);
			goto out;
		}
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", old);
		(void)bs_unix_addr(&self, &slen, proc);
		/* Non-blocking: a live socket with a full backlog must not
		 * hold the maker. */
		if ((probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
			fail(rep, errno, "socket: %s", strerror(errno));
			goto out;
		}
		rc = connect(probe, (struct sockaddr *)&self, slen);
		e = errno;
		close(probe);
		if (rc == 0 || e == EAGAIN) {
			fail(rep, EADDRINUSE, "another process is serving %s", req->path);
			goto out;
		}
		if (e != ECONNREFUSED) {
			fail(rep, e, "%s: cannot tell whether the socket is stale: %s", req->path,
			    strerror(e));
			goto out;
		}
		if (unlinkat(dir, name, 0) != 0) {
			fail(rep, errno, "unlink stale %s: %s", req->path, strerror(errno));
			goto out;
		}
	} else if (errno != ENOENT) {
		fail(rep, errno, "open %s: %s", req->path, strerror(errno));
		goto out;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
		fail(rep, errno, "socket: %s", strerror(errno));
		goto out;
	}
	/* Born 0600 and root's: nobody else connects before its mode and
	 * owner are set and it listens. */
	umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, len);
	e = errno;
	umask(0);
	if (rc != 0) {
		fail(rep, e, "bind %s: %s", req->path, strerror(e));
		close(fd);
		fd = -1;
		goto out;
	}
	if (set_perms(dir, name, req, rep) < 0 || listen(fd, 1024) != 0) {
		if (rep->err == 0)
			fail(rep, errno, "listen %s: %s", req->path, strerror(errno));
		(void)unlinkat(dir, name, 0);
		close(fd);
		fd = -1;
	}
out:
	if (old >= 0)
		close(old);
	(void)chdir("/");
	close(dir);
	return fd;
}

/* UNLINK and PERMS: only on a socket, never through a symbolic link. */
static void
serve_other(const struct bs_sockreq *req, struct bs_sockrep *rep)
{
	char name[BS_SOCKMSG_PATH];
	struct stat st;
	int dir;

	if ((dir = walk(req->path, 0, name, rep)) < 0)
		return;
	if (req->op == BS_SOCK_PERMS)
		(void)set_perms(dir, name, req, rep);
	else if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		fail(rep, errno, "stat %s: %s", req->path, strerror(errno));
	else if (!S_ISSOCK(st.st_mode))
		fail(rep, EEXIST, "%s is not a socket", req->path);
	else if (unlinkat(dir, name, 0) != 0)
		fail(rep, errno, "unlink %s: %s", req->path, strerror(errno));
	close(dir);
}

/* Send REP, and FD (when >= 0) with it.  0 or -1. */
static int
send_reply(int sock, const struct bs_sockrep *rep, int fd)
{
	unsigned char buf[BS_SOCKREP_LEN];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg;
	ssize_t n;

	bs_sockrep_encode(rep, buf);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd >= 0) {
		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.b;
		msg.msg_controllen = sizeof(cm.b);
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(buf) ? 0 : -1;
}

/* Keep uid 0 with MK_CAPS only, in every set and the bounding set, and
 * no_new_privs.  0, or -1 with REP filled. */
static int
reduce_caps(struct bs_sockrep *rep)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	int c;

	/* The bounding set first: dropping from it needs CAP_SETPCAP. */
	for (c = 0; c < 64; c++) {
		if (c < 32 && (MK_CAPS & (1u << c)))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL) {
			fail(rep, errno, "PR_CAPBSET_DROP: %s", strerror(errno));
			return -1;
		}
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	data[0].effective = data[0].permitted = MK_CAPS;
	if (syscall(SYS_capset, &hdr, data) != 0) {
		fail(rep, errno, "capset: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		fail(rep, errno, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0 || data[0].permitted != MK_CAPS ||
	    data[0].effective != MK_CAPS || data[0].inheritable != 0 || data[1].permitted != 0) {
		fail(rep, EPERM, "capabilities other than CAP_CHOWN, CAP_DAC_OVERRIDE and "
		    "CAP_FOWNER remain");
		return -1;
	}
	return 0;
}

/* Parse the decimal S, at most MAX, into *V.  0 or -1. */
static int
parse_id(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno != 0 || *end != '\0' || *v > max ? -1 : 0;
}

/* Whether MK_SOCK is a UNIX seqpacket socket and MK_ROOT a directory: the
 * only descriptors the maker serves on. */
static int
given(void)
{
	struct stat st;
	socklen_t len;
	int v;

	len = sizeof(v);
	if (getsockopt(MK_SOCK, SOL_SOCKET, SO_DOMAIN, &v, &len) != 0 || v != AF_UNIX)
		return 0;
	len = sizeof(v);
	if (getsockopt(MK_SOCK, SOL_SOCKET, SO_TYPE, &v, &len) != 0 || v != SOCK_SEQPACKET)
		return 0;
	return fstat(MK_ROOT, &st) == 0 && S_ISDIR(st.st_mode);
}

int
px_sockmaker_main(int argc, char **argv)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE, SIGCHLD };
	unsigned char buf[BS_SOCKREQ_LEN + 1];
	struct bs_sockreq req;
	struct bs_sockrep rep;
	unsigned long parent, uid, gid;
	const char *why;
	ssize_t n;
	int fd;

	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (argc != 6 || strcmp(argv[1], PX_SOCKMAKER_ARG) != 0 || !given()) {
		fprintf(stderr, "postern-proxy: %s is internal: postern-proxy starts its socket "
		    "maker with it, on descriptors it gives\n", PX_SOCKMAKER_ARG);
		return 2;
	}
	/* Exec keeps PR_SET_PDEATHSIG only for a binary that is not set-id;
	 * set it again, then see that the proxy is still the parent. */
	if (parse_id(argv[2], INT_MAX, &parent) < 0 || parent <= 1 ||
	    bs_child_die_with_parent((pid_t)parent, SIGKILL) < 0)
		_exit(1);
	bs_child_signals_reset(sigs, sizeof(sigs) / sizeof(sigs[0]));
	/* The proxy left no other descriptor open; none, if run by hand. */
	if (syscall(SYS_close_range, MK_ROOT + 1, ~0u, 0) != 0)
		for (fd = MK_ROOT + 1; fd < 65536; fd++)
			(void)close(fd);
	(void)prctl(PR_SET_NAME, "postern-sockmkr", 0, 0, 0);
	umask(0);
	(void)chdir("/");
	memset(&rep, 0, sizeof(rep));
	if (parse_id(argv[3], UINT32_MAX - 1, &uid) < 0 ||
	    parse_id(argv[4], UINT32_MAX - 1, &gid) < 0 ||
	    bs_sockpath_normal(argv[5], &why) < 0) {
		fail(&rep, EINVAL, "bad arguments to %s", PX_SOCKMAKER_ARG);
		(void)send_reply(MK_SOCK, &rep, -1);
		_exit(1);
	}
	mk_root = argv[5];
	mk_uid = (uid_t)uid;
	mk_gid = (gid_t)gid;
	if (reduce_caps(&rep) < 0) {
		(void)send_reply(MK_SOCK, &rep, -1);
		_exit(1);
	}
	/* The first reply (sequence 0) says it is ready; then one reply per
	 * request, until end of file. */
	if (send_reply(MK_SOCK, &rep, -1) < 0)
		_exit(1);
	for (;;) {
		/* No room for descriptors: any the proxy sends are dropped. */
		n = recv(MK_SOCK, buf, sizeof(buf), 0);
		if (n == 0)
			_exit(0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		memset(&rep, 0, sizeof(rep));
		memset(&req, 0, sizeof(req));
		fd = -1;
		if (bs_sockreq_decode(buf, (size_t)n, &req, &why) < 0 ||
		    bs_sockpath_under(req.path, mk_root, &why) < 0) {
			rep.seq = req.seq;
			fail(&rep, EINVAL, "%s", why);
		} else {
			rep.seq = req.seq;
			if (req.op == BS_SOCK_BIND)
				fd = serve_bind(&req, &rep);
			else
				serve_other(&req, &rep);
		}
		if (send_reply(MK_SOCK, &rep, fd) < 0)
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * In the forked child, still a copy of the proxy: keep SOCK and ROOTFD
 * only, at MK_SOCK and MK_ROOT, with 0 to 2 on /dev/null, and execute EXE
 * (postern-proxy itself) as ARGV with an empty environment, so that the
 * maker holds nothing of the proxy's memory.  Never returns.
 */
static void __attribute__((noreturn))
child_exec(int exe, int sock, int rootfd, pid_t parent, char *const *argv)
{
	static char *const envp[] = { NULL };
	struct bs_sockrep rep;
	sigset_t all;
	int null, e;

	/* No handler of the proxy's runs here; the maker unblocks them. */
	sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	if (bs_child_die_with_parent(parent, SIGKILL) < 0)
		_exit(1);
	/* Above the fixed numbers first, then into place: dup2() clears
	 * close-on-exec on 0 to 4; EXE keeps it. */
	sock = fcntl(sock, F_DUPFD_CLOEXEC, 10);
	rootfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 10);
	exe = fcntl(exe, F_DUPFD_CLOEXEC, 10);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (sock < 0 || rootfd < 0 || exe < 0 || null < 0 || dup2(null, 0) < 0 ||
	    dup2(null, 1) < 0 || dup2(null, 2) < 0 || dup2(sock, MK_SOCK) < 0 ||
	    dup2(rootfd, MK_ROOT) < 0 || dup3(exe, MK_ROOT + 1, O_CLOEXEC) < 0)
		_exit(1);
	if (syscall(SYS_close_range, MK_ROOT + 2, ~0u, 0) != 0) {
		int fd;

		for (fd = MK_ROOT + 2; fd < 65536; fd++)
			(void)close(fd);
	}
	fexecve(MK_ROOT + 1, argv, envp);
	e = errno;
	memset(&rep, 0, sizeof(rep));
	fail(&rep, e, "cannot execute postern-proxy %s: %s", PX_SOCKMAKER_ARG, strerror(e));
	(void)send_reply(MK_SOCK, &rep, -1);
	_exit(1);
}

/* ---- the proxy's side -------------------------------------------------------- */

/* Make ROOT and the levels above it, 0755, as root; open it.  The path
 * comes from the config, so it may go through links. */
static int
open_root(const char *root)
{
	char dir[BS_SOCKMSG_PATH], *p;
	mode_t old = umask(0022);
	int fd;

	snprintf(dir, sizeof(dir), "%s", root);
	for (p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (*p == '/')
			*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			log_err("socket_dir: mkdir %s", dir);
			umask(old);
			return -errno;
		}
		if (p - dir == (ptrdiff_t)strlen(root))
			break;
		*p = '/';
	}
	umask(old);
	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		log_err("socket_dir: open %s", root);
		return -errno;
	}
	return fd;
}

/* Now in milliseconds on the monotonic clock. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait for the reply to SEQ, with its descriptor (*FD, -1 when none).
 * Replies to earlier requests that timed out are dropped.  Under mk.lock.
 * Returns 0, or a negative errno with WHY.
 */
static int
recv_reply(uint32_t seq, struct bs_sockrep *rep, int *fd, char *why, size_t size)
{
	long long end = now_ms() + PX_SOCKMAKER_TIMEOUT_MS;
	unsigned char buf[BS_SOCKREP_LEN + 1];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct iovec iov;
	struct msghdr msg;
	struct cmsghdr *c;
	struct pollfd pfd;
	ssize_t n;
	int rc;

	for (;;) {
		*fd = -1;
		pfd.fd = mk.fd;
		pfd.events = POLLIN;
		rc = poll(&pfd, 1, (int)(end - now_ms() > 0 ? end - now_ms() : 0));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0) {
			snprintf(why, size, "the socket maker did not answer within %d ms",
			    PX_SOCKMAKER_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		iov.iov_base = buf;
		iov.iov_len = sizeof(buf);
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cm.b;
		msg.msg_controllen = sizeof(cm.b);
		n = recvmsg(mk.fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			snprintf(why, size, "the socket maker is gone");
			close(mk.fd);
			__atomic_store_n(&mk.fd, -1, __ATOMIC_RELEASE);
			return -EPIPE;
		}
		for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
			int *fds = (int *)(void *)CMSG_DATA(c);
			size_t i, nfd;
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < nfd; i++) {
				int f;
				memcpy(&f, &fds[i], sizeof(f));
				if (*fd < 0)
					*fd = f;
				else
					close(f);
			}
		}
		if (bs_sockrep_decode(buf, (size_t)n, rep) < 0 || (msg.msg_flags & MSG_CTRUNC)) {
			if (*fd >= 0)
				close(*fd);
			snprintf(why, size, "the socket maker sent a malformed reply");
			return -EPROTO;
		}
		if (rep->seq != seq) {
			if (*fd >= 0)
				close(*fd);
			continue;
		}
		if (rep->err != 0) {
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
			snprintf(why, size, "%s", rep->why);
			return -(int)rep->err;
		}
		return 0;
	}
}

/* Send one request and wait for its reply.  Returns 0 or a negative
 * errno with WHY; *FD is the descriptor sent back, or -1. */
static int
ask(struct bs_sockreq *req, struct bs_sockrep *rep, int *fd, char *why, size_t size)
{
	unsigned char buf[BS_SOCKREQ_LEN];
	ssize_t n;
	int err;

	*fd = -1;
	if (strlen(req->path) >= sizeof(req->path)) {
		snprintf(why, size, "the path does not fit a UNIX socket address");
		return -ENAMETOOLONG;
	}
	pthread_mutex_lock(&mk.lock);
	if (mk.fd < 0) {
		pthread_mutex_unlock(&mk.lock);
		snprintf(why, size, "the socket maker is gone");
		return -EPIPE;
	}
	req->seq = ++mk.seq;
	bs_sockreq_encode(req, buf);
	do
		n = send(mk.fd, buf, sizeof(buf), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(buf)) {
		snprintf(why, size, "cannot reach the socket maker: %s", strerror(errno));
		err = -EPIPE;
	} else
		err = recv_reply(req->seq, rep, fd, why, size);
	pthread_mutex_unlock(&mk.lock);
	return err;
}

int
px_sockmaker_start(const char *root, uid_t uid, gid_t gid)
{
	struct bs_sockrep rep;
	const char *why;
	char buf[BS_SOCKMSG_WHY], spid[16], suid[16], sgid[16], *argv[7];
	pid_t parent = getpid(), pid;
	int sv[2], rootfd, exe, fd, err;

	if (bs_sockpath_normal(root, &why) < 0) {
		log_errx("socket_dir %s: %s", root, why);
		return -EINVAL;
	}
	/* A forked maker would keep a copy of every secret in a root
	 * process: without its binary to execute, there is none. */
	if ((exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) < 0) {
		err = -errno;
		log_errx("socket_dir %s: no socket maker: cannot open /proc/self/exe to execute "
		    "postern-proxy again (%s); it needs /proc mounted", root, strerror(-err));
		return err;
	}
	snprintf(spid, sizeof(spid), "%d", (int)parent);
	snprintf(suid, sizeof(suid), "%u", (unsigned)uid);
	snprintf(sgid, sizeof(sgid), "%u", (unsigned)gid);
	argv[0] = (char *)"postern-proxy";
	argv[1] = (char *)PX_SOCKMAKER_ARG;
	argv[2] = spid;
	argv[3] = suid;
	argv[4] = sgid;
	argv[5] = (char *)root;
	argv[6] = NULL;
	if ((rootfd = open_root(root)) < 0) {
		close(exe);
		return rootfd;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		err = -errno;
		log_err("socket maker: socketpair");
		close(rootfd);
		close(exe);
		return err;
	}
	if ((pid = fork()) < 0) {
		err = -errno;
		log_err("socket maker: fork");
		close(sv[0]);
		close(sv[1]);
		close(rootfd);
		close(exe);
		return err;
	}
	if (pid == 0) {
		close(sv[0]);
		child_exec(exe, sv[1], rootfd, parent, argv);
	}
	close(sv[1]);
	close(rootfd);
	close(exe);
	mk.fd = sv[0];
	mk.pid = pid;
	snprintf(mk.root, sizeof(mk.root), "%s", root);
	pthread_mutex_lock(&mk.lock);
	err = recv_reply(0, &rep, &fd, buf, sizeof(buf));
	pthread_mutex_unlock(&mk.lock);
	if (err < 0) {
		log_errx("socket maker: %s", buf);
		if (mk.fd >= 0)
			close(mk.fd);
		mk.fd = -1;
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		mk.pid = 0;
		return err;
	}
	log_info("socket maker: pid %d makes sockets under %s, uid 0 with CAP_CHOWN, "
	    "CAP_DAC_OVERRIDE and CAP_FOWNER only", (int)pid, root);
	return 0;
}

/* Whether the maker is there: read from any thread, without the lock
 * (mk.fd goes to -1 under it, once). */
static int
live(void)
{
	return __atomic_load_n(&mk.fd, __ATOMIC_ACQUIRE) >= 0;
}

pid_t
px_sockmaker_pid(void)
{
	return live() ? mk.pid : 0;
}

int
px_sockmaker_covers(const char *path)
{
	const char *why;

	return live() && bs_sockpath_under(path, mk.root, &why) == 0;
}

const char *
px_sockmaker_root(void)
{
	return live() ? mk.root : NULL;
}

int
px_sockmaker_bind(const char *path, uid_t owner, gid_t group, mode_t mode, int *made_dir,
    uid_t *uid, gid_t *gid, mode_t *fmode, char *why, size_t size)
{
	struct bs_sockreq req;
	struct bs_sockrep rep;
	int fd, err;

	memset(&req, 0, sizeof(req));
	req.op = BS_SOCK_BIND;
	req.owner = (uint32_t)owner;
	req.group = (uint32_t)group;
	req.mode = (uint32_t)mode;
	snprintf(req.path, sizeof(req.path), "%s", path);
	if ((err = ask(&req, &rep, &fd, why, size)) < 0)
		return err;
	if (fd < 0) {
		snprintf(why, size, "the socket maker sent no socket");
		return -EPROTO;
	}
	*made_dir = (int)rep.made_dir;
	*uid = rep.uid;
	*gid = rep.gid;
	*fmode = rep.mode;
	return fd;
}

int
px_sockmaker_perms(const char *path, uid_t owner, gid_t group, mode_t mode, uid_t *uid,
    gid_t *gid, mode_t *fmode, char *why, size_t size)
{
	struct bs_sockreq req;
	struct bs_sockrep rep;
	int fd, err;

	memset(&req, 0, sizeof(req));
	req.op = BS_SOCK_PERMS;
	req.owner = owner == (uid_t)-1 ? BS_SOCK_KEEP : (uint32_t)owner;
	req.group = group == (gid_t)-1 ? BS_SOCK_KEEP : (uint32_t)group;
	req.mode = (uint32_t)mode;
	snprintf(req.path, sizeof(req.path), "%s", path);
	if ((err = ask(&req, &rep, &fd, why, size)) < 0)
		return err;
	if (fd >= 0)
		close(fd);
	*uid = rep.uid;
	*gid = rep.gid;
	*fmode = rep.mode;
	return 0;
}

int
px_sockmaker_unlink(const char *path, char *why, size_t size)
{
	struct bs_sockreq req;
	struct bs_sockrep rep;
	int fd, err;

	memset(&req, 0, sizeof(req));
	req.op = BS_SOCK_UNLINK;
	snprintf(req.path, sizeof(req.path), "%s", path);
	if ((err = ask(&req, &rep, &fd, why, size)) < 0)
		return err;
	if (fd >= 0)
		close(fd);
	return 0;
}

void
px_sockmaker_stop(void)
{
	int i;

	pthread_mutex_lock(&mk.lock);
	if (mk.fd >= 0) {
		close(mk.fd);
		__atomic_store_n(&mk.fd, -1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&mk.lock);
	/* End of file ends it.  Root's, it cannot be signalled from here:
	 * if it does not end within a second, PR_SET_PDEATHSIG ends it once
	 * this process has. */
	for (i = 0; mk.pid > 0 && i < 100; i++) {
		if (waitpid(mk.pid, NULL, WNOHANG) != 0)
			break;
		usleep(10 * 1000);
	}
	mk.pid = 0;
}
