/*
 * proxy/listen.c: UNIX and TCP listeners, with accept back-off on
 * descriptor exhaustion instead of a crash or a busy loop.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "proxy/log.h"
#include "proxy/server.h"

#define BACKOFF_MS 200

static void
accept_cb(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct px_listener *l = arg;

	(void)lev;
	px_conn_accept(l, fd, sa, salen);
}

static void
backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_listener *l = arg;

	(void)fd;
	(void)what;
	if (!l->srv->stopping)
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
		if (l->srv->stats.accept_backoffs++ % 100 == 0)
			log_warnx("%s: cannot accept (%s); pausing this listener for %d ms",
			    l->where.text, strerror(err), BACKOFF_MS);
		evconnlistener_disable(lev);
		event_add(l->backoff, &tv);
		return;
	}
	log_warnx("%s: accept: %s", l->where.text, strerror(err));
}

/*
 * Bind a UNIX socket at PATH with mode 0660.  A stale socket file (nobody
 * accepts on it) is replaced; a live one, or anything that is not a socket,
 * is an error: we never unlink what we cannot prove is ours to replace.
 */
static int
bind_unix(const char *path, int *made_dir)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd = -1, rc;
	mode_t old;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strncpy(sun.sun_path, path, sizeof(sun.sun_path) - 1);

	{
		/* Make the directory if it is missing (one level, 0755). */
		char dir[sizeof(sun.sun_path)];
		char *slash;
		strncpy(dir, path, sizeof(dir) - 1);
		dir[sizeof(dir) - 1] = '\0';
		slash = strrchr(dir, '/');
		if (slash != NULL && slash != dir) {
			*slash = '\0';
			if (mkdir(dir, 0755) == 0)
				*made_dir = 1;
			else if (errno != EEXIST)
				log_warn("mkdir %s", dir);
		}
	}

	if (lstat(path, &st) == 0) {
		int probe;
		if (!S_ISSOCK(st.st_mode)) {
			log_warnx("%s exists and is not a socket; refusing to replace it", path);
			errno = EEXIST;
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe < 0)
			return -1;
		rc = connect(probe, (struct sockaddr *)&sun, sizeof(sun));
		close(probe);
		if (rc == 0) {
			log_warnx("%s: another process is serving this socket", path);
			errno = EADDRINUSE;
			return -1;
		}
		if (errno != ECONNREFUSED) {
			log_warn("%s: cannot tell whether the socket is stale", path);
			return -1;
		}
		if (unlink(path) != 0) {
			log_warn("unlink stale %s", path);
			return -1;
		}
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* The socket file is born 0660: no window where others may connect. */
	old = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc != 0 || chmod(path, 0660) != 0 || listen(fd, 1024) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
px_listener_open(struct px_server *srv, const struct cf_listen *w, const char *session)
{
	struct px_listener *l = calloc(1, sizeof(*l));
	unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC;

	if (l == NULL)
		return -ENOMEM;
	l->srv = srv;
	l->where = *w;
	l->where.text = strdup(w->text);
	l->session = strdup(session);
	if (l->where.text == NULL || l->session == NULL)
		goto fail;
	if (w->kind == CF_LISTEN_UNIX) {
		int fd = bind_unix(w->path, &l->made_dir);
		if (fd < 0) {
			log_warn("cannot listen on %s", w->text);
			goto fail;
		}
		l->unlink_on_close = 1;
		l->lev = evconnlistener_new(srv->base, accept_cb, l, flags, -1, fd);
		if (l->lev == NULL)
			close(fd);
	} else {
		l->lev = evconnlistener_new_bind(srv->base, accept_cb, l,
		    flags | LEV_OPT_REUSEABLE, 1024, (const struct sockaddr *)&w->addr, (int)w->addrlen);
		if (l->lev == NULL)
			log_warn("cannot listen on %s", w->text);
	}
	if (l->lev == NULL)
		goto fail;
	l->backoff = evtimer_new(srv->base, backoff_cb, l);
	if (l->backoff == NULL)
		goto fail;
	evconnlistener_set_error_cb(l->lev, accept_error_cb);
	TAILQ_INSERT_TAIL(&srv->listeners, l, entry);
	log_info("listening on %s (session %s)", w->text, session);
	return 0;
fail:
	if (l->lev != NULL)
		evconnlistener_free(l->lev);
	if (l->unlink_on_close)
		unlink(w->path);
	free(l->where.text);
	free(l->session);
	free(l);
	return -1;
}

int
px_listeners_open(struct px_server *srv, const struct cf_config *cfg)
{
	size_t i, j;

	for (i = 0; i < cf_config_nsessions(cfg); i++) {
		const struct cf_session *s = cf_config_session(cfg, i);
		for (j = 0; j < s->nlisten; j++)
			if (px_listener_open(srv, &s->listen[j], s->name) != 0)
				return -1;
	}
	return 0;
}

void
px_listener_close(struct px_server *srv, struct px_listener *l)
{
	TAILQ_REMOVE(&srv->listeners, l, entry);
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

	while ((l = TAILQ_FIRST(&srv->listeners)) != NULL)
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
	struct px_listener *l;

	TAILQ_FOREACH(l, &srv->listeners, entry) {
		if (pause)
			evconnlistener_disable(l->lev);
		else if (!srv->stopping)
			evconnlistener_enable(l->lev);
	}
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

	TAILQ_FOREACH(l, &srv->listeners, entry) {
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
	TAILQ_FOREACH(l, &srv->listeners, entry) {
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
