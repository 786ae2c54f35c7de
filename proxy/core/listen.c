/*
 * proxy/core/listen.c: UNIX and TCP listeners, with accept back-off on
 * descriptor exhaustion instead of a crash or a busy loop.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/queue.h>
#include <sys/un.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "base/tcp.h"
#include "base/unix.h"
#include "proxy/core/log.h"
#include "proxy/core/prio.h"
#include "proxy/core/server.h"
#include "proxy/core/worker.h"

#define BACKOFF_MS 200
/* Accepts in a row before the listener lets the loop go round: each
 * accept may answer a whole request (read_at_accept() in accept.c), and
 * a client answered at once connects again at once, so without a bound
 * one accept loop would never end and nothing else on the loop run. */
#define ACCEPT_BURST 16

/* One bound listener; it serves the session named SESSION. */
struct px_listener {
	struct px_server *srv;
	struct evconnlistener *lev;
	px_accept_fn *accept;     /* given each accepted client socket */
	struct event *backoff;    /* re-enables accepting after EMFILE or a burst */
	unsigned burst;           /* accepts since the loop last went round */
	char *session;            /* session name, looked up per connection */
	struct cf_listen where;   /* a copy; text owned here */
	int unlink_on_close;      /* we created the UNIX socket file */
	int nodelay;              /* TCP_NODELAY set: accepted sockets inherit it */
	int made_dir;             /* and its directory */
	uid_t uid;                /* the UNIX socket file's owner, group and */
	gid_t gid;                /* mode, as last set (bind or reload) */
	mode_t mode;
	/* workers = N: a copy on another worker's loop of the first
	 * worker's listener SRC (NULL: L is the first worker's own). */
	struct px_listener *src;
	/* A UNIX socket every worker watches takes turns (take_turns()):
	 * TURN, in the first worker's listener, is the worker that accepts
	 * the next connection. */
	int turns;
	unsigned turn;            /* atomic */
	TAILQ_ENTRY(px_listener) entry;
};

/* A server's listeners (px_server_listeners()). */
struct px_listeners {
	TAILQ_HEAD(, px_listener) list;
	int paused;               /* max_connections holds them (conns.c) */
	uint64_t backoffs;        /* accept back-offs, one in 100 logged */
};

struct px_listeners *
px_listeners_new(void)
{
	struct px_listeners *ls = calloc(1, sizeof(*ls));

	if (ls != NULL)
		TAILQ_INIT(&ls->list);
	return ls;
}

void
px_listeners_free(struct px_listeners *ls)
{
	free(ls);
}

static void
accept_cb(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct px_listener *l = arg;

	l->accept(l, fd, sa, salen);
	if (!l->turns && ++l->burst >= ACCEPT_BURST) {
		/* Let the loop go round: the other connections' events
		 * first (the back-off event runs at their priority), then
		 * more accepts.  Under a changelist the listener's
		 * disable and enable in one pass cost no system call. */
		l->burst = 0;
		evconnlistener_disable(lev);
		event_active(l->backoff, EV_TIMEOUT, 1);
	} else if (l->turns) {
		/*
		 * One socket, every worker's: whichever loop woke first would
		 * take a whole burst from the backlog (libevent accepts until
		 * EAGAIN), so the workers take turns, one connection each,
		 * round the ring; the next one is woken to take its turn.
		 */
		struct px_listener *o = l->src != NULL ? l->src : l;
		unsigned n = px_workers_n(px_server_workers(l->srv));
		unsigned next = (px_server_worker(l->srv) + 1) % n;

		__atomic_store_n(&o->turn, next, __ATOMIC_RELEASE);
		evconnlistener_disable(lev);
		px_workers_turn(l->srv, next);
	}
}

/* Whether L may accept now on its worker: not while the listeners are
 * paused or backing off, nor while it is another worker's turn. */
static int
may_accept(const struct px_listener *l)
{
	const struct px_listener *o = l->src != NULL ? l->src : l;

	if (px_server_stopping(l->srv) || px_server_listeners(l->srv)->paused)
		return 0;
	return !l->turns || __atomic_load_n(&o->turn, __ATOMIC_ACQUIRE) == px_server_worker(l->srv);
}

void
px_listeners_take_turn(struct px_server *srv)
{
	struct px_listener *l;

	TAILQ_FOREACH(l, &px_server_listeners(srv)->list, entry)
		if (l->turns && may_accept(l) && !evtimer_pending(l->backoff, NULL))
			evconnlistener_enable(l->lev);
}

static void
backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_listener *l = arg;

	(void)fd;
	(void)what;
	/* Not while max_connections holds every listener. */
	if (may_accept(l))
		evconnlistener_enable(l->lev);
}

/*
 * accept(2) failed.  EMFILE/ENFILE/ENOBUFS/ENOMEM: stop accepting for a
 * moment, so established connections keep working and the pending client
 * waits in the backlog instead of the loop spinning; the process never
 * exits for this.
 */
static void
accept_error_cb(struct evconnlistener *lev, void *arg)
{
	struct px_listener *l = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = { 0, BACKOFF_MS * 1000 };

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		if (px_server_listeners(l->srv)->backoffs++ % 100 == 0)
			log_warnx("%s: cannot accept (%s); pausing this listener for %d ms",
			    l->where.text, strerror(err), BACKOFF_MS);
		evconnlistener_disable(lev);
		event_add(l->backoff, &tv);
		return;
	}
	log_warnx("%s: accept: %s", l->where.text, strerror(err));
}

/* Nonzero when GID is this process's effective or a supplementary gid. */
static int
have_gid(gid_t gid)
{
	gid_t groups[256];
	int n, i;

	if (gid == getegid())
		return 1;
	n = getgroups((int)(sizeof(groups) / sizeof(groups[0])), groups);
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

int
px_listener_perms_check(const struct px_listener *cur, const struct cf_listen *w, char *why,
    size_t size)
{
	uid_t euid = geteuid(), fu, wu;
	gid_t fg, wg;

	if (w->kind != CF_LISTEN_UNIX || euid == 0)
		return 0;
	/* A new file is born ours; a kept one is whoever's it is now. */
	fu = cur != NULL ? cur->uid : euid;
	fg = cur != NULL ? cur->gid : getegid();
	wu = w->has_owner ? w->owner : fu;
	wg = w->has_group ? w->group : fg;
	if (cur != NULL && wu == cur->uid && wg == cur->gid && w->mode == cur->mode)
		return 0;
	if (wu != euid || fu != euid) {
		if (cur == NULL)
			snprintf(why, size, "only root can make a socket owned by uid %u, and the proxy "
			    "runs as uid %u", (unsigned)wu, (unsigned)euid);
		else
			snprintf(why, size, "the socket belongs to uid %u and the proxy runs as uid %u, "
			    "so it cannot change its owner, group or mode", (unsigned)fu, (unsigned)euid);
		return -EPERM;
	}
	if (wg != fg && !have_gid(wg)) {
		snprintf(why, size, "only root can give the socket to gid %u, and the proxy runs "
		    "as uid %u gid %u", (unsigned)wg, (unsigned)euid, (unsigned)getegid());
		return -EPERM;
	}
	return 0;
}

/*
 * Give the socket file at W->path the owner, group and mode W asks for
 * (-1 leaves an id as it is), and record in L what it now has.  Returns 0
 * or a negative errno (logged).
 */
static int
apply_perms(struct px_listener *l, const struct cf_listen *w)
{
	struct stat st;

	if ((w->has_owner || w->has_group) &&
	    lchown(w->path, w->has_owner ? w->owner : (uid_t)-1,
	    w->has_group ? w->group : (gid_t)-1) != 0) {
		log_err("chown %s", w->path);
		return -errno;
	}
	/* Never through a symlink that replaced the socket: as root, that
	 * would change the mode of whatever file it names.  glibc does
	 * AT_SYMLINK_NOFOLLOW through /proc; without /proc, chmod only what
	 * is still a socket. */
	if (fchmodat(AT_FDCWD, w->path, w->mode, AT_SYMLINK_NOFOLLOW) != 0 &&
	    (lstat(w->path, &st) != 0 || !S_ISSOCK(st.st_mode) || chmod(w->path, w->mode) != 0)) {
		log_err("chmod %s", w->path);
		return -errno;
	}
	if (lstat(w->path, &st) != 0) {
		log_err("stat %s", w->path);
		return -errno;
	}
	l->uid = st.st_uid;
	l->gid = st.st_gid;
	l->mode = st.st_mode & 0777;
	return 0;
}

int
px_listener_set_perms(struct px_listener *l, const struct cf_listen *w)
{
	char *text;
	int err;

	/* auth=token follows the snapshot, as the perms do (workers' copies
	 * read the first worker's). */
	l->where.auth_token = w->auth_token;
	if (w->kind != CF_LISTEN_UNIX)
		return 0;
	if ((!w->has_owner || w->owner == l->uid) && (!w->has_group || w->group == l->gid) &&
	    w->mode == l->mode)
		return 0;
	if ((err = apply_perms(l, w)) < 0)
		return err;
	text = strdup(w->text);
	if (text != NULL) {
		free(l->where.text);
		l->where.text = text;
	}
	log_info("reload: %s is now uid %u gid %u mode %04o", w->path, (unsigned)l->uid,
	    (unsigned)l->gid, (unsigned)l->mode);
	return 0;
}

/*
 * Replace the socket file at SUN if it is stale (nobody accepts on it).  A
 * live socket, or anything that is not a socket, is never removed: we only
 * unlink what we can prove is ours to replace.  Returns 0 when the path is
 * free, a negative errno otherwise.
 */
static int
clear_stale(const struct sockaddr_un *sun, socklen_t len)
{
	struct stat st;
	int probe, rc, e;

	if (lstat(sun->sun_path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_errx("%s exists and is not a socket; refusing to replace it", sun->sun_path);
		return -EEXIST;
	}
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -errno;
	rc = connect(probe, (const struct sockaddr *)sun, len);
	e = errno;
	close(probe);
	if (rc == 0) {
		log_errx("%s: another process is serving this socket", sun->sun_path);
		return -EADDRINUSE;
	}
	if (e != ECONNREFUSED) {
		log_err_errno(e, "%s: cannot tell whether the socket is stale", sun->sun_path);
		return -e;
	}
	if (unlink(sun->sun_path) != 0) {
		log_err("unlink stale %s", sun->sun_path);
		return -errno;
	}
	return 0;
}

/*
 * Make DIR and every missing directory above it, each 0755 whatever the
 * umask (the dropped proxy and the sandboxes' uids pass through them).
 * *MADE_DIR is set when DIR itself was made.  Returns 0 when DIR exists,
 * a negative errno (and a logged reason) otherwise.
 */
static int
make_dirs(char *dir, int *made_dir)
{
	struct stat st;
	char *p;
	mode_t old;
	int rc = 0, e = 0, last;

	if (stat(dir, &st) == 0)
		return 0;
	old = umask(0022);
	for (p = dir + 1; rc == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		last = *p == '\0';
		*p = '\0';
		if (mkdir(dir, 0755) == 0) {
			if (last)
				*made_dir = 1;
		} else if (errno != EEXIST) {
			e = errno;
			if (e == EACCES || e == EPERM)
				log_errx("cannot make the directory %s: permission denied: the "
				    "proxy's user (uid %u) cannot create it; make it beforehand, "
				    "or give its parent to that uid", dir, (unsigned)geteuid());
			else
				log_err("mkdir %s", dir);
			rc = -e;
		}
		if (!last)
			*p = '/';
		else
			break;
	}
	umask(old);
	return rc;
}

int
px_unix_bind(const char *path, int *made_dir)
{
	struct sockaddr_un sun;
	socklen_t len;
	char dir[sizeof(sun.sun_path)], *slash;
	int fd, rc;
	mode_t old;

	if (bs_unix_addr(&sun, &len, path) < 0)
		return -ENAMETOOLONG;
	memcpy(dir, sun.sun_path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if ((rc = make_dirs(dir, made_dir)) < 0)
			return rc;
	}
	if ((rc = clear_stale(&sun, len)) < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Born 0600: until the caller has set its owner, group and mode and
	 * called listen(2), nobody but us could connect. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, len);
	umask(old);
	if (rc != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/*
 * Bind a UNIX socket at W->path (px_unix_bind()), give it W's owner, group
 * and mode (0660 unless told), then listen.  Returns the descriptor or a
 * negative errno.
 */
static int
bind_unix(struct px_listener *l, const struct cf_listen *w)
{
	int fd, err;

	fd = px_unix_bind(w->path, &l->made_dir);
	if (fd < 0)
		return fd;
	err = apply_perms(l, w);
	if (err == 0 && listen(fd, 1024) != 0)
		err = -errno;
	if (err < 0) {
		/* The file is ours: do not leave it behind. */
		unlink(w->path);
		close(fd);
		return err;
	}
	return fd;
}

/* Free L, a listener of SRV's list (or never added, ADDED zero). */
static void
listener_free(struct px_server *srv, struct px_listener *l, int added)
{
	if (added)
		TAILQ_REMOVE(&px_server_listeners(srv)->list, l, entry);
	if (l->lev != NULL)
		evconnlistener_free(l->lev);
	if (l->backoff != NULL)
		event_free(l->backoff);
	free(l->where.text);
	free(l->session);
	free(l);
}

/*
 * Set on the listener, so every accepted socket inherits it for free:
 * TCP_NODELAY (with Nagle a relay's second small write waits 40 ms for a
 * delayed ACK) and, on loopback, Reno (base/tcp.h).  1 when TCP_NODELAY is
 * set; 0 leaves it to the first allowed request (start_lookup()).
 */
static int
tcp_listener_opts(int fd)
{
	int one = 1;

	(void)bs_tcp_loopback_reno(fd);
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0;
}

/*
 * workers = N: on worker SRV's loop, a copy of the first worker's listener
 * SRC.  TCP: a socket of its own with SO_REUSEPORT.  UNIX: the same
 * descriptor, closed only by the first worker after every copy is gone.
 * Not a dup(): epoll forgets a descriptor only when its last duplicate
 * closes, and a loop applies its epoll changes late, so the copy's loop
 * would go on being woken for a socket it no longer watches.
 */
static int
copy_open(struct px_server *srv, void *arg)
{
	struct px_listener *src = arg, *l;
	unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC;
	int fd = -1, fd0 = evconnlistener_get_fd(src->lev), one = 1, err = -ENOMEM;

	if (px_server_worker(srv) == 0)
		return 0;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -ENOMEM;
	l->srv = srv;
	l->accept = src->accept;
	l->where = src->where;
	l->where.text = strdup(src->where.text);
	l->session = strdup(src->session);
	l->src = src;
	if (l->where.text == NULL || l->session == NULL)
		goto fail;
	if (src->where.kind == CF_LISTEN_UNIX) {
		fd = fd0;
		flags &= ~(unsigned)LEV_OPT_CLOSE_ON_FREE;
	} else {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		/* The address the first socket got (port 0 asks for one). */
		if (getsockname(fd0, (struct sockaddr *)&ss, &sl) != 0) {
			err = -errno;
			goto fail;
		}
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
		    bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 1024) != 0)) {
			err = -errno;
			close(fd);
			fd = -1;
		} else if (fd < 0)
			err = -errno;
	}
	if (fd < 0) {
		log_err_errno(-err, "worker %u: cannot listen on %s", px_server_worker(srv),
		    src->where.text);
		goto fail;
	}
	if (evutil_make_socket_nonblocking(fd) != 0 ||
	    (l->lev = evconnlistener_new(px_server_base(srv), accept_cb, l, flags, 0, fd)) == NULL) {
		if (fd != fd0)
			close(fd);
		goto fail;
	}
	if ((l->backoff = evtimer_new(px_server_base(srv), backoff_cb, l)) == NULL)
		goto fail;
	(void)event_priority_set(l->backoff, PX_PRI_BULK);
	if (src->where.kind != CF_LISTEN_UNIX)
		l->nodelay = tcp_listener_opts(fd);
	evconnlistener_set_error_cb(l->lev, accept_error_cb);
	l->turns = src->turns;
	if (!may_accept(l))
		evconnlistener_disable(l->lev);
	TAILQ_INSERT_TAIL(&px_server_listeners(srv)->list, l, entry);
	return 0;
fail:
	listener_free(srv, l, 0);
	return err;
}

/* On worker SRV's loop: close its copy of the first worker's listener ARG. */
static int
copy_close(struct px_server *srv, void *arg)
{
	struct px_listener *l, *next;

	if (px_server_worker(srv) == 0)
		return 0;
	for (l = px_listeners_first(srv); l != NULL; l = next) {
		next = px_listener_next(l);
		if (l->src == arg)
			listener_free(srv, l, 1);
	}
	return 0;
}

int
px_listener_open(struct px_server *srv, const struct cf_listen *w, const char *session,
    px_accept_fn *accept)
{
	struct px_listener *l = calloc(1, sizeof(*l));
	unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC;
	int many = px_workers_n(px_server_workers(srv)) > 1;
	int err = -ENOMEM;

	if (l == NULL)
		return -ENOMEM;
	l->srv = srv;
	l->accept = accept;
	l->where = *w;
	l->where.text = strdup(w->text);
	l->session = strdup(session);
	if (l->where.text == NULL || l->session == NULL)
		goto fail;
	if (w->kind == CF_LISTEN_UNIX) {
		char why[256];
		int fd;
		if ((err = px_listener_perms_check(NULL, w, why, sizeof(why))) < 0) {
			if (w->line > 0)
				log_errx("%s:%d: cannot listen on %s: %s", w->file, w->line, w->text, why);
			else
				log_errx("%s: cannot listen on %s: %s", w->file, w->text, why);
			goto fail;
		}
		fd = bind_unix(l, w);
		if (fd < 0) {
			err = fd;
			log_err_errno(-err, "cannot listen on %s", w->text);
			goto fail;
		}
		l->unlink_on_close = 1;
		l->lev = evconnlistener_new(px_server_base(srv), accept_cb, l, flags, -1, fd);
		if (l->lev == NULL) {
			err = -ENOMEM;
			close(fd);
		}
	} else {
		/* With several workers each binds a socket of its own here
		 * (copy_open()); with one, a second proxy on the port is
		 * refused as it always was. */
		l->lev = evconnlistener_new_bind(px_server_base(srv), accept_cb, l,
		    flags | LEV_OPT_REUSEABLE | (many ? LEV_OPT_REUSEABLE_PORT : 0), 1024, (const struct sockaddr *)&w->addr, (int)w->addrlen);
		if (l->lev == NULL) {
			err = errno != 0 ? -errno : -EADDRNOTAVAIL;
			log_err("cannot listen on %s", w->text);
		} else
			l->nodelay = tcp_listener_opts(evconnlistener_get_fd(l->lev));
	}
	if (l->lev == NULL)
		goto fail;
	l->backoff = evtimer_new(px_server_base(srv), backoff_cb, l);
	if (l->backoff == NULL) {
		err = -ENOMEM;
		goto fail;
	}
	(void)event_priority_set(l->backoff, PX_PRI_BULK);
	/* The first worker has the first turn. */
	l->turns = many && w->kind == CF_LISTEN_UNIX;
	evconnlistener_set_error_cb(l->lev, accept_error_cb);
	TAILQ_INSERT_TAIL(&px_server_listeners(srv)->list, l, entry);
	if (many && (err = px_workers_each(srv, copy_open, l)) < 0) {
		px_listener_close(srv, l);
		return err;
	}
	log_info("listening on %s (%s%s)", w->text, w->auth_token ? "sessions by token" : "session ",
	    w->auth_token ? "" : session);
	return 0;
fail:
	if (l->lev != NULL)
		evconnlistener_free(l->lev);
	if (l->backoff != NULL)
		event_free(l->backoff);
	if (l->unlink_on_close)
		unlink(w->path);
	free(l->where.text);
	free(l->session);
	free(l);
	return err;
}

int
px_listeners_open(struct px_server *srv, const struct cf_config *cfg, px_accept_fn *accept)
{
	size_t i, j;
	int err;

	for (i = 0; i < cf_config_nsessions(cfg); i++) {
		const struct cf_session *s = cf_config_session(cfg, i);
		for (j = 0; j < s->nlisten; j++)
			if ((err = px_listener_open(srv, &s->listen[j], s->name, accept)) < 0)
				return err;
	}
	return 0;
}

struct px_listener *
px_listeners_first(const struct px_server *srv)
{
	return TAILQ_FIRST(&px_server_listeners(srv)->list);
}

struct px_listener *
px_listener_next(const struct px_listener *l)
{
	return TAILQ_NEXT(l, entry);
}

const char *
px_listener_session(const struct px_listener *l)
{
	return l->session;
}

struct px_server *
px_listener_server(const struct px_listener *l)
{
	return l->srv;
}

const char *
px_listener_text(const struct px_listener *l)
{
	return l->where.text;
}

int
px_listener_nodelay(const struct px_listener *l)
{
	return l->nodelay;
}

int
px_listener_auth_token(const struct px_listener *l)
{
	return (l->src != NULL ? l->src : l)->where.auth_token;
}

void
px_listener_close(struct px_server *srv, struct px_listener *l)
{
	/* The other workers' copies first, each on its own loop. */
	if (l->src == NULL && px_workers_n(px_server_workers(srv)) > 1)
		(void)px_workers_each(srv, copy_close, l);
	TAILQ_REMOVE(&px_server_listeners(srv)->list, l, entry);
	evconnlistener_free(l->lev);
	event_free(l->backoff);
	if (l->unlink_on_close && unlink(l->where.path) != 0 && errno != ENOENT)
		log_warn("cannot remove %s", l->where.path);
	free(l->where.text);
	free(l->session);
	free(l);
}

void
px_listeners_close(struct px_server *srv)
{
	struct px_listener *l;

	while ((l = px_listeners_first(srv)) != NULL)
		px_listener_close(srv, l);
}

int
px_listener_is(const struct px_listener *l, const struct cf_listen *w, const char *session)
{
	if (strcmp(l->session, session) != 0 || l->where.kind != w->kind)
		return 0;
	if (w->kind == CF_LISTEN_UNIX)
		return strcmp(l->where.path, w->path) == 0;
	return l->where.addrlen == w->addrlen && memcmp(&l->where.addr, &w->addr, w->addrlen) == 0;
}

void
px_listeners_pause(struct px_server *srv, int pause)
{
	struct px_listeners *ls = px_server_listeners(srv);
	struct px_listener *l;

	ls->paused = pause;
	TAILQ_FOREACH(l, &ls->list, entry) {
		if (pause)
			evconnlistener_disable(l->lev);
		else if (may_accept(l))
			evconnlistener_enable(l->lev);
	}
}

int
px_listeners_paused(const struct px_server *srv)
{
	return px_server_listeners(srv)->paused;
}

/*
 * Hand the directories we made for socket files to the uid we drop to, so
 * that the sockets can still be removed on exit (the socket files keep
 * their owner and mode 0660).  Directories that existed
 * before are never touched.
 */
void
px_listeners_chown(struct px_server *srv, uid_t uid, gid_t gid)
{
	struct px_listener *l;

	TAILQ_FOREACH(l, &px_server_listeners(srv)->list, entry) {
		char dir[sizeof(l->where.path)], *slash;
		if (l->where.kind != CF_LISTEN_UNIX)
			continue;
		if (!l->made_dir)
			continue;
		snprintf(dir, sizeof(dir), "%s", l->where.path);
		slash = strrchr(dir, '/');
		if (slash == NULL || slash == dir)
			continue;
		*slash = '\0';
		if (chown(dir, uid, gid) != 0)
			log_warn("chown %s", dir);
	}
	TAILQ_FOREACH(l, &px_server_listeners(srv)->list, entry) {
		char dir[sizeof(l->where.path)], *slash;
		struct stat st;
		if (l->where.kind != CF_LISTEN_UNIX)
			continue;
		snprintf(dir, sizeof(dir), "%s", l->where.path);
		slash = strrchr(dir, '/');
		if (slash == NULL)
			continue;
		*slash = slash == dir ? '/' : '\0';
		if (slash == dir)
			dir[1] = '\0';
		if (stat(dir, &st) != 0)
			continue;
		if (!(st.st_uid == uid && (st.st_mode & S_IWUSR)) &&
		    !(st.st_gid == gid && (st.st_mode & S_IWGRP)) && !(st.st_mode & S_IWOTH))
			log_warnx("%s is not writable by uid %u: %s will be left behind at exit "
			    "(and replaced safely at the next start); give the directory to that uid",
			    dir, (unsigned)uid, l->where.path);
	}
}
