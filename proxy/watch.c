/*
 * proxy/watch.c: inotify on the config file's directory (see watch.h).
 *
 * Why the directory and not the file: a watch on the file follows its
 * inode, and both an editor's save (write a temporary, rename it over the
 * file) and a ConfigMap update (a new timestamped directory, then a new
 * `..data` symlink renamed over the old one) leave the old inode behind
 * unchanged.  The directory sees every one of those as an event naming the
 * entry that changed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include <event2/event.h>
#include <openssl/evp.h>

#include "base/text.h"
#include "conf/config.h"
#include "proxy/core/log.h"
#include "proxy/reload.h"
#include "proxy/core/server.h"
#include "proxy/watch.h"

/* A config file larger than this is not ours to hash (the loader refuses
 * it anyway); the reload then decides. */
#define WATCH_MAX_FILE (4u << 20)

struct px_watch {
	struct px_server *srv;
	px_reload_fn *reload;     /* what a completed change asks for */
	void *reload_arg;
	int fd;
	int wd;
	struct event *ev;         /* inotify readable */
	struct event *timer;      /* debounce */
	struct event *rest;       /* EV resumes: see read_cb() */
	int ours;                 /* an event drained was about the config */
	struct timeval first;     /* first event of the current burst */
	int pending;
	int writing;              /* the file's inode was written, not yet closed */
	int touched;              /* an event on the file since the last reload began */
	int recheck;              /* a refusal put off: the next one is taken */
	char *dir;
	char *name;               /* the config file's entry in DIR */
};

/*
 * The first 12 hex digits of the SHA-256 of PATH's content (the form
 * cf_config_hash() has), in OUT[13].  Returns 0, or a negative errno when
 * the file cannot be read whole.
 */
static int
file_hash(const char *path, char out[13])
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[8192];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = NULL;
	size_t total = 0;
	ssize_t n;
	int fd, rc = -EIO;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		goto out;
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (total > WATCH_MAX_FILE || EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			goto out;
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen < 6)
		goto out;
	bs_hex(md, 6, out);
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return rc;
}

static int drain(struct px_watch *w);
static void schedule(struct px_watch *w);
static int written_since(void *arg);
static int refused_again(void *arg);

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_watch *w = arg;
	struct px_server *srv = w->srv;
	time_t when;
	int ok;
	char h[13];

	(void)fd;
	(void)what;
	w->pending = 0;
	if (px_server_stopping(srv))
		return;
	/* Events queued since the loop last read them (a truncate that came
	 * with this timer) count before the file is read. */
	if (drain(w))
		schedule(w);
	/* A writer opened the file again after the close that armed us: its
	 * own close will. */
	if (w->writing) {
		log_debug("%s is being written: waiting for its close", px_server_config_path(srv));
		return;
	}
	/* An editor that touched the file without changing it, or a write
	 * that put back the content in force, needs no reload (and no log
	 * line, and no generation).  After a refused reload it does: the
	 * status should say the file is fine again. */
	(void)px_server_last_reload(srv, &when, &ok);
	if (ok && file_hash(px_server_config_path(srv), h) == 0 &&
	    strcmp(h, cf_config_hash(px_server_config(srv))) == 0) {
		log_debug("%s changed on disk, but not its content (sha256 %s)",
		    px_server_config_path(srv), h);
		return;
	}
	{
		struct px_reload_probe probe = {
			.written = written_since, .refused = refused_again, .arg = w,
		};

		w->touched = 0;
		w->reload(w->reload_arg, NULL, "inotify", &probe);
	}
}

/*
 * Restart the quiet period on every event that completes a change, so
 * that several arriving together (a rename and the chmod after it, the
 * steps of a ConfigMap swap) are read once; but never push the reload more
 * than PX_WATCH_MAX_DELAY_MS past the first, so that a change is in force
 * within a second even when something keeps replacing the file.  A write
 * still under way never gets here (see classify()).
 */
static void
schedule(struct px_watch *w)
{
	struct timeval now, tv;
	long waited_ms, delay_ms = PX_WATCH_DEBOUNCE_MS;

	event_base_gettimeofday_cached(px_server_base(w->srv), &now);
	if (!w->pending) {
		w->first = now;
		w->pending = 1;
	}
	waited_ms = (now.tv_sec - w->first.tv_sec) * 1000L + (now.tv_usec - w->first.tv_usec) / 1000L;
	if (waited_ms + delay_ms > PX_WATCH_MAX_DELAY_MS)
		delay_ms = PX_WATCH_MAX_DELAY_MS - waited_ms;
	if (delay_ms < 0)
		delay_ms = 0;
	tv.tv_sec = delay_ms / 1000;
	tv.tv_usec = (delay_ms % 1000) * 1000;
	event_add(w->timer, &tv);
}

/*
 * What EV means for the config, and the writer state it leaves in W.
 * Returns 1 when EV completes a change (schedule a reload), 0 otherwise.
 *
 * Only a complete file is ever read.  IN_MODIFY (truncate or write) marks
 * the file as being written, and nothing reloads until that writer's
 * IN_CLOSE_WRITE: a writer that stalls half-way, for however long, leaves
 * the old config in force, never a valid prefix of the new one (which
 * could lack a deny_hosts line or a session).  A rename into place
 * (IN_MOVED_TO, the ConfigMap's ..data swap) brings a new inode that is
 * complete by construction; so does a symlink or a hard link made in
 * place (IN_CREATE of something that is not a fresh regular file, which
 * its creator is still writing).  A removal reloads too: that reload fails
 * and keeps the old rules, and says so.  A chmod or chown (IN_ATTRIB)
 * counts only when no write is under way.
 */
static int
classify(struct px_watch *w, const struct inotify_event *ev)
{
	struct stat st;
	char path[PATH_MAX];

	if (ev->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
		w->ours = 1;
		return 1;
	}
	if (ev->len == 0)
		return 0;
	/* ev->name is NUL-padded to ev->len by the kernel. */
	if (strcmp(ev->name, w->name) != 0 && strcmp(ev->name, "..data") != 0)
		return 0;
	w->ours = 1;
	w->touched = 1;
	w->recheck = 0;           /* a new change: its refusal is read twice too */
	if (ev->mask & IN_MODIFY) {
		w->writing = 1;
		return 0;
	}
	if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)) {
		/* Closed, or not the inode that was being written any more. */
		w->writing = 0;
		return 1;
	}
	if (ev->mask & IN_CREATE) {
		if (snprintf(path, sizeof(path), "%s/%s", w->dir, ev->name) < (int)sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
			/* A new file: its creator holds it open and its
			 * IN_CLOSE_WRITE follows. */
			w->writing = 1;
			return 0;
		}
		w->writing = 0;
		return 1;
	}
	if (ev->mask & IN_ATTRIB)
		return !w->writing;
	return 0;
}

/* Read and classify every queued event; returns 1 when one completes a
 * change. */
static int
drain(struct px_watch *w)
{
	char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	int hit = 0;

	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		size_t off = 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* The kernel hands out whole events only; still, check that
		 * every record lies inside what was read before using it. */
		while (off + sizeof(struct inotify_event) <= (size_t)n) {
			const struct inotify_event *ev = (const void *)(buf + off);
			size_t rec = sizeof(*ev) + ev->len;
			if (rec > (size_t)n - off)
				break;
			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
				log_warnx("the config directory %s went away: changes are no longer "
				    "picked up by themselves (SIGHUP still works)", w->dir);
			if (ev->mask & IN_Q_OVERFLOW)
				log_warnx("inotify queue overflow on %s: reloading to be sure", w->dir);
			hit |= classify(w, ev);
			off += rec;
		}
	}
	return hit;
}

/*
 * Other files of the directory are written too, often: an audit log kept
 * next to the config queues an IN_MODIFY for every line, and the loop
 * woke for each (an epoll event and two read(2)s a request).  After a
 * wake that brought only such events, EV rests for PX_WATCH_REST_MS: the
 * kernel queues (and merges) what comes meanwhile, and it is read, in
 * order, when EV resumes.  The config's own events are never read later
 * than that, far inside the debounce; the reload's probes drain the
 * queue themselves whenever they ask.
 */
#define PX_WATCH_REST_MS 20

static void
rest_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_watch *w = arg;

	(void)fd;
	(void)what;
	(void)event_add(w->ev, NULL);
}

static void
read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_watch *w = arg;
	struct timeval tv = { 0, PX_WATCH_REST_MS * 1000 };

	(void)fd;
	(void)what;
	w->ours = 0;
	if (drain(w))
		schedule(w);
	if (!w->ours && event_del(w->ev) == 0 && event_add(w->rest, &tv) != 0)
		(void)event_add(w->ev, NULL);
}

/* The reload's probe: did anything write to the file since the reload
 * began?  The events queued meanwhile say so (and a change they complete
 * schedules the next reload). */
static int
written_since(void *arg)
{
	struct px_watch *w = arg;

	if (drain(w))
		schedule(w);
	return w->touched || w->writing;
}

/*
 * The reload's probe before a refusal: a truncate in place shows in the
 * file a moment before its IN_MODIFY is queued (notify_change() sets the
 * size, then notifies), so a load can read the empty or half-written file
 * with no event to say so; under load (reload-load.sh) that is a refused
 * reload that nobody wrote.  The first refusal of a change is put off and
 * the file read again after the quiet period; the refusal is taken when it
 * is read the same with no event between, or when the events say it was
 * written meanwhile (then the writer's close asks again, as written_since()
 * says).  A real mistake is refused PX_WATCH_DEBOUNCE_MS later, no more.
 */
static int
refused_again(void *arg)
{
	struct px_watch *w = arg;

	if (written_since(w))
		return 1;
	if (w->recheck) {
		w->recheck = 0;
		return 0;
	}
	w->recheck = 1;
	schedule(w);
	return 1;
}

struct px_watch *
px_watch_new(struct px_server *srv, px_reload_fn *reload, void *reload_arg)
{
	struct px_watch *w;
	char *slash;
	int e;

	if (px_server_config_path(srv) == NULL) {
		errno = ENOENT;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->srv = srv;
	w->reload = reload;
	w->reload_arg = reload_arg;
	w->fd = -1;
	w->dir = strdup(px_server_config_path(srv));
	if (w->dir == NULL)
		goto fail;
	slash = strrchr(w->dir, '/');
	if (slash == NULL) {
		w->name = strdup(w->dir);
		free(w->dir);
		w->dir = strdup(".");
	} else {
		w->name = strdup(slash + 1);
		if (slash == w->dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (w->dir == NULL || w->name == NULL)
		goto fail;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		goto fail;
	/*
	 * CLOSE_WRITE: an in-place write is complete.  MODIFY: one is under
	 * way (it holds reloads back, see classify()).  MOVED_TO: a rename
	 * over the file, or the ConfigMap's new ..data.  CREATE: a new file
	 * or symlink made in place.  DELETE and MOVED_FROM: the file went away
	 * (the reload then fails and says so; the old rules stay).  ATTRIB: a
	 * chmod that makes an unreadable file readable again.
	 */
	w->wd = inotify_add_watch(w->fd, w->dir, IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO |
	    IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF |
	    IN_ONLYDIR);
	if (w->wd < 0) {
		log_warn("inotify on %s", w->dir);
		goto fail;
	}
	w->ev = event_new(px_server_base(srv), w->fd, EV_READ | EV_PERSIST, read_cb, w);
	w->timer = evtimer_new(px_server_base(srv), timer_cb, w);
	w->rest = evtimer_new(px_server_base(srv), rest_cb, w);
	if (w->ev == NULL || w->timer == NULL || w->rest == NULL || event_add(w->ev, NULL) != 0)
		goto fail;
	log_info("watching %s for changes to %s", w->dir, w->name);
	return w;
fail:
	e = errno ? errno : ENOMEM;
	px_watch_free(w);
	errno = e;
	return NULL;
}

void
px_watch_free(struct px_watch *w)
{
	if (w == NULL)
		return;
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->timer != NULL)
		event_free(w->timer);
	if (w->rest != NULL)
		event_free(w->rest);
	if (w->fd >= 0)
		close(w->fd);
	free(w->dir);
	free(w->name);
	free(w);
}
