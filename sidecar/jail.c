/*
 * sidecar/jail.c: the command's mount namespace (see jail.h).
 *
 * UNIX sockets are files, and files cross network namespaces: a command
 * with only loopback still reaches docker.sock, an ssh-agent or a tmux
 * server by connect(2) to their path.  Instead of refusing socket(AF_UNIX)
 * (which would also take away the sockets a program makes for itself, and
 * cannot tell one path from another), the command gets a view of the file
 * system in which the host's sockets are gone: empty socket directories,
 * and the remaining sockets covered by /dev/null, as systemd's
 * InaccessiblePaths= does.  The measurement behind the choice is in
 * postern-sidecar(8).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "sidecar/jail.h"
#include "sidecar/log.h"
#include "sidecar/unixnames.h"

struct sc_jail_keep {
	char *path;          /* the real path, symbolic links resolved */
	dev_t dev;
	ino_t ino;
};

struct sc_jail {
	char **hide;         /* pathname sockets bound on the host */
	size_t n_hide, cap_hide;
	struct sc_jail_keep *keep;
	size_t n_keep;
	char *cover;         /* a directory to hide (sc_jail_cover) */
	char **bind;         /* host directories shown read-write (--bind) */
	size_t n_bind;
};

/* The directories that get a fresh tmpfs, and its mode.  /run is 0755 like
 * the host's, so that the command (never root) cannot replace what is
 * bound into SC_JAIL_DIR; the others are world-writable and sticky. */
static const struct {
	const char *dir;
	const char *opts;
} sc_jail_tmpfs[] = {
	{ "/tmp", "mode=1777" },
	{ "/var/tmp", "mode=1777" },
	{ "/run", "mode=0755" },
	{ "/dev/shm", "mode=1777" },
};

#define SC_JAIL_NTMPFS (sizeof(sc_jail_tmpfs) / sizeof(sc_jail_tmpfs[0]))

struct sc_jail *
sc_jail_new(void)
{
	return calloc(1, sizeof(struct sc_jail));
}

void
sc_jail_free(struct sc_jail *j)
{
	size_t i;

	if (j == NULL)
		return;
	for (i = 0; i < j->n_hide; i++)
		free(j->hide[i]);
	free(j->hide);
	for (i = 0; i < j->n_keep; i++)
		free(j->keep[i].path);
	free(j->keep);
	free(j->cover);
	for (i = 0; i < j->n_bind; i++)
		free(j->bind[i]);
	free(j->bind);
	free(j);
}

int
sc_jail_keep(struct sc_jail *j, const char *path)
{
	struct sc_jail_keep *nk;
	struct stat st;
	char *real;

	real = realpath(path, NULL);
	if (real == NULL)
		return -errno;
	if (stat(real, &st) < 0) {
		free(real);
		return -errno;
	}
	if (!S_ISSOCK(st.st_mode)) {
		free(real);
		return -ENOTSOCK;
	}
	nk = realloc(j->keep, (j->n_keep + 1) * sizeof(*nk));
	if (nk == NULL) {
		free(real);
		return -ENOMEM;
	}
	j->keep = nk;
	j->keep[j->n_keep].path = real;
	j->keep[j->n_keep].dev = st.st_dev;
	j->keep[j->n_keep].ino = st.st_ino;
	j->n_keep++;
	return 0;
}

/* Nonzero when PATH is DIR or lies below it. */
static int
sc_jail_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int
sc_jail_bind(struct sc_jail *j, const char *dir)
{
	struct stat st;
	char *real, **nb;

	real = realpath(dir, NULL);
	if (real == NULL)
		return -errno;
	if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		return -ENOTDIR;
	}
	/* The jail's own places: SC_JAIL_DIR is made on /run, and /proc
	 * and /dev are the kernel's. */
	if (strcmp(real, "/") == 0 || sc_jail_under(real, "/run") ||
	    sc_jail_under(real, "/proc") || sc_jail_under(real, "/dev")) {
		free(real);
		return -EPERM;
	}
	nb = realloc(j->bind, (j->n_bind + 1) * sizeof(*nb));
	if (nb == NULL) {
		free(real);
		return -ENOMEM;
	}
	j->bind = nb;
	j->bind[j->n_bind++] = real;
	return 0;
}

int
sc_jail_cover(struct sc_jail *j, const char *dir)
{
	char *copy = strdup(dir);

	if (copy == NULL)
		return -ENOMEM;
	free(j->cover);
	j->cover = copy;
	return 0;
}

static int
sc_jail_add_hide(const char *path, size_t len, void *arg)
{
	struct sc_jail *j = arg;
	char **nh, *copy;
	size_t ncap;

	if (j->n_hide == j->cap_hide) {
		ncap = j->cap_hide ? j->cap_hide * 2 : 64;
		nh = realloc(j->hide, ncap * sizeof(*nh));
		if (nh == NULL)
			return -ENOMEM;
		j->hide = nh;
		j->cap_hide = ncap;
	}
	copy = strndup(path, len);
	if (copy == NULL)
		return -ENOMEM;
	j->hide[j->n_hide++] = copy;
	return 0;
}

int
sc_jail_scan(struct sc_jail *j)
{
	int err;

	err = sc_unixnames_read("/proc/self/net/unix", sc_jail_add_hide, j);
	if (err < 0)
		return err;
	/* Under `ip netns exec` or in a namespace of its own the sidecar
	 * sees only its namespace's table; the host's sockets are files all
	 * the same.  PID 1's table is read too (whether it is another
	 * namespace's cannot always be told: /proc/1/ns may be closed to
	 * us); a socket listed twice is covered once, and where the table
	 * cannot be read only the first one counts (postern-sidecar(8),
	 * LIMITS). */
	err = sc_unixnames_read("/proc/1/net/unix", sc_jail_add_hide, j);
	if (err == -ENOMEM)
		return err;
	return 0;
}

/* Nonzero when the real path PATH lies in one of the fresh tmpfs. */
static int
sc_jail_in_tmpfs(const char *path)
{
	size_t i, n;

	for (i = 0; i < SC_JAIL_NTMPFS; i++) {
		n = strlen(sc_jail_tmpfs[i].dir);
		if (strncmp(path, sc_jail_tmpfs[i].dir, n) == 0 && path[n] == '/')
			return 1;
	}
	return 0;
}

/*
 * Make PATH exist as an empty file (DIR: directory) to mount on, creating its missing
 * parents.  Only ever inside the fresh tmpfs: anywhere else this would be
 * a change to the host's file system.
 */
static int
sc_jail_mountpoint(const char *path, int dir)
{
	char buf[PATH_MAX];
	struct stat st;
	char *p;
	int fd;

	if (lstat(path, &st) == 0)
		return 0;
	if (errno != ENOENT || !sc_jail_in_tmpfs(path))
		return -errno;
	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -ENAMETOOLONG;
	for (p = strchr(buf + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (dir)
		return mkdir(path, 0755) < 0 ? -errno : 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Attach the detached tree FD (from open_tree) at PATH. */
static int
sc_jail_attach(int fd, const char *path)
{
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0)
		return -errno;
	err = sc_jail_mountpoint(path, S_ISDIR(st.st_mode));
	if (err < 0)
		return err;
	if (move_mount(fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

/* Nonzero when ST is one of the sockets the user asked to keep. */
static int
sc_jail_is_kept(const struct sc_jail *j, const struct stat *st)
{
	size_t i;

	for (i = 0; i < j->n_keep; i++)
		if (j->keep[i].dev == st->st_dev && j->keep[i].ino == st->st_ino)
			return 1;
	return 0;
}

int
sc_jail_build(const struct sc_jail *j, const char *engine_dir, const char *bridge)
{
	char cwd[PATH_MAX];
	struct stat st;
	int sock_fd = -1, bridge_fd = -1, *keep_fd = NULL, *bind_fd = NULL, err = 0;
	size_t i;

	/* Nothing below may show up on the host (systemd makes / shared). */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		err = -errno;
		sc_logerr(err, "cannot make the mount namespace private");
		goto out;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL || cwd[0] != '/')
		cwd[0] = '\0';
	/* Take what is bound back in while its paths still lead to it. */
	keep_fd = calloc(j->n_keep + 1, sizeof(*keep_fd));
	if (keep_fd == NULL) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < j->n_keep; i++)
		keep_fd[i] = -1;
	bind_fd = calloc(j->n_bind + 1, sizeof(*bind_fd));
	if (bind_fd == NULL) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < j->n_bind; i++)
		bind_fd[i] = -1;
	for (i = 0; i < j->n_bind; i++) {
		bind_fd[i] = open_tree(AT_FDCWD, j->bind[i],
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (bind_fd[i] < 0) {
			err = -errno;
			sc_logerr(err, "--bind %s: cannot take it", j->bind[i]);
			goto out;
		}
	}
	sock_fd = open_tree(AT_FDCWD, engine_dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (sock_fd < 0) {
		err = -errno;
		sc_logerr(err, "cannot take %s", engine_dir);
		goto out;
	}
	bridge_fd = open_tree(AT_FDCWD, bridge, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (bridge_fd < 0) {
		err = -errno;
		sc_logerr(err, "cannot take %s", bridge);
		goto out;
	}
	for (i = 0; i < j->n_keep; i++) {
		keep_fd[i] = open_tree(AT_FDCWD, j->keep[i].path,
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (keep_fd[i] < 0) {
			err = -errno;
			sc_logerr(err, "--socket %s: cannot take it", j->keep[i].path);
			goto out;
		}
	}
	for (i = 0; i < SC_JAIL_NTMPFS; i++) {
		/* A symbolic link (/var/tmp -> /tmp on some systems) leads
		 * into a directory that is covered anyway, or somewhere we
		 * must not mount on. */
		if (lstat(sc_jail_tmpfs[i].dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			if (strcmp(sc_jail_tmpfs[i].dir, "/run") == 0) {
				err = -ENOTDIR;
				sc_logerr(err, "/run is needed for %s", SC_JAIL_DIR);
				goto out;
			}
			continue;
		}
		if (mount("tmpfs", sc_jail_tmpfs[i].dir, "tmpfs", MS_NOSUID | MS_NODEV,
		    sc_jail_tmpfs[i].opts) < 0) {
			err = -errno;
			sc_logerr(err, "cannot mount a tmpfs on %s", sc_jail_tmpfs[i].dir);
			goto out;
		}
	}
	/* Before the sockets are covered: those under a bound directory
	 * are covered in it like any other. */
	for (i = 0; i < j->n_bind; i++) {
		err = sc_jail_attach(bind_fd[i], j->bind[i]);
		if (err < 0) {
			sc_logerr(err, "--bind %s: cannot bind it in", j->bind[i]);
			goto out;
		}
	}
	/* Whatever the tmpfs did not hide is a socket at its path still, and
	 * stat() tells: a path already covered is a character device now. */
	for (i = 0; i < j->n_hide; i++) {
		if (stat(j->hide[i], &st) < 0 || !S_ISSOCK(st.st_mode) || sc_jail_is_kept(j, &st))
			continue;
		if (mount("/dev/null", j->hide[i], NULL, MS_BIND, NULL) < 0) {
			/* Fail closed: a socket left reachable is the hole
			 * this is here to close. */
			err = -errno;
			sc_logerr(err, "cannot cover the host socket %s", j->hide[i]);
			goto out;
		}
	}
	/* Mounted on the directory, not on the socket in it: a socket the
	 * engine binds there after a crash is under it too.  Read-only and
	 * mode 0: the command cannot put anything there either. */
	if (j->cover != NULL && lstat(j->cover, &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("tmpfs", j->cover, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
	    "mode=0,size=4k,nr_inodes=2") < 0) {
		err = -errno;
		sc_logerr(err, "cannot cover %s", j->cover);
		goto out;
	}
	for (i = 0; i < j->n_keep; i++) {
		err = sc_jail_attach(keep_fd[i], j->keep[i].path);
		if (err < 0) {
			sc_logerr(err, "--socket %s: cannot bind it in", j->keep[i].path);
			goto out;
		}
	}
	if (mkdir(SC_JAIL_DIR, 0755) < 0) {
		err = -errno;
		sc_logerr(err, "cannot create %s", SC_JAIL_DIR);
		goto out;
	}
	if (mkdir(SC_JAIL_ENGINE_DIR, 0755) < 0) {
		err = -errno;
		sc_logerr(err, "cannot create %s", SC_JAIL_ENGINE_DIR);
		goto out;
	}
	err = sc_jail_attach(sock_fd, SC_JAIL_ENGINE_DIR);
	if (err == 0)
		err = sc_jail_attach(bridge_fd, SC_JAIL_BRIDGE);
	if (err < 0) {
		sc_logerr(err, "cannot bind the proxy's socket and the bridge into %s",
		    SC_JAIL_DIR);
		goto out;
	}
	/* A /dev/mqueue shows the message queues of the IPC namespace that
	 * mounted it, the host's: show the command's own instead. */
	if (lstat("/dev/mqueue", &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		err = -errno;
		sc_logerr(err, "cannot mount /dev/mqueue for the command's IPC namespace");
		goto out;
	}
	/* The command's own processes only: no other process's environment,
	 * no /proc/PID/ns/net of a process outside to join. */
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		err = -errno;
		sc_logerr(err, "cannot mount /proc for the command's PID namespace");
		goto out;
	}
	/* The old working directory is a reference into the host's view:
	 * ".." from it would walk the host's /tmp.  Look it up again. */
	if (cwd[0] == '\0' || chdir(cwd) < 0) {
		sc_logx("warning: the working directory %s is not in the sandbox (/tmp, "
		    "/var/tmp, /run and /dev/shm are empty there); the command starts in /",
		    cwd[0] ? cwd : "(unknown)");
		if (chdir("/") < 0) {
			err = -errno;
			goto out;
		}
	}
	err = 0;
out:
	if (sock_fd >= 0)
		close(sock_fd);
	if (bridge_fd >= 0)
		close(bridge_fd);
	if (keep_fd != NULL) {
		for (i = 0; i < j->n_keep; i++)
			if (keep_fd[i] >= 0)
				close(keep_fd[i]);
		free(keep_fd);
	}
	if (bind_fd != NULL) {
		for (i = 0; i < j->n_bind; i++)
			if (bind_fd[i] >= 0)
				close(bind_fd[i]);
		free(bind_fd);
	}
	return err;
}
