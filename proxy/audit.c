/*
 * proxy/audit.c: the audit log (see audit.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "base/text.h"
#include "proxy/audit.h"
#include "proxy/lock.h"
#include "proxy/log.h"

/* Every worker writes to the one log: each line is one write(2) made
 * under this lock, so lines never interleave and stay in the order the
 * lock was taken (lock.h). */
static pthread_mutex_t audit_lock = PX_LOCK_INIT;

struct px_audit {
	char *path; /* NULL for stderr */
	int fd;
	uint64_t lost;
	int warned;
};

static int
open_target(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
}

struct px_audit *
px_audit_open(const char *target)
{
	struct px_audit *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	if (target == NULL || strcmp(target, "stderr") == 0) {
		a->fd = STDERR_FILENO;
		return a;
	}
	a->path = strdup(target);
	if (a->path == NULL) {
		free(a);
		return NULL;
	}
	a->fd = open_target(a->path);
	if (a->fd < 0) {
		int e = errno;
		free(a->path);
		free(a);
		errno = e;
		return NULL;
	}
	return a;
}

int
px_audit_reopen(struct px_audit *a)
{
	PX_LOCKED(&audit_lock);
	int fd;

	if (a->path == NULL)
		return 0;
	fd = open_target(a->path);
	if (fd < 0)
		return -errno;
	close(a->fd);
	a->fd = fd;
	a->warned = 0;
	return 0;
}

int
px_audit_chown(struct px_audit *a, uid_t uid, gid_t gid)
{
	struct stat st;
	char dir[4096], *slash;

	if (a->path == NULL || fstat(a->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if ((st.st_uid != uid || st.st_gid != gid) && fchown(a->fd, uid, gid) != 0) {
		int e = errno;
		log_warn("cannot give the audit log %s to uid %u; SIGUSR1 will not reopen it after rotation",
		    a->path, (unsigned)uid);
		return -e;
	}
	snprintf(dir, sizeof(dir), "%s", a->path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) == 0 && !(st.st_uid == uid && (st.st_mode & S_IXUSR)) &&
	    !(st.st_gid == gid && (st.st_mode & S_IXGRP)) && !(st.st_mode & S_IXOTH))
		log_warnx("%s cannot be searched by uid %u: SIGUSR1 will not reopen the audit log "
		    "after rotation; make it at least 0711", dir, (unsigned)uid);
	return 0;
}

void
px_audit_free(struct px_audit *a)
{
	if (a == NULL)
		return;
	if (a->path != NULL && a->fd >= 0)
		close(a->fd);
	free(a->path);
	free(a);
}

uint64_t
px_audit_lost(const struct px_audit *a)
{
	PX_LOCKED(&audit_lock);
	return a->lost;
}

static void
put(struct px_json *j, const char *s, size_t n)
{
	if (j->overflow || j->len + n + 3 > sizeof(j->buf)) {
		j->overflow = 1;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void
put_key(struct px_json *j, const char *key)
{
	put(j, ",\"", 2);
	put(j, key, strlen(key));
	put(j, "\":", 2);
}

/* "{\"time\":\"YYYY-MM-DDTHH:MM:SS" for one second, kept per thread (the
 * loop's and the admin socket's both write lines): gmtime_r() and the
 * seven-number snprintf() were a third of an audit line's cost, and a
 * busy proxy writes thousands of lines in the same second. */
struct ts_cache {
	time_t sec;
	size_t len;
	char text[48];
};
static _Thread_local struct ts_cache ts_cache = { .sec = (time_t)-1 };

void
px_json_begin(struct px_json *j, const char *event)
{
	struct timeval tv;
	char ms[6];
	long m;

	j->len = 0;
	j->overflow = 0;
	gettimeofday(&tv, NULL);
	if (tv.tv_sec != ts_cache.sec) {
		struct tm tm;
		int n;

		gmtime_r(&tv.tv_sec, &tm);
		n = snprintf(ts_cache.text, sizeof(ts_cache.text),
		    "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		ts_cache.len = n > 0 && (size_t)n < sizeof(ts_cache.text) ? (size_t)n : 0;
		ts_cache.sec = tv.tv_sec;
	}
	put(j, ts_cache.text, ts_cache.len);
	m = (long)(tv.tv_usec / 1000);
	ms[0] = '.';
	ms[1] = (char)('0' + m / 100);
	ms[2] = (char)('0' + m / 10 % 10);
	ms[3] = (char)('0' + m % 10);
	ms[4] = 'Z';
	ms[5] = '"';
	put(j, ms, sizeof(ms));
	px_json_str(j, "event", event);
}

void
px_json_strn(struct px_json *j, const char *key, const char *val, size_t len)
{
	size_t room, need;
	int cut = 0;

	if (val == NULL) {
		put_key(j, key);
		put(j, "null", 4);
		return;
	}
	if (len > 256) {
		len = 256;
		cut = 1;
	}
	put_key(j, key);
	put(j, "\"", 1);
	/* Control and non-ASCII bytes are shown, never passed raw. */
	room = sizeof(j->buf) - j->len;
	if (!j->overflow && room > 2) {
		/* As put(): 3 bytes stay free for what closes the record (the
		 * NUL written at the end of the result takes the first). */
		need = bs_json_escape(val, len, j->buf + j->len, room - 2, 0);
		if (need >= room - 2)
			j->overflow = 1;
		else
			j->len += need;
	} else {
		j->overflow = 1;
	}
	if (cut)
		put(j, "...", 3);
	put(j, "\"", 1);
}

void
px_json_str(struct px_json *j, const char *key, const char *val)
{
	px_json_strn(j, key, val, val ? strlen(val) : 0);
}

void
px_json_num(struct px_json *j, const char *key, int64_t val)
{
	char n[24];
	size_t i = sizeof(n);
	/* By hand, from the last digit: snprintf() cost some 700
	 * instructions a number, five or more a line. */
	uint64_t u = val < 0 ? (uint64_t)0 - (uint64_t)val : (uint64_t)val;

	put_key(j, key);
	do {
		n[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (val < 0)
		n[--i] = '-';
	put(j, n + i, sizeof(n) - i);
}

void
px_json_double(struct px_json *j, const char *key, double val)
{
	char n[32];

	put_key(j, key);
	snprintf(n, sizeof(n), "%.3f", val);
	put(j, n, strlen(n));
}

void
px_json_emit(struct px_json *j, struct px_audit *a)
{
	ssize_t w;

	if (j->overflow) {
		/* Never emit half an object: say so instead. */
		j->len = 0;
		j->overflow = 0;
		put(j, "{\"event\":\"audit_overflow\"", 25);
	}
	j->buf[j->len++] = '}';
	j->buf[j->len++] = '\n';
	if (a == NULL)
		return;
	PX_LOCKED(&audit_lock);
	do {
		w = write(a->fd, j->buf, j->len);
	} while (w < 0 && errno == EINTR);
	if (w != (ssize_t)j->len) {
		a->lost++;
		if (!a->warned) {
			a->warned = 1;
			log_warnx("audit log %s: a line could not be written (%s); counting lost lines, serving on",
			    a->path ? a->path : "stderr", w < 0 ? strerror(errno) : "short write");
		}
	}
}
