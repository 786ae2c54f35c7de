/*
 * proxy/core/audit.c: the audit log (see audit.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <event2/event.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "base/text.h"
#include "proxy/core/audit.h"
#include "proxy/core/lock.h"
#include "proxy/core/log.h"
#include "proxy/core/prio.h"
#include "proxy/proto/auditline.h"
#include "proxy/proto/ocsf.h"

/* Every worker writes to the one log: each write(2) holds whole lines and
 * is made under this lock, so lines never interleave, and one thread's
 * lines stay in the order it made them (lock.h). */
static pthread_mutex_t audit_lock = PX_LOCK_INIT;

/*
 * The lines that may wait (px_json_emit_later()) of one loop's thread,
 * written with one write(2) when the loop pass that made them ends (an
 * event at the connections' priority, made active by the first of them,
 * runs after the callbacks queued ahead of it), or ahead of the next line
 * that may not wait, in its write(2).  A tunnel's close line and the next
 * tunnel's decision line share one system call.
 */
#define BATCH_MAX (32 * 1024)
struct batch {
	struct px_audit *a;
	struct event_base *base;
	struct event *flush;
	int armed;          /* FLUSH is active */
	unsigned lines;     /* in BUF */
	size_t len;
	char buf[BATCH_MAX];
};
static _Thread_local struct batch *batch;

/*
 * The hash chain (proxy/proto/auditline.h) is stepped where lines reach
 * the file, under audit_lock, so that its order is the file's: each
 * write(2) takes its lines chained into OUT, still one system call.
 */
struct px_audit {
	char *path; /* NULL for stderr */
	int fd;
	uint64_t lost;
	int warned;
	int format;             /* PX_AUDIT_JSON or PX_AUDIT_OCSF */
	struct ac_chain chain;
	uint64_t since_checkpoint; /* lines written since the last checkpoint */
	EVP_PKEY *key;          /* NULL: no checkpoints */
	char keyid[AC_KEYID_LEN + 1];
	struct event *tick;     /* the periodic checkpoint */
	char *out;              /* chained lines for one write(2) */
	size_t outcap;
};

static int
open_target(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
}

/* The time as the lines carry it: YYYY-MM-DDTHH:MM:SS.mmmZ. */
static void
iso_now(char out[32])
{
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
	    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000));
}

/* Under audit_lock: LEN bytes at P to the file; a short write counts
 * LINES lost. */
static void
write_raw(struct px_audit *a, const char *p, size_t len, unsigned lines)
{
	ssize_t w;

	do {
		w = write(a->fd, p, len);
	} while (w < 0 && errno == EINTR);
	if (w != (ssize_t)len) {
		a->lost += lines;
		if (!a->warned) {
			a->warned = 1;
			log_warnx("audit log %s: a line could not be written (%s); counting lost lines, serving on",
			    a->path ? a->path : "stderr", w < 0 ? strerror(errno) : "short write");
		}
	}
}

/*
 * Under audit_lock: where the chain goes on in the file A->fd now has
 * open.  A regular file whose last line is a checkpoint this proxy's key
 * signed (at a restart) or the line the chain is at (a reopen of the same
 * file) is continued; an empty file continues the chain when there is one
 * (after rotation: its first line names the previous file's last hash);
 * anything else starts a new chain.  Writes the audit_open line.
 */
static void
chain_open(struct px_audit *a)
{
	char tail[16384], when[32], line[512];
	struct stat st;
	size_t n = 0, len;
	int cont = 0, cut = 0;

	if (a->path != NULL && fstat(a->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		off_t from = st.st_size > (off_t)sizeof(tail) ? st.st_size - (off_t)sizeof(tail) : 0;
		ssize_t r = pread(a->fd, tail, (size_t)(st.st_size - from), from);
		int rfd = -1;

		/* A file opened write-only is read through its path. */
		if (r < 0 && a->path != NULL && (rfd = open(a->path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) >= 0)
			r = pread(rfd, tail, (size_t)(st.st_size - from), from);
		if (rfd >= 0)
			close(rfd);
		n = r > 0 ? (size_t)r : 0;
		if (n > 0 && tail[n - 1] != '\n') {
			cut = 1;
		} else if (n > 1) {
			const char *end = tail + n - 1, *s = end, *why;
			struct ac_line l;
			unsigned char h[AC_HASH_LEN];

			while (s > tail && s[-1] != '\n')
				s--;
			len = (size_t)(end - s);
			if ((s > tail || from == 0) && ac_parse(s, len, &l, &why) == 0 &&
			    ac_hash(s, len, h) == 0) {
				if (a->chain.started && memcmp(h, a->chain.head, AC_HASH_LEN) == 0 &&
				    a->chain.seq == l.seq)
					cont = 1;
				else if (!a->chain.started && l.kind == AC_CHECKPOINT && a->key != NULL &&
				    strcmp(l.keyid, a->keyid) == 0 && ac_sig_ok(a->key, s, l.signed_len, l.sig)) {
					cont = 1;
					memcpy(a->chain.head, h, AC_HASH_LEN);
					a->chain.seq = l.seq;
					a->chain.started = 1;
				}
			}
		}
	} else if (a->chain.started) {
		/* An empty file: the first line of a new file in the chain. */
		cont = 1;
		a->chain.seq = 0;
	}
	iso_now(when);
	line[0] = '\n';
	len = ac_open_line(&a->chain, when, cont, line + cut, sizeof(line) - 1);
	if (len == 0) {
		a->lost++;
		return;
	}
	write_raw(a, line, len + (size_t)cut, 1);
	a->since_checkpoint++;
}

/* Under audit_lock: a checkpoint line, when there is a key and lines
 * since the last one. */
static void
checkpoint_locked(struct px_audit *a)
{
	char when[32], line[512];
	size_t len;

	if (a->key == NULL || a->since_checkpoint == 0)
		return;
	iso_now(when);
	len = ac_checkpoint(&a->chain, when, a->key, a->keyid, line, sizeof(line));
	if (len == 0) {
		log_warnx("audit log: cannot sign a checkpoint");
		return;
	}
	write_raw(a, line, len, 1);
	a->since_checkpoint = 0;
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

EVP_PKEY *
px_audit_key_load(const char *path, int create, char *err, size_t errsz)
{
	EVP_PKEY *key = NULL;
	struct stat st;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 && errno == ENOENT && create) {
		EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);

		if (kc == NULL || EVP_PKEY_keygen_init(kc) != 1 || EVP_PKEY_keygen(kc, &key) != 1) {
			EVP_PKEY_CTX_free(kc);
			snprintf(err, errsz, "%s: cannot make an Ed25519 key", path);
			return NULL;
		}
		EVP_PKEY_CTX_free(kc);
		/* Made 0600 and never replaced: O_EXCL. */
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			EVP_PKEY_free(key);
			return NULL;
		}
		if (PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) != 1 || fflush(f) != 0 ||
		    fsync(fileno(f)) != 0) {
			snprintf(err, errsz, "%s: cannot write the new key", path);
			fclose(f);
			unlink(path);
			EVP_PKEY_free(key);
			return NULL;
		}
		fclose(f);
		log_info("audit_signing_key %s: made a new Ed25519 key", path);
		return key;
	}
	if (fd < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsz, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	if (st.st_mode & 077) {
		snprintf(err, errsz, "%s: mode %03o: the signing key must be readable by its owner only "
		    "(chmod 600)", path, (unsigned)(st.st_mode & 0777));
		close(fd);
		return NULL;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (key == NULL || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		snprintf(err, errsz, "%s: not an Ed25519 private key in PEM", path);
		EVP_PKEY_free(key);
		return NULL;
	}
	return key;
}

int
px_audit_start(struct px_audit *a, EVP_PKEY *key, int format)
{
	PX_LOCKED(&audit_lock);

	a->format = format;
	if (key != NULL) {
		if (ac_keyid(key, a->keyid) != 0 || EVP_PKEY_up_ref(key) != 1)
			return -EINVAL;
		a->key = key;
	}
	chain_open(a);
	return 0;
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	px_audit_checkpoint(arg);
}

int
px_audit_checkpoints(struct px_audit *a, struct event_base *base, unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	if (a->key == NULL || ms == 0)
		return 0;
	a->tick = event_new(base, -1, EV_PERSIST, tick_cb, a);
	if (a->tick == NULL || event_add(a->tick, &tv) != 0)
		return -ENOMEM;
	return 0;
}

void
px_audit_checkpoint(struct px_audit *a)
{
	PX_LOCKED(&audit_lock);
	checkpoint_locked(a);
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
	/* The file left behind ends signed; the new one names its last line. */
	checkpoint_locked(a);
	close(a->fd);
	a->fd = fd;
	a->warned = 0;
	chain_open(a);
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
	if (batch != NULL && batch->a == a)
		px_audit_batch_end();
	if (a->tick != NULL)
		event_free(a->tick);
	px_audit_checkpoint(a);

	if (a->path != NULL && a->fd >= 0)
		close(a->fd);
	EVP_PKEY_free(a->key);
	free(a->out);
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

/* A string field's value is cut at this many bytes (audit.h). */
#define FIELD_MAX 256

/*
 * The common field: KEY then VAL whose bytes all go as they are, with room
 * for it all and the 3 bytes put() keeps for the line's end.  VAL is
 * copied in the pass that checks it, straight after where KEY goes; LEN is
 * its length, or SIZE_MAX for a NUL-terminated VAL.  Returns 1 when the
 * field is in, 0 (J unchanged) when the general way must build it: a byte
 * to escape, more than 256 bytes, or not enough room.
 */
static int
kstr_plain(struct px_json *j, const char *key, size_t klen, const char *val, size_t len)
{
	size_t room, max, n;
	char *o;

	if (j->overflow || j->len + klen + 2 + 3 > sizeof(j->buf))
		return 0;
	room = sizeof(j->buf) - 3 - j->len - klen - 2;
	max = len < FIELD_MAX ? len : FIELD_MAX;
	if (max > room)
		max = room;
	o = j->buf + j->len + klen + 1;
	n = bs_json_plain_copy(o, val, max);
	if (len == SIZE_MAX ? val[n] != '\0' : n != len)
		return 0;
	memcpy(j->buf + j->len, key, klen);
	j->buf[j->len + klen] = '"';
	o[n] = '"';
	j->len += klen + n + 2;
	return 1;
}

/* Any field, as kstr_plain() cannot: VAL escaped, cut, or null. */
static void
kstr_general(struct px_json *j, const char *key, size_t klen, const char *val, size_t len)
{
	size_t room, need;
	int cut = 0;

	if (val == NULL) {
		put(j, key, klen); /* the whole ,"KEY": (audit.h) */
		put(j, "null", 4);
		return;
	}
	if (len > FIELD_MAX) {
		len = FIELD_MAX;
		cut = 1;
	}
	put(j, key, klen);
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
px_json_kstrn(struct px_json *j, const char *key, size_t klen, const char *val, size_t len)
{
	if (val == NULL || !kstr_plain(j, key, klen, val, len))
		kstr_general(j, key, klen, val, len);
}

void
px_json_kstr(struct px_json *j, const char *key, size_t klen, const char *val)
{
	/* The general path gets the length the plain scan could not. */
	if (val == NULL || !kstr_plain(j, key, klen, val, SIZE_MAX))
		kstr_general(j, key, klen, val, val ? strlen(val) : 0);
}

void
px_json_knum(struct px_json *j, const char *key, size_t klen, int64_t val)
{
	char n[24];
	size_t i = sizeof(n);
	/* By hand, from the last digit: snprintf() cost some 700
	 * instructions a number, five or more a line. */
	uint64_t u = val < 0 ? (uint64_t)0 - (uint64_t)val : (uint64_t)val;

	put(j, key, klen);
	do {
		n[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (val < 0)
		n[--i] = '-';
	put(j, n + i, sizeof(n) - i);
}

void
px_json_kdouble(struct px_json *j, const char *key, size_t klen, double val)
{
	char n[32];

	put(j, key, klen);
	snprintf(n, sizeof(n), "%.3f", val);
	put(j, n, strlen(n));
}

/* Under audit_lock: the lines in P (N bytes, whole lines) chained onto
 * A->out at *AT.  Returns 0, or -1 for a line that would not chain. */
static int
chain_lines(struct px_audit *a, const char *p, size_t n, size_t *at)
{
	const char *end = p + n, *nl;
	size_t w;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			return -1;
		w = ac_chain_line(&a->chain, p, (size_t)(nl + 1 - p), a->out + *at, a->outcap - *at);
		if (w == 0)
			return -1;
		*at += w;
		a->since_checkpoint++;
		p = nl + 1;
	}
	return 0;
}

/* Under audit_lock: one write(2) of P1 and P2 (NULL: none), holding
 * LINES lines, chained, all counted lost when it falls short. */
static void
write_lines(struct px_audit *a, const char *p1, size_t n1, const char *p2, size_t n2,
    unsigned lines)
{
	size_t need = n1 + n2 + (size_t)lines * AC_TRAILER_MAX, at = 0;
	struct ac_chain save = a->chain;
	uint64_t since = a->since_checkpoint;

	if (need > a->outcap) {
		char *o = realloc(a->out, need);

		if (o == NULL) {
			a->lost += lines;
			return;
		}
		a->out = o;
		a->outcap = need;
	}
	if (chain_lines(a, p1, n1, &at) != 0 || (p2 != NULL && chain_lines(a, p2, n2, &at) != 0)) {
		/* Never a line the chain does not hold (it cannot happen:
		 * every line ends in a brace). */
		a->chain = save;
		a->since_checkpoint = since;
		a->lost += lines;
		return;
	}
	write_raw(a, a->out, at, lines);
}

static void
batch_flush(struct batch *b)
{
	if (b->len > 0) {
		PX_LOCKED(&audit_lock);
		write_lines(b->a, b->buf, b->len, NULL, 0, b->lines);
	}
	b->len = 0;
	b->lines = 0;
}

static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct batch *b = arg;

	(void)fd;
	(void)what;
	b->armed = 0;
	batch_flush(b);
}

/* An OCSF record is built here, per thread: the px_json stays as it is. */
static _Thread_local char ocsf_buf[2 * sizeof(((struct px_json *)0)->buf) + 1024];

/* Close the line in J and point *P, *N at what is to be written (J's
 * bytes, or its OCSF record); 0 when it is to be written nowhere. */
static int
finish_line(struct px_json *j, const struct px_audit *a, const char **p, size_t *n)
{
	if (j->overflow) {
		/* Never emit half an object: say so instead. */
		j->len = 0;
		j->overflow = 0;
		put(j, "{\"event\":\"audit_overflow\"", 25);
	}
	j->buf[j->len++] = '}';
	j->buf[j->len++] = '\n';
	*p = j->buf;
	*n = j->len;
	if (a != NULL && a->format == PX_AUDIT_OCSF) {
		size_t k = px_ocsf_line(j->buf, j->len, ocsf_buf, sizeof(ocsf_buf), PACKAGE_VERSION);

		/* Not one of the lines it maps (an overflow's): as it is. */
		if (k > 0) {
			*p = ocsf_buf;
			*n = k;
		}
	}
	return a != NULL;
}

/* P (N bytes) to A now, after the calling thread's waiting lines, in
 * the same write(2). */
static void
emit_now(struct px_audit *a, const char *p, size_t n)
{
	PX_LOCKED(&audit_lock);
	if (batch != NULL && batch->a == a && batch->len > 0) {
		/* The waiting lines first, in the same write. */
		write_lines(a, batch->buf, batch->len, p, n, batch->lines + 1);
		batch->len = 0;
		batch->lines = 0;
		return;
	}
	write_lines(a, p, n, NULL, 0, 1);
}

void
px_json_emit(struct px_json *j, struct px_audit *a)
{
	const char *p;
	size_t n;

	if (finish_line(j, a, &p, &n))
		emit_now(a, p, n);
}

void
px_json_emit_later(struct px_json *j, struct px_audit *a, struct event_base *base)
{
	struct batch *b = batch;
	const char *p;
	size_t n;

	if (!finish_line(j, a, &p, &n))
		return;
	if (b == NULL && base != NULL && (b = calloc(1, sizeof(*b))) != NULL) {
		b->base = base;
		b->flush = event_new(base, -1, 0, flush_cb, b);
		if (b->flush == NULL) {
			free(b);
			b = NULL;
		} else {
			/* Fails only on a loop without priorities (tests). */
			(void)event_priority_set(b->flush, PX_PRI_BULK);
			batch = b;
		}
	}
	if (b == NULL || b->base != base) {
		emit_now(a, p, n);
		return;
	}
	if (b->a != a || b->len + n > sizeof(b->buf))
		batch_flush(b);
	b->a = a;
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->lines++;
	if (!b->armed) {
		b->armed = 1;
		event_active(b->flush, EV_TIMEOUT, 1);
	}
}

void
px_audit_batch_end(void)
{
	struct batch *b = batch;

	if (b == NULL)
		return;
	batch = NULL;
	batch_flush(b);
	event_free(b->flush);
	free(b);
}
