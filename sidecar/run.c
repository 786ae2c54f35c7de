/*
 * sidecar/run.c: the one-command mode.
 *
 * The sidecar forks the proxy engine (listening only on DIR/proxy.sock in a
 * fresh 0700 directory), waits until it is ready, then clones the command
 * child into new network, mount, PID and IPC namespaces (and a user namespace
 * when we are not root, so that an ordinary user gets CAP_NET_ADMIN and
 * CAP_SYS_ADMIN over the new namespaces only).  The child is PID 1 there:
 * it brings its loopback up, builds the mount namespace (sidecar/jail.h),
 * becomes the command's unprivileged identity and execs postern-bridge,
 * which stays PID 1 and runs CMD.  The only way out of the new network
 * namespace is the proxy's UNIX socket: it is a file, and files cross
 * network namespaces; the jail makes it the only socket file CMD sees,
 * besides those the user names.
 *
 * The IPC namespace keeps the host's System V shared memory, semaphores and
 * message queues (and POSIX message queues) out of reach, as the jail does
 * for POSIX shared memory in /dev/shm.
 *
 * Started by root, the namespaces are made by real root, and only then
 * does the child enter a user namespace of its own that maps the command's
 * uid and gid (and nothing else) onto themselves: CMD is never kernel uid
 * 0 and holds no capability over the network, mount or PID namespace it
 * runs in, nor over any other.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "base/unix.h"
#include "bridge/env.h"
#include "bridge/forward.h"
#include "bridge/link.h"
#include "bridge/priv.h"
#include "bridge/relay.h"
#include "bridge/upstream.h"
#include "conf/config.h"
#include "conf/rule.h"
#include "sidecar/ask.h"
#include "sidecar/engine.h"
#include "sidecar/jail.h"
#include "sidecar/learn.h"
#include "sidecar/log.h"
#include "sidecar/pid1.h"
#include "sidecar/run.h"

/* The status of a run whose set-up failed before CMD could start, the
 * convention of env(1), chroot(1) and podman for "the wrapper failed". */
#define SC_RUN_SETUP_FAILED 125

/* A root caller's engine's uid when the config names none. */
#define SC_RUN_ENGINE_UID 65532u

/* How long the engine may take to bind and say it is ready. */
#define SC_ENGINE_READY_MS 30000
/* How long the engine may take to stop after SIGTERM before SIGKILL. */
#define SC_ENGINE_STOP_MS 5000
/* An engine that dies under CMD is started again, at most this many times
 * in this many seconds; past that CMD is stopped as it was before. */
#define SC_ENGINE_RESTARTS 5
#define SC_ENGINE_RESTART_WINDOW_S 60

extern char **environ;

/* Where CMD reads why its requests were refused, and the variable that
 * names it. */
#define SC_RUN_REFUSALS SC_JAIL_DIR "/refusals"
#define SC_RUN_REFUSALS_VAR "POSTERN_REFUSALS"

/* Variables the secrets of a run may read, at most. */
#define SC_MAX_SECRET_VARS 128

struct sc_run {
	char dir[PATH_MAX];
	char engdir[PATH_MAX]; /* DIR/engine: what CMD's jail binds in */
	char refusals[PATH_MAX]; /* DIR/refusals: the engine's refusal lines */
	int refusals_fd;     /* open on it for every engine, or -1 */
	char sock[PATH_MAX];
	char listen[PATH_MAX + 8];
	char bridge[PATH_MAX];
	int sigfd;
	uid_t engine_uid;    /* 0: the engine keeps our uid */
	int root;            /* started by root */
	uid_t cmd_uid;       /* the command's ids, outside its user namespace */
	gid_t cmd_gid;
	char home[PATH_MAX];  /* CMD's HOME, or "": the caller's */
	int home_fresh;       /* home is SC_JAIL_HOME, made in the jail */
	struct sc_jail *jail;
	int sync;            /* our end of the socket pair with the child */
	pid_t engine, child;
	int engine_status, child_status;
	int engine_done, child_done;
	pid_t self;
	/* Loaded once, before CMD exists, and served by every engine. */
	struct px_engine_opts eo;
	const char *listen_list[1];
	int supervise;       /* CMD runs: an engine's death is a crash */
	struct timespec restarted[SC_ENGINE_RESTARTS]; /* the latest, a ring */
	unsigned nrestarts;
	int learn_fd;        /* --learn: what the engine learned (learn.h), or -1 */
	struct sc_ask_dir ask; /* --ask: the engine's admin socket */
	pid_t prompt;          /* --ask: the prompt on /dev/tty, or 0 */
	struct rlimit core;    /* the caller's RLIMIT_CORE, CMD's again */
	int core_ok;           /* core holds it */
	/* --notices: while CMD runs, what the engine (and we) say goes to
	 * this log, not to the terminal CMD holds; before and after, stderr
	 * shows it too.  Not here: -1. */
	int notes;
	char notes_path[PATH_MAX];
	off_t notes_shown;     /* how much of it stderr has shown */
	int notes_held;        /* some of it was written while CMD ran */
	int term;              /* our stderr, while fd 2 is the log; or -1 */
};

/* Wipe and drop from our environment (px_engine_env_take()'s copy) each
 * variable named in NAMES: once CMD has its copy, no process of ours
 * keeps one. */
static void
sc_env_forget(const char *const *names, size_t n)
{
	size_t i, j, k, len;

	for (i = 0, k = 0; environ != NULL && environ[i] != NULL; i++) {
		len = strcspn(environ[i], "=");
		for (j = 0; j < n; j++)
			if (strlen(names[j]) == len && memcmp(environ[i], names[j], len) == 0)
				break;
		if (j < n) {
			explicit_bzero(environ[i], strlen(environ[i]));
			free(environ[i]);
			continue;
		}
		environ[k++] = environ[i];
	}
	if (environ != NULL)
		environ[k] = NULL;
}

/* Forget the variables the secrets of O's session read their values
 * from, and those --secret named. */
static void
sc_env_forget_secrets(const struct cf_config *cfg, const struct sc_run_opts *o)
{
	const char *names[SC_MAX_SECRET_VARS];
	size_t n = 0, i, k;

	for (i = 0; i < o->n_secrets && n < SC_MAX_SECRET_VARS; i++)
		names[n++] = o->secrets[i];
	for (i = 0; i < cf_config_nsessions(cfg); i++) {
		const struct cf_session *s = cf_config_session(cfg, i);
		for (k = 0; k < cf_session_nsecrets(s) && n < SC_MAX_SECRET_VARS; k++) {
			const char *var = cf_secret_from_env(cf_session_secret(s, k));
			if (var != NULL)
				names[n++] = var;
		}
	}
	sc_env_forget(names, n);
}

static int
sc_find_bridge(const char *given, char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (given != NULL) {
		if ((size_t)snprintf(out, size, "%s", given) >= size)
			return -ENAMETOOLONG;
	} else {
		/* The bridge is installed, and built, next to the sidecar. */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			return -errno;
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash == NULL)
			return -ENOENT;
		*slash = '\0';
		if ((size_t)snprintf(out, size, "%s/postern-bridge", self) >= size)
			return -ENAMETOOLONG;
	}
	if (access(out, X_OK) < 0)
		return -errno;
	return 0;
}

/*
 * CMD's HOME (see run.h).  Root's own HOME is one CMD, never root, could
 * not use: a tool that reads its config there fails on it.
 */
static int
sc_run_home(struct sc_run *r, const struct sc_run_opts *o)
{
	struct passwd *pw;
	struct stat st;
	const char *home;

	r->home[0] = '\0';
	r->home_fresh = 0;
	if (o->home != NULL) {
		if ((size_t)snprintf(r->home, sizeof(r->home), "%s", o->home) >= sizeof(r->home))
			return -ENAMETOOLONG;
		return 0;
	}
	if (!r->root)
		return 0;
	/* A HOME the caller chose for CMD, one CMD may write, stays. */
	home = getenv("HOME");
	if (home != NULL && home[0] == '/' && stat(home, &st) == 0 && S_ISDIR(st.st_mode) &&
	    ((st.st_uid == r->cmd_uid && (st.st_mode & S_IRWXU) == S_IRWXU) ||
	    (st.st_mode & S_IRWXO) == S_IRWXO))
		return 0;
	pw = getpwuid(r->cmd_uid);
	if (pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' &&
	    stat(pw->pw_dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == r->cmd_uid &&
	    (size_t)snprintf(r->home, sizeof(r->home), "%s", pw->pw_dir) < sizeof(r->home))
		return 0;
	snprintf(r->home, sizeof(r->home), "%s", SC_JAIL_HOME);
	r->home_fresh = 1;
	/* An account that says it has no home (nobody, run's default) gets
	 * what it asked for; a quiet run stays quiet. */
	if (pw != NULL && pw->pw_dir != NULL && strcmp(pw->pw_dir, "/nonexistent") == 0)
		return 0;
	sc_logx("warning: uid %u has no home directory of its own%s%s%s; the command's HOME "
	    "is %s, empty and gone at exit (choose one with --home DIR)", (unsigned)r->cmd_uid,
	    pw != NULL && pw->pw_dir != NULL ? " (" : "", pw != NULL && pw->pw_dir != NULL ?
	    pw->pw_dir : "", pw != NULL && pw->pw_dir != NULL ? " is not its)" : "", r->home);
	return 0;
}

/*
 * The engine's options for O, but for the admin socket and --learn's
 * descriptor: the same for run and for run --check.  LISTEN holds the one
 * listener, which replaces the config's.
 */
static void
sc_run_engine_opts(const struct sc_run_opts *o, const char *const *listen,
    struct px_engine_opts *eo)
{
	memset(eo, 0, sizeof(*eo));
	eo->config_path = o->config_path;
	eo->extra_allow = o->allow;
	eo->n_extra_allow = o->n_allow;
	eo->extra_secrets = o->secrets;
	eo->n_extra_secrets = o->n_secrets;
	eo->extra_listen = listen;
	eo->n_extra_listen = 1;
	eo->replace_listen = 1;
	eo->ready_fd = -1;
	eo->session_name = o->session_name;
	eo->serve_session = o->session;
	eo->report = o->report;
	eo->ask = o->ask;
	/* A person at a terminal: refusals as plain lines on stderr, not
	 * JSON audit lines mixed into CMD's output. */
	eo->human = 1;
	/* Read once, at start, and never again: the file may belong to the
	 * user CMD runs as, and CMD must not be able to widen its own policy
	 * by editing it, not even by then killing the engine (an engine
	 * started after a crash serves this same snapshot).  So the file is
	 * not held to StrictModes either. */
	eo->load_once = 1;
}

int
sc_run_check(const struct sc_run_opts *o)
{
	static const char *listen[] = { "unix:/run/postern/run.sock" };
	struct px_engine_opts eo;
	int code;

	sc_run_engine_opts(o, listen, &eo);
	if (o->ask)
		eo.admin = "unix:/run/postern/ask.sock";
	code = px_engine_check(&eo, "(run's own socket, made when run starts)");
	if (code == 0 && o->settings_path != NULL)
		printf("use it with: postern-sidecar run --settings %s -- CMD\n", o->settings_path);
	else if (code == 0 && o->config_path != NULL)
		printf("use it with: postern-sidecar run -c %s%s%s -- CMD\n", o->config_path,
		    o->session != NULL ? " --session " : "", o->session != NULL ? o->session : "");
	return code;
}

/*
 * For a root caller: the uid the engine runs as, the config's [proxy] user
 * or else 65532 (the container mode's default proxy uid).  Not nobody:
 * that is the command's own default identity, and the two must differ,
 * so that the command owns none of the engine's files.  Returns 0, or exit
 * status 2 after printing the config's errors.
 */
static int
sc_engine_uid(const struct sc_run_opts *o, uid_t *uid)
{
	static const char *const placeholder[] = { "unix:/run/postern/run.sock" };
	const struct cf_proxy_settings *p;
	struct cf_config *cfg;

	*uid = SC_RUN_ENGINE_UID;
	if (o->config_path == NULL)
		return 0;
	/* Judged with the overrides the engine will get (the listener is a
	 * placeholder: nothing is bound here). */
	cfg = sc_config_load(o->config_path, o->allow, o->n_allow, placeholder, 1, o->session);
	if (cfg == NULL)
		return 2;
	p = cf_config_proxy(cfg);
	if (p->has_user && p->user != 0)
		*uid = p->user;
	cf_config_free(cfg);
	return 0;
}

/* Nonzero when a process of uid UID (not root) may pass through DIR. */
static int
sc_dir_searchable(const char *dir, uid_t uid)
{
	struct stat st;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (uid == 0 || st.st_uid == uid)
		return (st.st_mode & S_IXUSR) != 0;
	return (st.st_mode & S_IXOTH) != 0;
}

static int
sc_make_dir(struct sc_run *r)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct sockaddr_un sun;

	/* Only an absolute, existing runtime directory of our own is used;
	 * anything else falls back to /tmp (mkdtemp makes the name
	 * unpredictable and the directory 0700).  A root caller's engine runs
	 * as another uid, which must be able to pass through the base (root's
	 * own runtime directory is 0700). */
	if (base == NULL || base[0] != '/' || access(base, W_OK | X_OK) < 0 ||
	    (r->engine_uid != 0 && !sc_dir_searchable(base, r->engine_uid)))
		base = "/tmp";
	if ((size_t)snprintf(r->dir, sizeof(r->dir), "%s/postern-run.XXXXXX", base) >=
	    sizeof(r->dir))
		return -ENAMETOOLONG;
	if (mkdtemp(r->dir) == NULL) {
		r->dir[0] = '\0';
		return -errno;
	}
	snprintf(r->engdir, sizeof(r->engdir), "%s/engine", r->dir);
	snprintf(r->refusals, sizeof(r->refusals), "%s/refusals", r->dir);
	/* r->sock is far longer than sun_path: a truncated name is refused
	 * as too long for a socket address too. */
	snprintf(r->sock, sizeof(r->sock), "%s/proxy.sock", r->engdir);
	if (bs_unix_addr(&sun, NULL, r->sock) < 0)
		return -ENAMETOOLONG;
	snprintf(r->listen, sizeof(r->listen), "unix:%s", r->sock);
	return 0;
}

static void
sc_remove_dir(struct sc_run *r)
{
	if (r->dir[0] == '\0')
		return;
	if (unlink(r->sock) < 0 && errno != ENOENT)
		sc_logerr(errno, "cannot remove %s", r->sock);
	if (unlink(r->refusals) < 0 && errno != ENOENT)
		sc_logerr(errno, "cannot remove %s", r->refusals);
	if (rmdir(r->engdir) < 0 && errno != ENOENT)
		sc_logerr(errno, "cannot remove %s", r->engdir);
	if (rmdir(r->dir) < 0)
		sc_logerr(errno, "cannot remove %s", r->dir);
	r->dir[0] = '\0';
}

static int
sc_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	ssize_t n;
	size_t len = strlen(text);

	if (fd < 0) {
		err = -errno;
		sc_logerr(err, "cannot open %s", path);
		return err;
	}
	n = write(fd, text, len);
	if (n != (ssize_t)len) {
		err = n < 0 ? -errno : -EIO;
		sc_logerr(err, "cannot write %s", path);
	}
	close(fd);
	return err;
}

/* Write the id maps of PID (0: ourselves), a process in a user namespace
 * of its own: UID and GID onto themselves, nothing else, and no
 * setgroups(2) in there. */
static int
sc_write_maps(pid_t pid, uid_t uid, gid_t gid)
{
	char who[32], path[64], map[64];
	int err;

	if (pid == 0)
		snprintf(who, sizeof(who), "self");
	else
		snprintf(who, sizeof(who), "%ld", (long)pid);
	snprintf(path, sizeof(path), "/proc/%s/uid_map", who);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	err = sc_write_file(path, map);
	if (err < 0)
		return err;
	snprintf(path, sizeof(path), "/proc/%s/setgroups", who);
	err = sc_write_file(path, "deny\n");
	if (err < 0)
		return err;
	snprintf(path, sizeof(path), "/proc/%s/gid_map", who);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return sc_write_file(path, map);
}

/*
 * fork(2) into new namespaces at once, as bubblewrap does: with
 * CLONE_NEWPID the child is PID 1 of its namespace, with no process in
 * between to supervise.  No stack is given, so the child runs on a copy of
 * ours, as after fork().
 */
static pid_t
sc_clone(int flags)
{
#if defined(__s390__) || defined(__CRIS__)
	return (pid_t)syscall(SYS_clone, NULL, (long)(flags | SIGCHLD));
#else
	return (pid_t)syscall(SYS_clone, (long)(flags | SIGCHLD), NULL, NULL, NULL, NULL);
#endif
}

/*
 * The child cannot ask getppid() whether its parent is still there: in a
 * PID namespace of its own its parent is outside, pid 0.  It asks the
 * socket pair instead; our end closes when we die.  Exits when we are gone.
 */
static void
sc_child_check_parent(int fd)
{
	char byte;
	ssize_t n;

	n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
		_exit(SC_RUN_SETUP_FAILED);
}

/* Send or wait for the one byte of the handshake with the parent. */
/* One byte between the command child and us over the socket pair. */
static int
sc_sync_send(int fd, char byte)
{
	ssize_t n;

	do
		n = send(fd, &byte, 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -EPIPE;
}

static int
sc_sync_wait(int fd, char *byte)
{
	char got;
	ssize_t n;

	do
		n = recv(fd, &got, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return -EPIPE;
	if (byte != NULL)
		*byte = got;
	return 0;
}

/* What a root caller's child says once its namespaces are built: it
 * entered a user namespace whose maps we must write, or it has none. */
#define SC_SYNC_USERNS 'u'
#define SC_SYNC_NO_USERNS 'n'

/*
 * The refusals file: made empty in DIR, which CMD never sees, and opened
 * once; every engine appends its refusal lines through this descriptor
 * (proxy/flow/notice.h), never by the path, so that nothing CMD does to a path
 * can make us write elsewhere.  CMD reads it at SC_RUN_REFUSALS.  A run
 * without it still runs.
 */
static void
sc_refusals_open(struct sc_run *r)
{
	r->refusals_fd = open(r->refusals, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (r->refusals_fd < 0 || fchmod(r->refusals_fd, 0644) < 0) {
		sc_logerr(errno, "warning: cannot create %s; the command is not told why its "
		    "requests are refused", r->refusals);
		if (r->refusals_fd >= 0)
			close(r->refusals_fd);
		r->refusals_fd = -1;
		return;
	}
	r->eo.refusals = 1;
	r->eo.refusals_fd = r->refusals_fd;
}

/* In the command child, before the jail hides DIR: a detached copy of
 * the refusals file's mount, once it is sure to be the file the engines
 * write (the same inode), or -1. */
static int
sc_refusals_take(const struct sc_run *r)
{
	struct stat a, b;
	int fd;

	if (r->refusals_fd < 0)
		return -1;
	fd = open_tree(AT_FDCWD, r->refusals, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd < 0) {
		sc_logerr(errno, "warning: cannot take %s", r->refusals);
		return -1;
	}
	if (fstat(fd, &a) < 0 || fstat(r->refusals_fd, &b) < 0 || !S_ISREG(a.st_mode) ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		sc_logx("warning: %s is not the file made for the command", r->refusals);
		close(fd);
		return -1;
	}
	return fd;
}

/* Show the file taken (FD) at SC_RUN_REFUSALS, read-only: CMD can read
 * it, not write it, and cannot move it away.  Returns 0 or -1. */
static int
sc_refusals_attach(int fd)
{
	struct mount_attr attr;
	int f;

	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	    MOUNT_ATTR_NOEXEC;
	if (mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		sc_logerr(errno, "warning: cannot make %s read-only", SC_RUN_REFUSALS);
		return -1;
	}
	f = open(SC_RUN_REFUSALS, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (f < 0 || close(f) < 0 ||
	    move_mount(fd, "", AT_FDCWD, SC_RUN_REFUSALS, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		sc_logerr(errno, "warning: cannot bind the refusals file at %s", SC_RUN_REFUSALS);
		return -1;
	}
	return 0;
}

/* The command child, PID 1 of its namespaces: never returns. */
/*
 * Point CMD's resolver at the bridge's DNS stub: /etc/resolv.conf, in
 * CMD's private mount namespace only, becomes a read-only file saying
 * "nameserver 127.0.0.1" (SC_JAIL_DIR is a fresh tmpfs, ours).  No search
 * domain and no other server: a name goes to the stub or nowhere.  Without
 * a file to cover, CMD resolves nothing, and is told so.
 */
static void
sc_run_resolv_conf(void)
{
	static const char text[] = "# postern-sidecar run: the bridge's DNS stub\n"
	    "nameserver 127.0.0.1\n";
	const char *path = SC_JAIL_DIR "/resolv.conf";
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1)) {
		sc_logerr(errno, "warning: cannot write %s", path);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	if (mount(path, "/etc/resolv.conf", NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, "/etc/resolv.conf", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
	    MS_NODEV, NULL) < 0)
		sc_logerr(errno, "warning: cannot bind %s over /etc/resolv.conf; programs that "
		    "ignore HTTP_PROXY will not resolve names", path);
}

static void
sc_command_child(struct sc_run *r, const struct sc_run_opts *o, int fd)
{
	int root = r->root;
	char userns, **argv;
	struct br_env *env;
	size_t n = 0, i, a;
	int err, left = 0, refusals, shown = 0;

	/* CMD dumps core as it would without us; and an unprivileged child
	 * writes its id maps through /proc/self, which is root's in a
	 * process that is not dumpable.  The values we hold stay out of
	 * such a core: the secure heap is MADV_DONTDUMP. */
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (r->core_ok)
		(void)setrlimit(RLIMIT_CORE, &r->core);
	/* SIGKILL: the bridge relays to a socket that is about to vanish, and
	 * the bridge passes its own death on to CMD. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(SC_RUN_SETUP_FAILED);
	sc_child_check_parent(fd);
	sc_child_signals_reset();
	if (!root) {
		/* Map our own ids onto themselves, so CMD keeps its uid and
		 * its files keep their owner; setgroups must be denied before
		 * an unprivileged gid_map (user_namespaces(7)). */
		if (sc_write_maps(0, r->cmd_uid, r->cmd_gid) < 0)
			_exit(SC_RUN_SETUP_FAILED);
	}
	/* Bring lo up here, while we hold CAP_NET_ADMIN over the new
	 * namespace: after exec as a non-root uid the bridge has none. */
	err = br_link_up_lo(NULL);
	if (err < 0) {
		sc_logerr(err, "cannot bring the loopback interface up");
		_exit(SC_RUN_SETUP_FAILED);
	}
	/* Transparent capture (postern-bridge(8)): the synthetic range made
	 * local and the low ports bindable, while we hold CAP_NET_ADMIN;
	 * without it CMD still runs, reaching only what honours HTTP_PROXY. */
	err = br_link_capture();
	if (err < 0)
		sc_logx("warning: transparent capture is off: cannot ready the namespace: %s",
		    strerror(-err));
	refusals = sc_refusals_take(r);
	if (sc_jail_build(r->jail, r->engdir, r->bridge) < 0)
		_exit(SC_RUN_SETUP_FAILED);
	if (refusals >= 0) {
		shown = sc_refusals_attach(refusals) == 0;
		close(refusals);
	}
	/* On the jail's own /run: nothing to remove on the host. */
	if (r->home_fresh && (mkdir(SC_JAIL_HOME, 0700) < 0 ||
	    chown(SC_JAIL_HOME, r->cmd_uid, r->cmd_gid) < 0 || chmod(SC_JAIL_HOME, 0700) < 0)) {
		sc_logerr(errno, "cannot make %s for the command", SC_JAIL_HOME);
		_exit(SC_RUN_SETUP_FAILED);
	}
	if (r->home[0] != '\0' && setenv("HOME", r->home, 1) < 0)
		_exit(SC_RUN_SETUP_FAILED);
	if (err == 0)
		sc_run_resolv_conf();
	if (root) {
		/* Real root made every namespace so far, and owns them; the
		 * user namespace comes last and holds nothing but CMD.  Its
		 * maps must be written from outside: only there is the
		 * CAP_SETUID that maps ids other than our own. */
		if (setgroups(0, NULL) < 0) {
			sc_logerr(errno, "cannot drop the supplementary groups");
			_exit(SC_RUN_SETUP_FAILED);
		}
		userns = SC_SYNC_USERNS;
		if (unshare(CLONE_NEWUSER) < 0) {
			/*
			 * The kernel refuses a user namespace to a chrooted
			 * process, root too (a build root, a rescue shell),
			 * and where they are switched off (ENOSPC: none
			 * allowed; EINVAL: not built in).  CMD then runs
			 * without one, as the same non-root uid, set below
			 * by real root: that setresuid leaves no capability,
			 * the bounding set is empty and no_new_privs is set,
			 * and every namespace it runs in is real root's, so
			 * CMD holds no more than it would with one.
			 */
			if (errno != EPERM && errno != ENOSPC && errno != EINVAL) {
				sc_logerr(errno, "cannot create a user namespace");
				_exit(SC_RUN_SETUP_FAILED);
			}
			userns = SC_SYNC_NO_USERNS;
		}
		if (sc_sync_send(fd, userns) < 0 || sc_sync_wait(fd, NULL) < 0)
			_exit(SC_RUN_SETUP_FAILED);
	}
	/* Empty the bounding set while we still hold CAP_SETPCAP: nothing
	 * CMD runs can ever gain a capability, whatever file capabilities or
	 * set-uid bits it finds. */
	err = br_priv_drop_bounding(&left);
	if (err == 0 && left != 0)
		err = -EPERM;
	if (err < 0) {
		sc_logerr(err, "cannot empty the capability bounding set");
		_exit(SC_RUN_SETUP_FAILED);
	}
	if (root) {
		if (setresgid(r->cmd_gid, r->cmd_gid, r->cmd_gid) < 0 ||
		    setresuid(r->cmd_uid, r->cmd_uid, r->cmd_uid) < 0) {
			sc_logerr(errno, "cannot become uid %u gid %u", (unsigned)r->cmd_uid,
			    (unsigned)r->cmd_gid);
			_exit(SC_RUN_SETUP_FAILED);
		}
		/* A change of uid cleared the parent-death signal. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			_exit(SC_RUN_SETUP_FAILED);
		sc_child_check_parent(fd);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		sc_logerr(errno, "cannot set no_new_privs");
		_exit(SC_RUN_SETUP_FAILED);
	}
	while (o->argv[n] != NULL)
		n++;
	argv = calloc(n + 8 + 2 * o->n_env + 2 * o->n_forwards, sizeof(*argv));
	/* Only what the bridge would keep for CMD (bridge/env.h), --env's
	 * names among it: the names travel in the bridge's argv, the values
	 * only in its environment, which it wipes before it starts CMD. */
	env = br_env_new(environ, o->env, o->n_env, NULL);
	if (argv == NULL || env == NULL)
		_exit(SC_RUN_SETUP_FAILED);
	a = 0;
	argv[a++] = (char *)"postern-bridge";
	argv[a++] = (char *)"--connect";
	argv[a++] = (char *)SC_JAIL_SOCK;
	/* The bridge asks the engine for the session's placeholders and
	 * CAs (the session request) before CMD starts, as it does for a
	 * host proxy. */
	for (i = 0; i < o->n_env; i++) {
		argv[a++] = (char *)"--env";
		argv[a++] = (char *)o->env[i];
	}
	/* Ours, whatever a variable of that name held. */
	if (shown && br_env_set(env, SC_RUN_REFUSALS_VAR, SC_RUN_REFUSALS) == 0) {
		argv[a++] = (char *)"--env";
		argv[a++] = (char *)SC_RUN_REFUSALS_VAR;
	}
	/* The bridge listens for each, and asks the engine, like any client. */
	for (i = 0; i < o->n_forwards; i++) {
		argv[a++] = (char *)"--forward";
		argv[a++] = (char *)o->forwards[i];
	}
	argv[a++] = (char *)"--";
	for (i = 0; i < n; i++)
		argv[a++] = o->argv[i];
	/* The bridge is PID 1 from here on: it reaps, and when it exits the
	 * kernel ends every process left in the namespace. */
	execve(SC_JAIL_BRIDGE, argv, br_env_vector(env));
	sc_logerr(errno, "cannot run %s", r->bridge);
	_exit(errno == ENOENT ? 127 : 126);
}

/* Read signals and reap children until WANT (a pid of ours) is done or the
 * timeout (ms, -1 for none) passes.  Forwards SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT to the command child.  Returns 0, or -ETIMEDOUT. */
static int
sc_run_wait(struct sc_run *r, pid_t want, int timeout_ms, int *got_signal)
{
	struct timespec start, now;
	struct signalfd_siginfo si;
	struct pollfd pfd;
	int left = timeout_ms, rc, status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if ((want == r->engine && r->engine_done) ||
		    (want == r->child && r->child_done))
			return 0;
		/* The caller starts another engine, or gives up. */
		if (want == r->child && r->supervise && r->engine_done)
			return 0;
		pfd.fd = r->sigfd;
		pfd.events = POLLIN;
		rc = poll(&pfd, 1, left);
		if (rc < 0 && errno != EINTR)
			return -errno;
		while (bs_sigfd_read(r->sigfd, &si) == 1) {
			if (si.ssi_signo == SIGCHLD)
				continue;
			if (got_signal != NULL)
				*got_signal = (int)si.ssi_signo;
			/* A signal the terminal sent (SI_KERNEL) already
			 * reached CMD's process group; do not double it. */
			if (r->child > 0 && !r->child_done && si.ssi_code != SI_KERNEL)
				kill(r->child, (int)si.ssi_signo);
		}
		/* Reap everything, ours or not (we may be PID 1). */
		while ((pid = bs_reap_one(&status)) > 0) {
			if (pid == r->engine) {
				r->engine_done = 1;
				r->engine_status = status;
			} else if (pid == r->child) {
				r->child_done = 1;
				r->child_status = status;
			}
		}
		if (timeout_ms >= 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			left = timeout_ms - (int)((now.tv_sec - start.tv_sec) * 1000 +
			    (now.tv_nsec - start.tv_nsec) / 1000000);
			if (left <= 0)
				return ((want == r->engine && r->engine_done) ||
				    (want == r->child && r->child_done)) ? 0 : -ETIMEDOUT;
		}
	}
}

static void
sc_stop_engine(struct sc_run *r)
{
	if (r->engine <= 0 || r->engine_done)
		return;
	kill(r->engine, SIGTERM);
	if (sc_run_wait(r, r->engine, SC_ENGINE_STOP_MS, NULL) == 0)
		return;
	sc_logx("the proxy engine did not stop in time; killing it");
	kill(r->engine, SIGKILL);
	sc_run_wait(r, r->engine, -1, NULL);
}

/* Wait for the engine's ready byte; returns 0 when ready, else the exit
 * status to give (the engine's own start-up status, or 128+N on a signal). */
static int
sc_wait_ready(struct sc_run *r, int rfd)
{
	struct timespec start, now;
	struct pollfd pfd[2];
	int left = SC_ENGINE_READY_MS, sig = 0, rc;
	char byte;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pfd[0].fd = rfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = r->sigfd;
		pfd[1].events = POLLIN;
		rc = poll(pfd, 2, left);
		if (rc < 0 && errno != EINTR)
			return SC_RUN_SETUP_FAILED;
		if (rc > 0 && pfd[0].revents) {
			do
				n = read(rfd, &byte, 1);
			while (n < 0 && errno == EINTR);
			if (n == 1)
				return 0;
			/* EOF without the byte: the engine failed to start. */
			sc_run_wait(r, r->engine, -1, NULL);
			return r->engine_done ? (bs_exit_code(r->engine_status) ?
			    bs_exit_code(r->engine_status) : 1) : 1;
		}
		if (rc > 0 && pfd[1].revents) {
			sc_run_wait(r, -1, 0, &sig);
			if (sig != 0)
				return 128 + sig;
			if (r->engine_done)
				return bs_exit_code(r->engine_status) ?
				    bs_exit_code(r->engine_status) : 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = SC_ENGINE_READY_MS - (int)((now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0) {
			sc_logx("the proxy engine did not become ready in %d s",
			    SC_ENGINE_READY_MS / 1000);
			return 1;
		}
	}
}

/*
 * --connect: what the engine would be, a relay.  It listens on R->sock as
 * the engine would, 0660 in the directory of CMD's group, and carries each
 * connection to the central proxy, the token's preface first (read by
 * sc_run_connect_check() before CMD existed; bridge/upstream.h).  CMD's
 * jail holds the socket, never the token.  Returns the exit status.
 */
static int
sc_relay_serve(struct sc_run *r, const struct sc_run_opts *o)
{
	struct sockaddr_un sun;
	struct br_relay *rl;
	socklen_t len;
	int fd, err;

	rl = br_relay_new(o->connect);
	if (rl == NULL || bs_unix_addr(&sun, &len, r->sock) < 0) {
		sc_logerr(rl == NULL ? errno : ENAMETOOLONG, "--connect %s", o->connect);
		return 1;
	}
	/* A relay that died left its socket file. */
	(void)unlink(r->sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	umask(0177);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, len) < 0 || chmod(r->sock, 0660) < 0 ||
	    listen(fd, SOMAXCONN) < 0 || (err = br_relay_adopt(rl, fd)) < 0) {
		sc_logerr(errno, "cannot listen on %s", r->sock);
		return 1;
	}
	if (write(r->eo.ready_fd, "R", 1) != 1)
		return 1;
	close(r->eo.ready_fd);
	return br_relay_run(rl) < 0 ? 1 : 0;
}

/*
 * Fork an engine serving R->eo (the snapshot loaded before CMD started) on
 * R->sock and wait until it is ready.  Returns 0, or the exit status to
 * give (see sc_wait_ready()).
 */
static int
sc_engine_start(struct sc_run *r, const struct sc_run_opts *o)
{
	int pipefd[2], code, err;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		sc_logerr(errno, "pipe");
		return SC_RUN_SETUP_FAILED;
	}
	fflush(stdout);
	fflush(stderr);
	r->engine_done = 0;
	r->engine_status = 0;
	r->engine = fork();
	if (r->engine < 0) {
		sc_logerr(errno, "fork");
		r->engine = 0;
		close(pipefd[0]);
		close(pipefd[1]);
		return SC_RUN_SETUP_FAILED;
	}
	if (r->engine == 0) {
		/* Its own session: a ^C at the terminal is for CMD, not for
		 * the proxy it still needs; the sidecar stops the engine
		 * itself once CMD is gone. */
		setsid();
		sc_child_die_with_parent(r->self, SIGTERM);
		sc_child_signals_reset();
		close(pipefd[0]);
		close(r->sigfd);
		if (r->sync >= 0)
			close(r->sync);
		/* The proxy never needs what is meant for CMD. */
		sc_env_forget(o->env, o->n_env);
		if (r->notes >= 0) {
			if (dup2(r->notes, STDERR_FILENO) < 0)
				_exit(1);
			close(r->notes);
		}
		r->eo.ready_fd = pipefd[1];
		/* Never serve as root.  We drop here rather than let the
		 * engine do it, because a change of uid clears the
		 * parent-death signal; set again afterwards, it keeps a
		 * SIGKILLed sidecar from leaving a proxy behind.  The engine
		 * then finds itself already the config's user. */
		if (r->engine_uid != 0) {
			err = bs_become(r->engine_uid, (gid_t)r->engine_uid);
			if (err < 0) {
				sc_logerr(err, "cannot drop to uid %u", (unsigned)r->engine_uid);
				_exit(1);
			}
			sc_child_die_with_parent(r->self, SIGTERM);
		}
		_exit(o->connect != NULL ? sc_relay_serve(r, o) : sc_engine_run(&r->eo));
	}
	close(pipefd[1]);
	code = sc_wait_ready(r, pipefd[0]);
	close(pipefd[0]);
	return code;
}

/* "signal 9" or "status 1": how the engine ended. */
static void
sc_status_text(int status, char *buf, size_t size)
{
	if (WIFSIGNALED(status))
		snprintf(buf, size, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, size, "status %d", WEXITSTATUS(status));
}

/*
 * The engine died while CMD runs: start another from the same snapshot, on
 * the same socket path, unless SC_ENGINE_RESTARTS were already started in
 * the last SC_ENGINE_RESTART_WINDOW_S seconds.  CMD's bridge connects
 * anew for each connection, through the directory its jail binds in, so
 * its next connection reaches the new engine.  Returns 0 when one serves,
 * -1 after saying why CMD must stop.
 */
static int
sc_engine_restart(struct sc_run *r, const struct sc_run_opts *o)
{
	struct timespec now, *oldest;
	unsigned i, recent = 0;
	char how[32];
	int code;

	sc_status_text(r->engine_status, how, sizeof(how));
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (i = 0; i < SC_ENGINE_RESTARTS && i < r->nrestarts; i++)
		if (now.tv_sec - r->restarted[i].tv_sec < SC_ENGINE_RESTART_WINDOW_S)
			recent++;
	oldest = &r->restarted[r->nrestarts % SC_ENGINE_RESTARTS];
	if (recent >= SC_ENGINE_RESTARTS) {
		sc_logx("the proxy engine died (%s), and it was restarted %d times in the "
		    "last %d s already; stopping the command", how, SC_ENGINE_RESTARTS,
		    SC_ENGINE_RESTART_WINDOW_S);
		return -1;
	}
	*oldest = now;
	r->nrestarts++;
	/* What a killed engine leaves is its socket file; the new one
	 * replaces it (a stale socket nobody accepts on). */
	code = sc_engine_start(r, o);
	if (code != 0) {
		sc_logx("the proxy engine died (%s) and could not be restarted (status %d); "
		    "stopping the command", how, code);
		return -1;
	}
	sc_logx("the proxy engine died (%s); restarted it (%u of %d)", how, recent + 1,
	    SC_ENGINE_RESTARTS);
	return 0;
}

/*
 * --notices auto: a file when CMD holds the terminal, that is when our
 * stdin and stderr are one terminal and we are in its foreground (CMD
 * inherits both).  With stdin not a terminal, --ask asks on it: the notices
 * stay there too.
 */
static int
sc_notices_to_file(const struct sc_run_opts *o)
{
	struct stat in, err;
	pid_t fg;

	if (o->notices != SC_NOTICES_AUTO)
		return o->notices == SC_NOTICES_FILE;
	if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO) || fstat(STDIN_FILENO, &in) < 0 ||
	    fstat(STDERR_FILENO, &err) < 0 || in.st_rdev != err.st_rdev)
		return 0;
	fg = tcgetpgrp(STDERR_FILENO);
	return fg > 0 && fg == getpgrp();
}

/*
 * Make the notices' log, BASE/notices-PID.log, 0600: BASE is
 * $XDG_RUNTIME_DIR/postern when that is our directory under /run, else
 * /tmp/postern-UID.  CMD's jail has fresh, empty /run and /tmp: it never
 * sees the file.  BASE must be ours and nobody else's to write, so the
 * name (a dead run's, of the same pid, is replaced) is safe to open.
 * Returns 0 or -errno, with the path in R->notes_path either way.
 */
static int
sc_notices_open(struct sc_run *r)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char real[PATH_MAX], base[PATH_MAX];
	uid_t me = geteuid();
	struct stat st;

	if (xdg == NULL || realpath(xdg, real) == NULL || strncmp(real, "/run/", 5) != 0 ||
	    stat(real, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != me ||
	    (size_t)snprintf(base, sizeof(base), "%s/postern", real) >= sizeof(base))
		snprintf(base, sizeof(base), "/tmp/postern-%u", (unsigned)me);
	snprintf(r->notes_path, sizeof(r->notes_path), "%s", base);
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(base, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != me || (st.st_mode & 022) != 0)
		return -EPERM;
	if ((size_t)snprintf(r->notes_path, sizeof(r->notes_path), "%s/notices-%ld.log", base,
	    (long)r->self) >= sizeof(r->notes_path))
		return -ENAMETOOLONG;
	r->notes = open(r->notes_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	return r->notes < 0 ? -errno : 0;
}

/* Copy to stderr what the log got since stderr last showed it. */
static void
sc_notices_show(struct sc_run *r)
{
	char buf[4096];
	ssize_t n, w, off;

	if (r->notes < 0)
		return;
	fflush(stderr);
	while ((n = pread(r->notes, buf, sizeof(buf), r->notes_shown)) > 0) {
		for (off = 0; off < n; off += w) {
			w = write(STDERR_FILENO, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				break;
		}
		r->notes_shown += n;
	}
}

/* CMD starts (ON) or has ended: our own stderr goes to the log meanwhile,
 * and what was written there then stays there. */
static void
sc_notices_hold(struct sc_run *r, int on)
{
	off_t end;

	if (r->notes < 0 || (r->term >= 0) == on)
		return;
	fflush(stderr);
	if (on) {
		sc_notices_show(r);
		r->term = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (r->term >= 0 && dup2(r->notes, STDERR_FILENO) < 0) {
			close(r->term);
			r->term = -1;
		}
		return;
	}
	(void)dup2(r->term, STDERR_FILENO);
	close(r->term);
	r->term = -1;
	end = lseek(r->notes, 0, SEEK_END);
	if (end > r->notes_shown) {
		r->notes_held = 1;
		r->notes_shown = end;
	}
}

/* The engine is gone: its summary to stderr, and where the rest is. */
static void
sc_notices_close(struct sc_run *r)
{
	if (r->notes < 0)
		return;
	sc_notices_hold(r, 0);
	sc_notices_show(r);
	if (r->notes_held)
		fprintf(stderr, "postern: what was said while the command ran: %s\n",
		    r->notes_path);
	else
		(void)unlink(r->notes_path);
	close(r->notes);
	r->notes = -1;
}

/*
 * --ask, once the engine serves: say how to answer, and when CMD cannot
 * own the terminal (our stdin is not one) but there is one to ask on, ask
 * there ourselves, in a child (sidecar/ask.h), so that nothing here waits
 * for a person.  With stdin a terminal, CMD may be a full-screen program:
 * a question printed there would be lost in it, or break it.
 */
static void
sc_run_ask_start(struct sc_run *r)
{
	char other[64] = "";
	const char *sudo = geteuid() == 0 && getenv("SUDO_UID") != NULL ? "sudo " : "";
	int tty = -1;

	if (sc_ask_count_runs(r->self) > 0)
		snprintf(other, sizeof(other), " --pid %ld", (long)r->self);
	if (!isatty(STDIN_FILENO))
		tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (tty >= 0) {
		r->prompt = sc_ask_prompt_start(r->ask.sock, tty);
		close(tty);
		if (r->prompt < 0) {
			sc_logerr(errno, "cannot start the prompt");
			r->prompt = 0;
		}
	}
	fprintf(stderr, "postern: ask mode: %sanswer in another terminal with: "
	    "%spostern-sidecar ask%s\n", r->prompt > 0 ? "questions come on this terminal; or " : "",
	    sudo, other);
}

/*
 * Nonzero when the allow rule R names a loopback address (127.0.0.0/8,
 * ::1, localhost) on a port no --forward of O asks for: CMD's loopback is
 * its own, so such a rule alone lets nothing in the sandbox reach it.
 */
static int
sc_loopback_unforwarded(const struct sc_run_opts *o, const struct cf_rule *r)
{
	static const struct in6_addr one = IN6ADDR_LOOPBACK_INIT;
	struct br_forward f;
	const char *colon;
	size_t i;
	unsigned long port;

	if (!r->port_given)
		return 0;
	if (!((r->kind == CF_PAT_NET4 && r->prefix >= 8 &&
	    (ntohl(r->net.v4.s_addr) >> 24) == 127) ||
	    (r->kind == CF_PAT_NET6 && r->prefix == 128 &&
	    memcmp(&r->net.v6, &one, sizeof(one)) == 0) ||
	    (r->kind == CF_PAT_EXACT && strcmp(r->name, "localhost") == 0)))
		return 0;
	for (i = 0; i < o->n_forwards; i++) {
		if (br_forward_parse(o->forwards[i], &f, NULL) < 0 ||
		    (colon = strrchr(f.target, ':')) == NULL)
			continue;
		port = strtoul(colon + 1, NULL, 10);
		if (port >= r->port_lo && port <= r->port_hi)
			return 0;
	}
	return 1;
}

/* A loopback port in --allow without its --forward: say so at start,
 * before CMD fails with a bare "connection refused". */
static void
sc_hint_forward(const struct sc_run_opts *o)
{
	struct cf_rule r;
	const char *s, *why;
	size_t i, n;

	for (i = 0; i < o->n_allow; i++) {
		for (s = o->allow[i]; *s != '\0'; s += n + (s[n] == ',')) {
			while (*s == ' ' || *s == '\t')
				s++;
			n = cf_rule_item_len(s);
			if (n == 0 || cf_rule_parse(s, n, CF_RULE_ALLOW, &r, &why) != 0)
				continue;
			if (sc_loopback_unforwarded(o, &r))
				sc_logx("hint: --allow '%.*s' names a loopback port, but %s:%u in "
				    "the sandbox is its own: to reach this host's, also pass "
				    "--forward %u", (int)n, s, r.kind == CF_PAT_NET6 ? "[::1]" :
				    "127.0.0.1", r.port_lo, r.port_lo);
			cf_rule_clear(&r);
		}
	}
}

/* Says at start what --env, --secret and --allow will not do.  Returns 0,
 * or exit status 2 for an --env that would hand CMD a secret's value. */
static int
sc_run_check_env(const struct sc_run_opts *o)
{
	size_t i, j;

	for (i = 0; i < o->n_env; i++) {
		for (j = 0; j < o->n_secrets; j++)
			if (strcmp(o->env[i], o->secrets[j]) == 0) {
				sc_logx("--env %s and --secret %s: the command would get the real value; "
				    "give only --secret", o->env[i], o->env[i]);
				return 2;
			}
	}
	sc_hint_forward(o);
	for (i = 0; i < o->n_env; i++)
		if (getenv(o->env[i]) == NULL)
			sc_logx("warning: --env %s: not set here, so the command does not get it",
			    o->env[i]);
	return 0;
}

/*
 * --connect tcp:ADDR:PORT and --token-file: the options that would ask an
 * engine for something are refused (the central proxy's config decides),
 * and the token is read now, before CMD exists.  Returns 0 or 2 after
 * saying why.
 */
static int
sc_run_connect_check(const struct sc_run_opts *o)
{
	struct br_upstream up;
	const char *why = NULL;
	char tw[200];

	if (o->connect == NULL) {
		if (o->token_file == NULL)
			return 0;
		sc_logx("--token-file is for --connect tcp:ADDR:PORT");
		return 2;
	}
	if (br_upstream_parse(o->connect, &up, &why) < 0 || !up.tcp) {
		sc_logx("--connect %s: a central proxy's tcp:ADDR:PORT (%s)", o->connect,
		    why != NULL ? why : "not tcp:");
		return 2;
	}
	if (o->config_path != NULL || o->n_allow > 0 || o->n_secrets > 0 || o->ask || o->learn ||
	    o->report || o->session != NULL) {
		sc_logx("--connect: the central proxy's config decides; --config, --allow, --secret, "
		    "--ask, --learn, --report and --session do not apply");
		return 2;
	}
	if (o->token_file != NULL && br_upstream_token(o->token_file, tw, sizeof(tw)) < 0) {
		sc_logx("--token-file %s: %s", o->token_file, tw);
		return 2;
	}
	return 0;
}

/* The host paths CMD's jail shows: --socket and --bind.  Returns 0 or
 * exit status 2 after saying why. */
static int
sc_run_jail_paths(struct sc_run *r, const struct sc_run_opts *o)
{
	size_t i;
	int err;

	for (i = 0; i < o->n_sockets; i++) {
		err = sc_jail_keep(r->jail, o->sockets[i]);
		if (err < 0) {
			sc_logerr(err, "--socket %s", o->sockets[i]);
			return 2;
		}
	}
	for (i = 0; i < o->n_binds; i++) {
		err = sc_jail_bind(r->jail, o->binds[i]);
		if (err < 0) {
			if (err == -EPERM)
				sc_logx("--bind %s: / and what is under /run, /proc or /dev "
				    "are the sandbox's own", o->binds[i]);
			else
				sc_logerr(err, "--bind %s", o->binds[i]);
			return 2;
		}
	}
	return 0;
}

/* The bridge, the engine's and CMD's ids, and the namespaces CMD's child
 * is cloned with (*FLAGS).  Returns 0 or an exit status after saying why. */
static int
sc_run_ids(struct sc_run *r, const struct sc_run_opts *o, int *flags)
{
	int err;

	err = sc_find_bridge(o->bridge, r->bridge, sizeof(r->bridge));
	if (err < 0) {
		sc_logerr(err, "cannot find postern-bridge%s%s (give it with --bridge PATH)",
		    r->bridge[0] ? " at " : "", r->bridge);
		return SC_RUN_SETUP_FAILED;
	}
	if (geteuid() == 0) {
		err = sc_engine_uid(o, &r->engine_uid);
		if (err != 0)
			return err;
		r->cmd_uid = o->uid;
		r->cmd_gid = o->gid;
		/* Same uid, same files: CMD would own the engine's socket
		 * directory, and every other session's of that uid. */
		if (r->cmd_uid == r->engine_uid || r->cmd_uid == 0) {
			sc_logx("the command cannot run as uid %u: %s; choose another with --uid",
			    (unsigned)r->cmd_uid, r->cmd_uid == 0 ? "never as root" :
			    "the proxy engine runs as that uid ([proxy] user)");
			return 2;
		}
		r->root = 1;
		*flags = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
	} else {
		/* Read here: in its new user namespace, before its maps are
		 * written, the child is the overflow uid to itself. */
		r->cmd_uid = geteuid();
		r->cmd_gid = getegid();
		*flags = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID |
		    CLONE_NEWIPC;
	}
	return 0;
}

/* CMD's home, the run's socket directory and the notices' log.  Returns
 * 0 or an exit status after saying why. */
static int
sc_run_dirs(struct sc_run *r, const struct sc_run_opts *o)
{
	int err;

	err = sc_run_home(r, o);
	if (err < 0) {
		sc_logerr(err, "--home %s", o->home);
		return 2;
	}
	err = sc_make_dir(r);
	if (err < 0) {
		sc_logerr(err, "cannot create the socket directory");
		return SC_RUN_SETUP_FAILED;
	}
	/* The engine creates, removes and (after a crash) replaces its socket
	 * in DIR/engine as that uid; DIR stays 0700, so on the host only it
	 * (and root, running CMD) can reach the socket.  CMD reaches it
	 * through DIR/engine, which its jail binds in: a directory, not the
	 * socket file, so that the socket of an engine started after a crash
	 * is the one CMD finds.  Started by root, DIR/engine is CMD's group's
	 * and set-group-ID, so that each socket the engine makes there (0660)
	 * is born CMD's group's. */
	if (sc_notices_to_file(o) && (err = sc_notices_open(r)) < 0) {
		sc_logerr(err, "warning: cannot make the notices' log %s; they come here",
		    r->notes_path);
	}
	if (mkdir(r->engdir, 0700) < 0) {
		sc_logerr(errno, "cannot create %s", r->engdir);
		return SC_RUN_SETUP_FAILED;
	}
	if (r->engine_uid != 0 &&
	    (chown(r->dir, r->engine_uid, (gid_t)r->engine_uid) < 0 ||
	    chown(r->engdir, r->engine_uid, r->cmd_gid) < 0 || chmod(r->engdir, 02750) < 0)) {
		sc_logerr(errno, "cannot give %s to uid %u", r->dir, (unsigned)r->engine_uid);
		return SC_RUN_SETUP_FAILED;
	}
	return 0;
}

/* The engine's options and its config, loaded once here.  Returns 0 or an
 * exit status after saying why. */
static int
sc_run_config(struct sc_run *r, const struct sc_run_opts *o)
{
	const struct cf_proxy_settings *p;
	int err;

	r->listen_list[0] = r->listen;
	sc_run_engine_opts(o, r->listen_list, &r->eo);
	/* --connect: no engine, no config; the central proxy's decides. */
	if (o->connect != NULL)
		return 0;
	if (o->ask) {
		/* The engine binds its admin socket there, as its own uid. */
		err = sc_ask_dir_make(&r->ask, r->self, r->engine_uid != 0 ? r->engine_uid : (uid_t)-1);
		if (err == 0)
			err = sc_jail_cover(r->jail, r->ask.dir);
		if (err < 0)
			return SC_RUN_SETUP_FAILED;
		r->eo.admin = r->ask.listen;
	}
	sc_refusals_open(r);
	/* Every engine, a restarted one too, leaves its summary here. */
	if (o->learn) {
		r->learn_fd = sc_learn_open();
		if (r->learn_fd < 0) {
			sc_logerr(r->learn_fd, "--learn: cannot make a memory file");
			return SC_RUN_SETUP_FAILED;
		}
		r->eo.learn = 1;
		r->eo.learn_fd = r->learn_fd;
	}
	r->eo.config = px_engine_load(&r->eo);
	if (r->eo.config == NULL)
		return 2;
	/* The secrets' values are in the snapshot now: no process of ours
	 * keeps them in its environment (CMD gets the placeholders from the
	 * engine, through the bridge's session request). */
	sc_env_forget_secrets(r->eo.config, o);
	p = cf_config_proxy(r->eo.config);
	if (r->root && (p->has_user && p->user != 0 ? p->user : SC_RUN_ENGINE_UID) != r->engine_uid) {
		sc_logx("%s changed while run was starting; try again", o->config_path);
		return 2;
	}
	return 0;
}

/*
 * Clones CMD's child in FLAGS' namespaces and lets it go on once its ids
 * are mapped.  SYNC is the pair the two talk over; what is left open of it
 * is closed by the caller.  Returns 0 or a negative errno after saying why
 * (the child, if any, is in r->child).
 */
static int
sc_run_spawn(struct sc_run *r, const struct sc_run_opts *o, int flags, int sync[2])
{
	char userns = SC_SYNC_NO_USERNS;
	int err;

	/* The host's sockets, read in our network namespace: the child's
	 * will have none. */
	err = sc_jail_scan(r->jail);
	if (err < 0) {
		sc_logerr(err, "cannot read /proc/self/net/unix");
		return err;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0) {
		err = errno;
		sc_logerr(err, "socketpair");
		return -err;
	}
	fflush(stdout);
	fflush(stderr);
	r->child = sc_clone(flags);
	if (r->child < 0) {
		err = errno;
		if (flags & CLONE_NEWUSER) {
			sc_logerr(err, "cannot create a user namespace and the namespaces it owns");
			if (err == EPERM || err == ENOSPC || err == EINVAL || err == EACCES)
				sc_logx("unprivileged user namespaces are not allowed on this "
				    "system (see user.max_user_namespaces, "
				    "kernel.unprivileged_userns_clone, or an AppArmor/SELinux "
				    "policy); run as root or ask the administrator to allow them");
		} else {
			sc_logerr(err, "cannot create the network, mount, PID and IPC namespaces");
		}
		r->child = 0;
		return -err;
	}
	if (r->child == 0) {
		close(sync[0]);
		sc_command_child(r, o, sync[1]);
	}
	close(sync[1]);
	sync[1] = -1;
	r->sync = sync[0];
	/* The child has its copy of the values; ours are no longer needed. */
	sc_env_forget(o->env, o->n_env);
	/* A root caller's child waits in its new user namespace for its ids,
	 * which only we can give it.  When that fails, it has already said
	 * why and exited, or it is waiting for maps that will not come. */
	if (!(flags & CLONE_NEWUSER) && (sc_sync_wait(r->sync, &userns) < 0 ||
	    (userns == SC_SYNC_USERNS &&
	    sc_write_maps(r->child, r->cmd_uid, r->cmd_gid) < 0) ||
	    sc_sync_send(r->sync, 'x') < 0))
		return -ECHILD;
	return 0;
}

/* CMD runs.  An engine that dies under it is replaced, within bounds;
 * past them, or when no engine can start, CMD is stopped.  Returns CMD's
 * exit status. */
static int
sc_run_supervise(struct sc_run *r, const struct sc_run_opts *o)
{
	int code;

	r->supervise = 1;
	sc_notices_hold(r, 1);
	for (;;) {
		sc_run_wait(r, r->child, -1, NULL);
		if (r->child_done)
			break;
		if (sc_engine_restart(r, o) < 0) {
			r->supervise = 0;
			/* Not left waiting on 503s; reaped already when it
			 * ended while we tried. */
			if (!r->child_done)
				kill(r->child, SIGTERM);
		}
	}
	r->supervise = 0;
	sc_notices_hold(r, 0);
	code = bs_exit_code(r->child_status);
	/* The bridge ends what CMD left running; if the bridge itself was
	 * killed, those orphans came to us (subreaper) and end here. */
	if (bs_signal_children(SIGKILL, r->engine) > 0)
		sc_run_wait(r, -1, 200, NULL);
	return code;
}

/* Stops and removes whatever the run started or made, in every state it
 * can be left in. */
static void
sc_run_cleanup(struct sc_run *r, const struct sc_run_opts *o, int sync[2])
{
	r->supervise = 0;
	sc_notices_hold(r, 0);
	if (r->child > 0 && !r->child_done) {
		kill(r->child, SIGKILL);
		sc_run_wait(r, r->child, -1, NULL);
	}
	if (r->prompt > 0) {
		kill(r->prompt, SIGTERM);
		(void)waitpid(r->prompt, NULL, 0);
	}
	sc_stop_engine(r);
	sc_notices_close(r);
	/* The engine is gone, its summary written: CMD ran, so tell it. */
	if (r->learn_fd >= 0 && r->child > 0)
		(void)sc_learn_finish(r->learn_fd, o->learn_file, o->settings_path != NULL ?
		    "the postern.ini of run --settings FILE --print-config" : o->config_path);
	if (r->learn_fd >= 0)
		close(r->learn_fd);
	if (r->refusals_fd >= 0)
		close(r->refusals_fd);
	sc_remove_dir(r);
	sc_ask_dir_remove(&r->ask);
	cf_config_free(r->eo.config);
	if (r->sigfd >= 0)
		close(r->sigfd);
	if (r->sync >= 0)
		close(r->sync);
	if (sync[1] >= 0)
		close(sync[1]);
	sc_jail_free(r->jail);
}

int
sc_run_main(const struct sc_run_opts *o)
{
	struct sc_run r;
	int sync[2] = { -1, -1 };
	int flags = 0, code;

	memset(&r, 0, sizeof(r));
	r.sigfd = -1;
	r.sync = -1;
	r.learn_fd = -1;
	r.notes = -1;
	r.term = -1;
	r.refusals_fd = -1;
	r.self = getpid();
	/* We and every engine hold the secrets' values from here on (in
	 * the environment, then the snapshot): no core file, no ptrace by
	 * the same uid (px_engine_harden()). */
	r.core_ok = getrlimit(RLIMIT_CORE, &r.core) == 0;
	px_engine_harden();
	if (px_engine_env_take() < 0) {
		sc_logx("out of memory");
		return SC_RUN_SETUP_FAILED;
	}
	code = sc_run_check_env(o);
	if (code == 0)
		code = sc_run_connect_check(o);
	if (code != 0)
		return code;
	r.jail = sc_jail_new();
	if (r.jail == NULL) {
		sc_logerr(errno, "out of memory");
		return SC_RUN_SETUP_FAILED;
	}
	if ((code = sc_run_jail_paths(&r, o)) != 0 ||
	    (code = sc_run_ids(&r, o, &flags)) != 0 ||
	    (code = sc_run_dirs(&r, o)) != 0 ||
	    (code = sc_run_config(&r, o)) != 0)
		goto out;
	code = SC_RUN_SETUP_FAILED;
	/* Whatever CMD leaves behind comes back to us, not to init. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	r.sigfd = sc_sigfd_open();
	if (r.sigfd < 0) {
		sc_logerr(r.sigfd, "cannot set up signals");
		goto out;
	}
	code = sc_engine_start(&r, o);
	sc_notices_show(&r);
	if (code != 0)
		goto out;
	code = SC_RUN_SETUP_FAILED;
	if (o->ask)
		sc_run_ask_start(&r);
	if (sc_run_spawn(&r, o, flags, sync) < 0)
		goto out;
	code = sc_run_supervise(&r, o);
out:
	sc_run_cleanup(&r, o, sync);
	return code;
}
